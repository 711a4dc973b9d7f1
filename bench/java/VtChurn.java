import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Starts and ends COUNT short virtual threads (default 1,000,000), at most
 * BATCH (default 10,000) alive at once; each adds to a counter.  The
 * factory comes through reflection (Thread.ofVirtual, JDK 21) so that this
 * compiles with JDK 17's javac; without virtual threads it says so and
 * exits 2.
 * Usage: VtChurn [COUNT [BATCH]]
 */
public class VtChurn {
    static final AtomicLong done = new AtomicLong();

    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int batch = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        ThreadFactory factory;
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            factory = (ThreadFactory) Class.forName("java.lang.Thread$Builder").getMethod("factory").invoke(builder);
        } catch (NoSuchMethodException e) {
            System.out.println("VtChurn: no virtual threads in this JDK");
            System.exit(2);
            return;
        }
        Runnable task = done::incrementAndGet;
        Thread[] alive = new Thread[batch];
        long t0 = System.nanoTime();
        for (int started = 0; started < count;) {
            int n = Math.min(batch, count - started);
            for (int i = 0; i < n; i++) {
                alive[i] = factory.newThread(task);
                alive[i].start();
            }
            for (int i = 0; i < n; i++)
                alive[i].join();
            started += n;
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("VtChurn: " + done.get() + " virtual threads in " + ms + " ms");
    }
}
