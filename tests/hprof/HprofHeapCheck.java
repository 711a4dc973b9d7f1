import java.io.File;
import java.util.List;

import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;
import org.graalvm.visualvm.lib.jfluid.heap.JavaClass;

/**
 * Opens a binary HPROF file with the heap library of Debian's visualvm
 * package (an independent reader) and prints what it found:
 *   CLASSES <n>
 *   COUNT <class> <instances>       every class with at least one instance
 *   BIG <n> idsum=<sum> bad=<n>     H_Big instances, the sum of their 'id'
 *                                   fields and how many have a/b/c/d fields
 *                                   other than H_Sites set (id*3, -id, 2^40, id)
 * An exception while loading or reading is printed as "ERROR ..." (exit 2).
 * Compiled and run by the test scripts with the jar on the class path.
 * Usage: HprofHeapCheck FILE
 */
public class HprofHeapCheck {
    private static long asLong(Object v) {
        if (v instanceof Number)
            return ((Number) v).longValue();
        throw new IllegalStateException("not a number: " + v + (v == null ? "" : " (" + v.getClass().getName() + ")"));
    }

    public static void main(String[] args) {
        try {
            Heap heap = HeapFactory.createHeap(new File(args[0]));
            List<JavaClass> classes = heap.getAllClasses();
            System.out.println("CLASSES " + classes.size());
            for (JavaClass c : classes) {
                int n = c.getInstancesCount();
                if (n > 0)
                    System.out.println("COUNT " + c.getName() + " " + n);
            }
            JavaClass big = heap.getJavaClassByName("H_Big");
            if (big != null) {
                long sum = 0;
                int bad = 0, n = 0;
                for (Instance i : big.getInstances()) {
                    long id = asLong(i.getValueOfField("id"));
                    sum += id;
                    n++;
                    if (asLong(i.getValueOfField("a")) != id * 3 || asLong(i.getValueOfField("b")) != -id
                            || asLong(i.getValueOfField("c")) != 1L << 40 || asLong(i.getValueOfField("d")) != id)
                        bad++;
                }
                System.out.println("BIG " + n + " idsum=" + sum + " bad=" + bad);
            }
        } catch (Throwable t) {
            System.out.println("ERROR " + t);
            t.printStackTrace(System.out);
            System.exit(2);
        }
    }
}
