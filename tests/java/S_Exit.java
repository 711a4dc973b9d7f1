/**
 * Exits with code 3 from a worker, after the given number of milliseconds,
 * while other workers allocate: the program of the signals-at-exit test.
 */
public class S_Exit {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        long delay = Long.parseLong(args[0]);
        for (int i = 0; i < 4; i++) {
            Thread t = new Thread(() -> {
                Object[] keep = new Object[512];
                for (int n = 0;; n++) {
                    keep[n & 511] = new byte[64 + (n & 255)];
                    sink = keep;
                }
            }, "allocator-" + i);
            t.setDaemon(true);
            t.start();
        }
        Thread exiter = new Thread(() -> {
            try {
                Thread.sleep(delay);
            } catch (InterruptedException e) {
                // exit all the same
            }
            System.exit(3);
        }, "exiter");
        exiter.start();
        System.out.println("S_Exit started");
        exiter.join();
    }
}
