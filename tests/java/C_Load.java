/**
 * For the c_load agent (no deadlock, nothing lost under load): 8 threads each allocate PER
 * markers in batches of 1000 that they drop again, under GC pressure (run
 * with a small heap); then check(total) compares the agent's count.
 * Run with -Dagent.lib=<path of libc_load.so>.
 */
public class C_Load {
    static native void check(long programMarkers);

    static final int THREADS = 8, PER = 200000, BATCH = 1000;
    static final Object[] sinks = new Object[THREADS]; // batches escape: no allocation optimised away

    public static void main(String[] args) throws Exception {
        System.load(System.getProperty("agent.lib"));
        long[] made = new long[THREADS];
        Thread[] ts = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int me = t;
            ts[t] = new Thread(() -> {
                long n = 0;
                for (int b = 0; b < PER / BATCH; b++) {
                    C_Marker[] batch = new C_Marker[BATCH];
                    for (int i = 0; i < BATCH; i++) {
                        batch[i] = new C_Marker(i);
                        n++;
                    }
                    sinks[me] = batch;
                }
                sinks[me] = null;
                made[me] = n;
            }, "c-load-" + t);
        }
        for (Thread t : ts)
            t.start();
        for (Thread t : ts)
            t.join();
        long total = 0;
        for (long n : made)
            total += n;
        System.out.println("C_Load allocated " + total + " markers");
        check(total);
        System.out.println("C_Load done");
    }
}
