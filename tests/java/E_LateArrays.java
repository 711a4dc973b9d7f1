import java.lang.ref.WeakReference;
import java.lang.reflect.Array;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path; import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * Workload of the e_* agents (tests/agents/e_*.c): what a program does after
 * start-up that the start-up replay cannot have covered.
 *  - array classes first made now: E_LaFoo[], E_LaFoo[][], E_LaBar[][][],
 *    int[][][], arrays through java.lang.reflect.Array of classes loaded now,
 *    and of a class of a throw-away loader (E_Payload); some are kept in
 *    statics, so heap dumps taken later contain them;
 *  - methods called on Class objects (int.class, String.class, array
 *    classes), and a monitor on a Class object;
 *  - WORKERS threads allocating for WORK_MS, with a contended monitor and a
 *    wait/notify ping-pong between two more threads, and System.gc() every
 *    WORK_MS/20 meanwhile;
 *  - the throw-away loader becomes unreachable and its classes unload
 *    (System.gc() until its WeakReference clears); System.gc() a few times.
 * Usage: E_LateArrays [GO_FILE]: with GO_FILE, prints "E_LateArrays ready"
 * at the end and waits (up to 60 s) until GO_FILE exists, so that a test
 * can send SIGQUIT at a known point.  Prints "E_LateArrays done" last.
 */
public class E_LateArrays {
    static final int WORKERS = 4;
    static final long WORK_MS = 2000;

    static Object keepFoo2, keepBar3, keepReflect, keepInts;
    static volatile Object sink;
    static final Object contended = new Object();
    static long shared;

    static WeakReference<ClassLoader> useThrowAwayLoader() throws Exception {
        URL where = E_LateArrays.class.getProtectionDomain().getCodeSource().getLocation();
        URLClassLoader loader = new URLClassLoader(new URL[] {where}, null);
        Class<?> c = loader.loadClass("E_Payload");
        if (c.getClassLoader() != loader)
            throw new IllegalStateException("E_Payload came from " + c.getClassLoader());
        Runnable r = (Runnable) c.getDeclaredConstructor().newInstance();
        r.run();
        Object one = Array.newInstance(c, 3);
        Object two = Array.newInstance(c, 2, 2);
        Array.set(one, 1, r);
        Array.set(Array.get(two, 0), 1, r);
        sink = two;
        sink = new StringBuilder().append(one.getClass().getName()).append(c.getName().hashCode()).append(c.hashCode())
                .append(r).toString();
        synchronized (c) {
            sink = c.getComponentType();
        }
        sink = null;
        loader.close();
        return new WeakReference<>(loader);
    }

    static void lateArrays() throws Exception {
        E_LaFoo[] f1 = new E_LaFoo[3];
        f1[0] = new E_LaFoo(1);
        E_LaFoo[][] f2 = new E_LaFoo[2][2];
        f2[1][0] = f1[0];
        keepFoo2 = f2;
        E_LaBar[][][] b3 = new E_LaBar[2][1][3];
        b3[1][0][2] = new E_LaBar();
        keepBar3 = b3;
        keepInts = new int[2][3][4];
        Class<?> baz = Class.forName("E_LaBaz");
        Object r1 = Array.newInstance(baz, 5);
        Array.set(r1, 0, baz.getDeclaredConstructor().newInstance());
        Object r2 = Array.newInstance(Class.forName("E_LaQux"), 2, 3);
        Object r3 = Array.newInstance(long[].class, 4);
        Object r4 = Array.newInstance(r2.getClass(), 1);
        keepReflect = new Object[] {r1, r2, r3, r4};
        sink = new StringBuilder().append(int.class.getName()).append(String.class.hashCode())
                .append(E_LaFoo[].class.getName()).append(f2.getClass().getComponentType())
                .append(r4.getClass().getName()).append(long[][].class.getSimpleName()).append(void.class.isPrimitive())
                .toString();
        synchronized (E_LaFoo[].class) {
            sink = E_LaFoo[][].class.getComponentType().getComponentType();
        }
    }

    // Few calls a round (method events cost per call), many objects.
    static void allocate(int id) {
        long end = System.nanoTime() + WORK_MS * 1_000_000L;
        Object[] keep = new Object[1024];
        int i = 0;
        while (i < 200 || System.nanoTime() < end) {
            E_LaFoo[] row = new E_LaFoo[1 + (i & 3)];
            row[0] = new E_LaFoo(i);
            keep[i & 1023] = row;
            if ((i & 7) == 0)
                keep[(i + 512) & 1023] = new int[i & 31][2];
            if ((i & 15) == 0)
                keep[(i + 256) & 1023] = new char[64];
            if (i % 200 == 0) {
                synchronized (contended) {
                    shared += id;
                    if (i % 20000 == 0)
                        sleepQuietly(2);
                }
            }
            i++;
        }
        sink = keep;
    }

    static void pingPong(Object box, boolean first, int rounds) {
        synchronized (box) {
            for (int i = 0; i < rounds; i++) {
                box.notifyAll();
                try {
                    box.wait(first ? 50 : 100);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }
            box.notifyAll();
        }
    }

    // No lambdas and no string concatenation in this program: both bootstrap
    // through java.lang.invoke, thousands of calls that method events make
    // slow.
    static final class Worker implements Runnable {
        final int id;

        Worker(int id) {
            this.id = id;
        }

        @Override
        public void run() {
            allocate(id);
        }
    }

    static final class PingPong implements Runnable {
        final Object box;
        final boolean first;

        PingPong(Object box, boolean first) {
            this.box = box;
            this.first = first;
        }

        @Override
        public void run() {
            pingPong(box, first, 20);
        }
    }

    static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        lateArrays();
        WeakReference<ClassLoader> loader = useThrowAwayLoader();

        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < WORKERS; t++)
            threads.add(new Thread(new Worker(t), "e-alloc-".concat(Integer.toString(t))));
        Object box = new Object();
        threads.add(new Thread(new PingPong(box, true), "e-ping"));
        threads.add(new Thread(new PingPong(box, false), "e-pong"));
        for (Thread t : threads)
            t.start();
        // Collections while the workers allocate: each GC window then has
        // allocations all around it.
        for (int g = 0; g < 18; g++) {
            sleepQuietly(WORK_MS / 20);
            System.gc();
        }
        for (Thread t : threads)
            t.join();

        int gcs = 0;
        while (loader.get() != null && gcs < 40) {
            System.gc();
            gcs++;
            sleepQuietly(50);
        }
        // Unloads are reported after the collection: give them time to come.
        sleepQuietly(300);
        System.gc();
        System.out.println(new StringBuilder("E_LateArrays unloaded=").append(loader.get() == null).append(" after ")
                .append(gcs).append(" GCs, shared=").append(shared));

        if (args.length > 0) {
            Path go = Paths.get(args[0]);
            System.out.println("E_LateArrays ready");
            System.out.flush();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (!Files.exists(go) && System.nanoTime() < deadline)
                sleepQuietly(50);
        }
        System.out.println(new StringBuilder("E_LateArrays done ").append(keepFoo2 != null).append(keepBar3 != null)
                .append(keepReflect != null).append(keepInts != null));
    }
}

class E_LaFoo {
    final int n;

    E_LaFoo(int n) {
        this.n = n;
    }
}

class E_LaBar {
    E_LaFoo[] foos = new E_LaFoo[1];
}

class E_LaBaz {
    long when = System.nanoTime();
}

class E_LaQux {
    Object self = this;
}
