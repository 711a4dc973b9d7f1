/**
 * For the c_jniref agent (JNI references): has the agent's native make and
 * delete global and weak global references to known objects, on main and on
 * the thread "c-jniref-worker".
 * Run with -Dagent.lib=<path of libc_jniref.so>.
 */
public class C_JniRef {
    static native void refs(Object o, String label);

    public static void main(String[] args) throws Exception {
        System.load(System.getProperty("agent.lib"));
        C_Marker m = new C_Marker(1);
        int[] a = new int[4711];
        refs(m, "main marker 1");
        refs(m, "main marker 2");
        refs(a, "main int[]");
        Thread w = new Thread(() -> {
            refs(new C_Marker(2), "worker marker");
            refs(m, "worker main's marker");
        }, "c-jniref-worker");
        w.start();
        w.join();
        refs("a string", "main string");
        System.out.println("C_JniRef done " + m.v + " " + a.length);
    }
}
