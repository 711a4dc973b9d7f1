/**
 * For the c_gcswitch agent: the heap events switched on and off in the live
 * VM must show no GC_START/GC_FINISH; then a RunGC must show one.  The
 * program allocates nothing meanwhile, so no collection of its own comes.
 * Run with -Dagent.lib=<path of libc_gcswitch.so>.
 */
public class C_GcSwitch {
    static native void switchEvents();
    static native void runGC();

    public static void main(String[] args) {
        System.load(System.getProperty("agent.lib"));
        switchEvents();
        runGC();
        System.out.println("C_GcSwitch done");
    }
}
