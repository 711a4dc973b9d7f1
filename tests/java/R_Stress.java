import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The load and fault cases of the reliability suite
 * (tests/integration/it_r_stress.sh), one per run, each sized by N:
 *   contend N      N threads contend on 4 monitors (enter, wait, notify)
 *   churn N        N threads in all, 200 alive at a time, contend on 20
 *                  monitors (enter, wait, notify) and end while others
 *                  block on monitors they held
 *   short N        N short-lived threads, 16 alive at a time
 *   throw N        N exceptions thrown and caught, on 2 threads
 *   unload N       N classes, each from a throw-away loader, unloaded by GCs
 *   oom N          the heap filled until OutOfMemoryError, caught, N times
 *   vthreads N     N virtual threads (JDK 21+; prints "no virtual threads"
 *                  and ends on older JDKs)
 * Prints "R_Stress CASE done: ..." and ends with exit code EXIT (default 0)
 * through System.exit, so that a layer that loses the code at exit shows it.
 * Usage: R_Stress CASE N [EXIT].
 */
public class R_Stress {
    static volatile Object sink;
    static final AtomicLong work = new AtomicLong();

    /** Loaded only through R_Stress's throw-away loaders (the unload case). */
    public static class Victim {
        static int made;
        int value = 3;

        @Override
        public String toString() {
            return "Victim " + (value + made++);
        }
    }

    public static void main(String[] args) throws Exception {
        String what = args[0];
        int n = Integer.parseInt(args[1]);
        int exit = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        String result;
        switch (what) {
            case "contend": result = contend(n); break;
            case "churn": result = churn(n); break;
            case "short": result = shortThreads(n); break;
            case "throw": result = throwMany(n); break;
            case "unload": result = unload(n); break;
            case "oom": result = oom(n); break;
            case "vthreads": result = vthreads(n); break;
            default: throw new IllegalArgumentException("unknown case " + what);
        }
        System.out.println("R_Stress " + what + " done: " + result);
        System.out.flush();
        System.exit(exit);
    }

    /** One thread's share: rounds entries, each of the next lock in turn,
     * with a notifyAll and a short wait every 16th. */
    static void enterAndWait(Object[] locks, long[] counts, int me, int rounds) throws InterruptedException {
        for (int k = 0; k < rounds; k++) {
            int l = (me + k) % locks.length;
            synchronized (locks[l]) {
                counts[l]++;
                sink = new byte[32];
                if ((k & 15) == 15) {
                    locks[l].notifyAll();
                    locks[l].wait(1);
                }
            }
        }
    }

    static String contend(int n) throws InterruptedException {
        Object[] locks = { new Object(), new Object(), new Object(), new Object() };
        long[] counts = new long[locks.length];
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int me = i;
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    enterAndWait(locks, counts, me, 60);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, "contender-" + i);
            t.start();
            ts.add(t);
        }
        go.countDown();
        for (Thread t : ts)
            t.join();
        return entries(counts, 60L * n) + " monitor entries";
    }

    /** The monitor entries counted, which must be all those made. */
    static long entries(long[] counts, long made) {
        long sum = 0;
        for (long c : counts)
            sum += c;
        if (sum != made)
            throw new IllegalStateException("lost monitor entries: " + sum);
        return sum;
    }

    /** Owners that end: the layer asks who owns a monitor when a thread
     * blocks on it, and on JDK 8 that owner may end and be freed meanwhile. */
    static String churn(int n) throws InterruptedException {
        Object[] locks = new Object[20];
        for (int i = 0; i < locks.length; i++)
            locks[i] = new Object();
        long[] counts = new long[locks.length];
        Thread[] live = new Thread[200];
        for (int i = 0; i < n; i++) {
            int slot = i % live.length;
            if (live[slot] != null)
                live[slot].join();
            int me = i;
            live[slot] = new Thread(() -> {
                try {
                    enterAndWait(locks, counts, me, 50);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, "churner-" + i);
            live[slot].start();
        }
        for (Thread t : live)
            if (t != null)
                t.join();
        return entries(counts, 50L * n) + " monitor entries by " + n + " threads";
    }

    static String shortThreads(int n) throws InterruptedException {
        Thread[] live = new Thread[16];
        for (int i = 0; i < n; i++) {
            int slot = i % live.length;
            if (live[slot] != null)
                live[slot].join();
            live[slot] = new Thread(() -> {
                sink = new int[16];
                work.incrementAndGet();
            }, "short-" + i);
            live[slot].start();
        }
        for (Thread t : live)
            if (t != null)
                t.join();
        if (work.get() != n)
            throw new IllegalStateException("threads lost: " + work.get());
        return n + " threads";
    }

    static void thrower(int depth, int i) {
        if (depth > 0)
            thrower(depth - 1, i);
        else
            throw new IllegalArgumentException("x" + (i & 7));
    }

    static String throwMany(int n) throws InterruptedException {
        Thread[] ts = new Thread[2];
        for (int j = 0; j < ts.length; j++) {
            ts[j] = new Thread(() -> {
                for (int i = 0; i < n / 2; i++) {
                    try {
                        thrower(i & 3, i);
                    } catch (IllegalArgumentException e) {
                        work.incrementAndGet();
                    }
                }
            }, "thrower-" + j);
            ts[j].start();
        }
        for (Thread t : ts)
            t.join();
        return work.get() + " exceptions caught";
    }

    static final class OneShot extends ClassLoader {
        private final byte[] bytes;

        OneShot(byte[] bytes) {
            super(null);
            this.bytes = bytes;
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            if (!name.equals("R_Stress$Victim"))
                throw new ClassNotFoundException(name);
            return defineClass(name, bytes, 0, bytes.length);
        }
    }

    static String unload(int n) throws Exception {
        byte[] bytes;
        try (InputStream in = R_Stress.class.getResourceAsStream("R_Stress$Victim.class")) {
            java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
            byte[] chunk = new byte[8192];
            for (int got; (got = in.read(chunk)) > 0; )
                buf.write(chunk, 0, got);
            bytes = buf.toByteArray();
        }
        for (int i = 0; i < n; i++) {
            Class<?> c = new OneShot(bytes).loadClass("R_Stress$Victim");
            if (c.getClassLoader() == R_Stress.class.getClassLoader())
                throw new IllegalStateException("Victim came from the application loader");
            sink = c.getDeclaredConstructor().newInstance().toString();
            if (i % 250 == 249)
                System.gc();
        }
        sink = null;
        System.gc();
        return n + " classes from throw-away loaders";
    }

    static String oom(int n) {
        int caught = 0;
        for (int round = 0; round < n; round++) {
            List<long[]> hog = new ArrayList<>();
            try {
                while (true)
                    hog.add(new long[64 * 1024]);
            } catch (OutOfMemoryError e) {
                int had = hog.size();
                hog = null;
                caught++;
                sink = "OutOfMemoryError after " + had + " blocks";
            }
            // Survived: the heap works again.
            List<Object> after = new ArrayList<>();
            for (int i = 0; i < 1000; i++)
                after.add(new byte[1024]);
            sink = after;
        }
        return caught + " OutOfMemoryErrors caught, " + sink.getClass().getSimpleName() + " after";
    }

    static String vthreads(int n) throws Exception {
        Method ofVirtual;
        try {
            ofVirtual = Thread.class.getMethod("ofVirtual");
        } catch (NoSuchMethodException e) {
            return "no virtual threads";
        }
        Object builder = ofVirtual.invoke(null);
        // The public interface's method: the builder's class is not exported.
        Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        Thread[] batch = new Thread[1000];
        for (int i = 0; i < n; i += batch.length) {
            int m = Math.min(batch.length, n - i);
            for (int j = 0; j < m; j++) {
                batch[j] = (Thread) start.invoke(builder, (Runnable) () -> {
                    sink = new int[8];
                    Thread.yield();
                    work.incrementAndGet();
                });
            }
            for (int j = 0; j < m; j++)
                batch[j].join();
        }
        if (work.get() != n)
            throw new IllegalStateException("virtual threads lost: " + work.get());
        return n + " virtual threads";
    }
}
