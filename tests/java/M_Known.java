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
//  - a class, M_Known$Gone, is loaded and initialised through a class
//    loader of its own, which is then dropped (the class can be unloaded);
//  - args[1] threads (WORKERS if not given) named m-worker-<i> are started
//    and joined, and System.gc() runs GCS times (which unloads Gone);
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

    /** Loaded only by a throw-away class loader, never by the application's. */
    static final class Gone {
        static int x = 1;
    }

    /** Loads and initialises Gone through a loader of its own, and drops both. */
    static void loadAndDrop() throws Exception {
        java.net.URL here = M_Known.class.getProtectionDomain().getCodeSource().getLocation();
        try (java.net.URLClassLoader loader = new java.net.URLClassLoader(new java.net.URL[] {here}, null)) {
            Class<?> c = Class.forName("M_Known$Gone", true, loader);
            if (c.getClassLoader() != loader) {
                throw new IllegalStateException("Gone was not loaded by the throw-away loader");
            }
        }
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
        int workers = args.length > 1 ? Integer.parseInt(args[1]) : WORKERS;
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
        loadAndDrop();
        Thread[] started = new Thread[workers];
        for (int i = 0; i < workers; i++) {
            started[i] = new Thread(() -> sink += 1, "m-worker-" + i);
            started[i].start();
        }
        for (Thread t : started) {
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
        System.out.println("truth threads m-worker " + workers + ", System.gc " + GCS + " (sink " + (sink & 1) + ")");
        System.out.println("truth unloadable M_Known$Gone 1");
    }
}
