// A program whose allocations, survivors, hot method, threads and
// collections are known, for the comparison report (scripts/compare.sh).
// Its phases, one after the other:
//  - M_Known.makeBlob allocates BLOBS M_Known$Blob, of which KEPT stay
//    reachable to the end (every one escapes, so the JIT removes none);
//  - M_Known.fill allocates BUFFERS byte[BUFFER_BYTES], none kept, with a
//    millisecond's pause after each, so that a sampler limited to so many
//    samples a second (JFR's) can take every one;
//  - M_Known.pad allocates PADS M_Known$Pad, none kept: a sampler that
//    weighs each sample by the bytes allocated since the previous one gives
//    the last bytes of the phase before to the next sample, now a Pad;
//  - WORKERS threads named m-worker-<i> are started and joined, and
//    System.gc() runs GCS times;
//  - M_Known.spin keeps the CPU busy for args[0] ms (2000 if not given).
// It prints the truth it was built to produce, one "truth" line each.
public class M_Known {
    static final int BLOBS = 200_000, KEPT = 20_000, BUFFERS = 500, BUFFER_BYTES = 16_384;
    static final int PADS = 20_000, WORKERS = 3, GCS = 3;

    static final class Blob {
        long a, b;
        Blob next;
    }

    static final class Pad {
        int x;
    }

    static final Blob[] kept = new Blob[KEPT];
    static volatile Object last;
    static long sink;

    static Blob makeBlob(int i) {
        Blob b = new Blob();
        b.a = i;
        return b;
    }

    static byte[] fill(int i) {
        byte[] b = new byte[BUFFER_BYTES];
        b[i % BUFFER_BYTES] = (byte) i;
        return b;
    }

    static Pad pad(int i) {
        Pad p = new Pad();
        p.x = i;
        return p;
    }

    static long spin(long n) {
        long x = n;
        for (long i = 0; i < n; i++) {
            x = x * 31 + (i ^ (x >>> 7));
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        long spinMs = args.length > 0 ? Long.parseLong(args[0]) : 2000;
        for (int i = 0; i < BLOBS; i++) {
            Blob b = makeBlob(i);
            if (i < KEPT) {
                kept[i] = b;
            } else {
                last = b;
            }
        }
        for (int i = 0; i < BUFFERS; i++) {
            byte[] buf = fill(i);
            last = buf;
            sink += buf[i % BUFFER_BYTES];
            Thread.sleep(1);
        }
        for (int i = 0; i < PADS; i++) {
            last = pad(i);
        }
        Thread[] workers = new Thread[WORKERS];
        for (int i = 0; i < WORKERS; i++) {
            workers[i] = new Thread(() -> sink += 1, "m-worker-" + i);
            workers[i].start();
        }
        for (Thread t : workers) {
            t.join();
        }
        for (int i = 0; i < GCS; i++) {
            System.gc();
        }
        long end = System.nanoTime() + spinMs * 1_000_000L;
        while (System.nanoTime() < end) {
            sink += spin(2_000_000);
        }
        last = null;
        System.out.println("truth allocated M_Known$Blob " + BLOBS + " by M_Known.makeBlob");
        System.out.println("truth live M_Known$Blob " + KEPT);
        System.out.println("truth allocated byte[" + BUFFER_BYTES + "] " + BUFFERS + " by M_Known.fill");
        System.out.println("truth hot M_Known.spin for " + spinMs + " ms");
        System.out.println("truth threads m-worker " + WORKERS + ", System.gc " + GCS + " (sink " + (sink & 1) + ")");
    }
}
