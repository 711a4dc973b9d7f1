import java.util.ArrayList;
import java.util.List;

/**
 * For the c_gc agent (GC control): with GC disabled (DisableGC twice,
 * EnableGC once) the program drops M markers and calls System.gc(): no GC
 * event and no OBJECT_FREE may arrive, RunGC delivers nothing; after the
 * second EnableGC and a RunGC exactly those M are freed.
 * Run with -Dagent.lib=<path of libc_gc.so>.
 */
public class C_GcCtl {
    static native void runGC();
    static native void check(String label, int allocated, int freed, int live, long totalMemory);
    static native void disableTwiceEnableOnce();
    static native void runGCDisabled();
    static native void enableGC();

    static final int M = 5000, LATE = 1000;
    static Object sink;

    public static void main(String[] args) throws Exception {
        System.load(System.getProperty("agent.lib"));
        C_Marker[] doomed = new C_Marker[M];
        for (int i = 0; i < M; i++)
            doomed[i] = new C_Marker(i);
        sink = doomed;
        doomed = null;
        check("before", M, 0, M, Runtime.getRuntime().totalMemory());

        disableTwiceEnableOnce();
        sink = null;
        System.gc();
        System.gc();
        // Markers made while GC is disabled must get fresh IDs (the agent
        // checks every ID against all it has seen).
        List<C_Marker> late = new ArrayList<>();
        for (int i = 0; i < LATE; i++)
            late.add(new C_Marker(i));
        Thread.sleep(500); // time for a layer thread that would deliver anyway
        runGCDisabled();
        Thread.sleep(200);
        check("while disabled", LATE, 0, M + LATE, Runtime.getRuntime().totalMemory());

        enableGC();
        runGC();
        check("after EnableGC and RunGC", 0, M, LATE, Runtime.getRuntime().totalMemory());

        late = null;
        runGC();
        check("late ones dropped", 0, LATE, 0, Runtime.getRuntime().totalMemory());
        System.out.println("C_GcCtl done");
    }
}
