/*
 * Contend - a contention-heavy workload for bench/monitors.sh: THREADS
 * threads take one lock ITERS times each, doing a little work inside and
 * outside; every 1000th round a thread also does a short timed wait.
 * Prints the time and a checksum so runs can be compared.
 */
public class Contend {
    static final Object lock = new Object();
    static long shared;

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        int iters = args.length > 1 ? Integer.parseInt(args[1]) : 200000;
        Thread[] ts = new Thread[threads];
        long t0 = System.nanoTime();
        for (int i = 0; i < threads; i++) {
            final int seed = i + 1;
            ts[i] = new Thread(() -> {
                long local = seed;
                for (int k = 0; k < iters; k++) {
                    for (int w = 0; w < 50; w++) {
                        local = local * 6364136223846793005L + 1442695040888963407L;
                    }
                    synchronized (lock) {
                        for (int w = 0; w < 20; w++) {
                            shared += local >>> 60;
                        }
                        if (k % 1000 == 999) {
                            try {
                                lock.wait(1);
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    }
                }
            });
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.printf("Contend: threads=%d iters=%d ms=%d checksum=%d%n", threads, iters,
                          (System.nanoTime() - t0) / 1000000, shared);
    }
}
