import java.lang.ref.WeakReference;

/**
 * For the c_replay agent (objects older than the agent): after the start-up replay the
 * program switches OBJECT_ALLOC off, makes objects and a thread the agent
 * never hears of, and has the agent resolve their IDs with
 * RequestEvent(OBJECT_ALLOC); then IDs no live object has must be refused.
 * Run with -Dagent.lib=<path of libc_replay.so>.
 */
public class C_Replay {
    static native void disableAlloc();
    static native void probe(String what, Object o, String className, int isArray, int size);
    static native void probeThreads(Thread late);
    static native void rememberDoomed(Object o);
    static native void probeBogus();

    public static void main(String[] args) throws Exception {
        System.load(System.getProperty("agent.lib"));
        disableAlloc();
        C_Marker m = new C_Marker(7);
        int[] ia = new int[4711];
        C_Marker[] ma = new C_Marker[5];
        C_Marker[][] mm = new C_Marker[2][3];
        Thread late = new Thread(() -> System.out.println("c-replay-late ran"), "c-replay-late");
        late.start();
        late.join();
        // sizes: 16-byte array header + elements, 8-aligned (64-bit HotSpot defaults)
        probe("C_Marker", m, "C_Marker", 0, 16);
        // compact object headers (-Dc.compact=1, lib.sh): elements after 12 bytes
        int base = "1".equals(System.getProperty("c.compact")) ? 12 : 16;
        probe("int[4711]", ia, null, 10, (base + 4711 * 4 + 7) & ~7);
        probe("C_Marker[5]", ma, "C_Marker", 2, 0);
        probe("C_Marker[2][3]", mm, "[LC_Marker;", 2, 0);
        probe("C_Marker[3] in C_Marker[2][3]", mm[1], "C_Marker", 2, 0);
        probeThreads(late);

        Object doomed = new C_Marker(9);
        rememberDoomed(doomed);
        WeakReference<Object> w = new WeakReference<>(doomed);
        doomed = null;
        for (int i = 0; i < 100 && w.get() != null; i++) {
            System.gc();
            Thread.sleep(10);
        }
        if (w.get() != null)
            throw new AssertionError("the doomed object was never collected");
        probeBogus();
        System.out.println("C_Replay done " + m.v + " " + ia.length + " " + ma.length + " " + mm.length);
    }
}
