/**
 * For it_m_cpushares: two threads spend their time in three hot methods in a
 * known proportion, 25, 30 and 45% (a loop of Math.sqrt, one of Math.log, one
 * of Math.sin), and time it themselves with System.nanoTime.  It prints each
 * method's share as measured, which a CPU profiler's samples must match:
 *   truth share M_CpuShares.sqrtLoop 25.1
 * Argument: how many seconds to run (default 6).
 */
public class M_CpuShares {
    static final int ROUND_MS = 100;
    static final int[] PERCENT = {25, 30, 45};
    static final String[] NAMES = {"sqrtLoop", "logLoop", "sinLoop"};
    static final long[] spent = new long[3];
    static volatile double sink;

    static double sqrtLoop(long until) {
        double x = 1;
        while (System.nanoTime() < until) {
            for (int i = 0; i < 256; i++) x += Math.sqrt(x + i);
        }
        return x;
    }

    static double logLoop(long until) {
        double x = 1;
        while (System.nanoTime() < until) {
            for (int i = 0; i < 256; i++) x += Math.log(x + i);
        }
        return x;
    }

    static double sinLoop(long until) {
        double x = 1;
        while (System.nanoTime() < until) {
            for (int i = 0; i < 256; i++) x += Math.sin(x + i);
        }
        return x;
    }

    static void work(long endAt) {
        long[] mine = new long[3];
        double acc = 0;
        while (System.nanoTime() < endAt) {
            for (int m = 0; m < 3; m++) {
                long start = System.nanoTime();
                long until = start + PERCENT[m] * ROUND_MS * 10_000L; // PERCENT of ROUND_MS, in ns
                switch (m) {
                    case 0: acc += sqrtLoop(until); break;
                    case 1: acc += logLoop(until); break;
                    default: acc += sinLoop(until); break;
                }
                mine[m] += System.nanoTime() - start;
            }
        }
        sink = acc;
        synchronized (spent) {
            for (int m = 0; m < 3; m++) spent[m] += mine[m];
        }
    }

    public static void main(String[] args) throws InterruptedException {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        long endAt = System.nanoTime() + seconds * 1_000_000_000L;
        Thread[] workers = new Thread[2];
        for (int t = 0; t < workers.length; t++) {
            workers[t] = new Thread(() -> work(endAt), "cpu-" + t);
            workers[t].start();
        }
        for (Thread w : workers) w.join();
        long total = spent[0] + spent[1] + spent[2];
        for (int m = 0; m < 3; m++)
            System.out.printf("truth share M_CpuShares.%s %.1f%n", NAMES[m], 100.0 * spent[m] / total);
    }
}
