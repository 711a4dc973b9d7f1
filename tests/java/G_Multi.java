/**
 * The program that several JVMPI agents watch at once (it_g_multi.sh): what
 * each agent must see is known.  It prints the string constant MARK, which
 * agents with hook= rewrite in this class's file as it loads (so the output
 * shows which rewrites reached the VM, in which order); allocates 500
 * G_Multi$Marker objects on main and 100 on each of three threads named
 * g-worker-0..2; drops them all and collects; then loads G_Multi$Late.
 */
public class G_Multi {
    static final String MARK = "HOOKMARK0";

    static final class Marker {
        int value;
        Marker(int v) { value = v; }
    }

    static final class Late {
        static int touch() { return 7; }
    }

    static volatile Object sink;

    static Object[] make(int n) {
        Object[] keep = new Object[n];
        for (int i = 0; i < n; i++) {
            keep[i] = new Marker(i);
        }
        return keep;
    }

    public static void main(String[] args) throws Exception {
        System.out.println("mark " + MARK);
        Object[] keep = make(500);
        Thread[] workers = new Thread[3];
        for (int t = 0; t < workers.length; t++) {
            workers[t] = new Thread(() -> sink = make(100), "g-worker-" + t);
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        sink = keep;
        keep = null;
        sink = null;
        System.gc();
        Thread.sleep(100);
        System.gc();
        System.out.println("late " + Late.touch());
    }
}
