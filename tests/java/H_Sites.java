import java.nio.file.Files;
import java.nio.file.Path; import java.nio.file.Paths;

/**
 * Known allocation behaviour for the hprof tests.  Keeps 1000 H_Big
 * instances live to the end (static field), allocates 50000 H_Small and drops
 * them, runs a named thread "h-worker" to its end, then System.gc().
 * The allocation lines are fixed: the tests name them (H_Sites.java:27 for
 * H_Big, :33 for H_Small); keep them where they are.
 * Usage: H_Sites [GOFILE]: with GOFILE, prints "ready pid=N" and waits (up to
 * 60 s) until GOFILE exists before exiting, so a test can send SIGQUIT while
 * everything is still live.
 */
public class H_Sites {
    static H_Big[] kept;
    static volatile Object sink;

    static void build(int n) {
        kept = new H_Big[n];
        keep(n);
    }

    // depth: keep <- build <- main, so depth=2 drops main.
    static void keep(int n) {
        for (int i = 0; i < n; i++) {
            // one allocation per line: the trace of H_Big names line 27
            kept[i] = new H_Big(i);
        }
    }

    static void churn(int n) {
        for (int i = 0; i < n; i++) {
            sink = new H_Small(i);
        }
        sink = null;
    }

    public static void main(String[] args) throws Exception {
        build(1000);
        Thread t = new Thread(() -> churn(50000), "h-worker");
        t.start();
        t.join();
        System.gc();
        Thread.sleep(200);
        if (args.length > 0) {
            Path go = Paths.get(args[0]);
            System.out.println("ready pid=" + Long.parseLong(new java.io.File("/proc/self").getCanonicalFile().getName()));
            System.out.flush();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (!Files.exists(go) && System.nanoTime() < deadline)
                Thread.sleep(50);
        }
        long sum = 0;
        for (H_Big b : kept)
            sum += b.id;
        System.out.println("H_Sites done kept=" + kept.length + " idsum=" + sum);
    }
}

/**
 * 48 bytes on a 64-bit HotSpot with compressed class pointers (the default on
 * JDK 17 and 25): a 12-byte header, the int in the 4-byte gap after it, then
 * four longs.
 */
class H_Big {
    final int id;
    final long a, b, c, d;

    H_Big(int id) {
        this.id = id;
        this.a = id * 3L;
        this.b = -id;
        this.c = 1L << 40;
        this.d = id;
    }
}

/** 16 bytes: header and one int. */
class H_Small {
    final int v;

    H_Small(int v) {
        this.v = v;
    }
}
