import java.lang.reflect.Method;

/**
 * CPU-bound virtual threads for cpu=samples: THREADS (default 2) virtual
 * threads named "fb-N" call F_VtBusy.spin for SECONDS seconds (default 2),
 * sleeping a millisecond after each call, so that they keep leaving their
 * carriers and coming back, maybe on another.  Each call is some
 * milliseconds of work, so that spin, not the unmounting and mounting,
 * takes most of the time even on a loaded machine, where those are slower.
 * spin's loop is on one line.  Started through reflection (Thread.ofVirtual,
 * JDK 21) so that this compiles with JDK 17's javac.
 * Usage: F_VtBusy [SECONDS [THREADS]]
 */
public class F_VtBusy {
    static volatile long sink;

    static long spin(int n) {
        long x = 0;
        for (int i = 0; i < n; i++) { x = x * 31 + (i ^ (x >>> 7)); }
        return x;
    }

    public static void main(String[] args) throws Exception {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2.0;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        long end = System.nanoTime() + (long) (secs * 1e9);
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Method named = Class.forName("java.lang.Thread$Builder$OfVirtual").getMethod("name", String.class);
        Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        Thread[] all = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            Object b = named.invoke(builder, "fb-" + t);
            all[t] = (Thread) start.invoke(b, (Runnable) () -> {
                while (System.nanoTime() < end) {
                    sink += spin(2_000_000);
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
        }
        for (Thread t : all)
            t.join();
        System.out.println("F_VtBusy done");
    }
}
