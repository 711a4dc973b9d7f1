import java.nio.file.Files;
import java.nio.file.Path; import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * A stable heap for comparing the hprof agent with jcmd GC.class_histogram:
 * 300 H_StA, 1000 H_StB, 150 H_StC and 200 long[16] held in a static list,
 * then "ready pid=N" and a wait (allocating nothing) until GOFILE exists
 * (at most 60 s).  Usage: H_Stable GOFILE
 */
public class H_Stable {
    static final List<Object> held = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 300; i++)
            held.add(new H_StA(i));
        for (int i = 0; i < 1000; i++)
            held.add(new H_StB());
        for (int i = 0; i < 150; i++)
            held.add(new H_StC(i));
        for (int i = 0; i < 200; i++)
            held.add(new long[16]);
        // garbage before the snapshots: both sides must see it gone
        for (int i = 0; i < 20000; i++)
            H_StB.sink = new H_StB();
        H_StB.sink = null;
        System.gc();
        Path go = Paths.get(args[0]);
        System.out.println("ready pid=" + Long.parseLong(new java.io.File("/proc/self").getCanonicalFile().getName()));
        System.out.flush();
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!Files.exists(go) && System.nanoTime() < deadline)
            Thread.sleep(50);
        System.out.println("H_Stable done held=" + held.size());
    }
}

class H_StA {
    final int n;
    H_StA(int n) { this.n = n; }
}

class H_StB {
    static Object sink;
    Object ref;
}

class H_StC {
    final long x;
    final String s;
    H_StC(int i) { x = i; s = "c" + i; }
}
