import java.util.ArrayList;
import java.util.List;

/**
 * For the c_gc agent (OBJECT_FREE and GC events): five rounds in one JVM, each makes
 * N markers it drops and K it keeps, then RunGC (through the agent); the
 * agent must have seen exactly N OBJECT_FREEs of markers by the time RunGC
 * returns, and none of the kept ones.
 * Run with -Dagent.lib=<path of libc_gc.so>.
 */
public class C_Gc {
    static native void runGC();
    static native void check(String label, int allocated, int freed, int live, long totalMemory);

    static final int N = 10000, K = 10, ROUNDS = 5;
    static final List<C_Marker> kept = new ArrayList<>();
    static Object sink; // makes the batch escape, so no allocation is optimised away

    public static void main(String[] args) {
        System.load(System.getProperty("agent.lib"));
        check("start", 0, 0, 0, Runtime.getRuntime().totalMemory());
        for (int r = 0; r < ROUNDS; r++) {
            C_Marker[] batch = new C_Marker[N];
            for (int i = 0; i < N; i++)
                batch[i] = new C_Marker(i);
            sink = batch;
            for (int k = 0; k < K; k++)
                kept.add(new C_Marker(-k));
            batch = null;
            sink = null;
            runGC();
            check("round " + r, N + K, N, K * (r + 1), Runtime.getRuntime().totalMemory());
        }
        System.out.println("C_Gc done, kept " + kept.size());
    }
}
