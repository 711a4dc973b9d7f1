/*
 * D_MonDump - builds a known monitor situation and asks the agent
 * d_mon_dump (tests/agents/d_mon_dump.c) for a MONITOR_DUMP in the middle
 * of it.  Run with -Dagent.lib=<libd_mon_dump.so>.
 *
 * Java monitor M: owned by main three times (re-entrantly), thread
 * "blocked" blocked entering it, thread "waiter" in M.wait().  main also
 * owns D_MonDump.class's monitor.
 * Raw monitor of the agent: owned by thread "rawOwner", thread "rawEnterer"
 * blocked in RawMonitorEnter, thread "rawWaiter" in RawMonitorWait.
 */
public class D_MonDump {
    static native void register(int role);
    static native void mark(Object m);
    static native void markClass(Class<?> c);
    static native void rawWaiter();     // enter, wait until notified, exit
    static native void rawOwner();      // enter, hold until rawRelease, exit
    static native void rawEnterer();    // enter (blocks), exit
    static native boolean rawOwned();   // rawOwner holds it
    static native boolean blockedInRaw(int role);   // GetThreadStatus says MONITOR_WAIT
    static native boolean waitingInRaw(int role);   // GetThreadStatus says CONDVAR_WAIT
    static native int dump();           // RequestEvent(MONITOR_DUMP); checks run in the handler
    static native void rawRelease();
    static native void rawNotify();
    static native void finish();

    static final Object M = new Object();

    static void until(String what, java.util.function.BooleanSupplier cond) {
        long end = System.nanoTime() + 30_000_000_000L;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("timed out waiting until " + what);
            }
            Thread.yield();
        }
    }

    public static void main(String[] args) throws Exception {
        System.load(System.getProperty("agent.lib"));
        register(0);
        mark(M);
        markClass(D_MonDump.class);

        Thread waiter = new Thread(() -> {
            register(2);
            synchronized (M) {
                try {
                    M.wait();
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }
        }, "waiter");
        waiter.start();
        until("waiter waits", () -> waiter.getState() == Thread.State.WAITING);

        Thread rw = new Thread(() -> { register(5); rawWaiter(); }, "rawWaiter");
        rw.start();
        until("rawWaiter waits", () -> waitingInRaw(5));
        Thread ro = new Thread(() -> { register(3); rawOwner(); }, "rawOwner");
        ro.start();
        until("rawOwner owns", D_MonDump::rawOwned);
        Thread re = new Thread(() -> { register(4); rawEnterer(); }, "rawEnterer");
        re.start();
        until("rawEnterer blocks", () -> blockedInRaw(4));

        Thread blocked = new Thread(() -> { register(1); synchronized (M) { } }, "blocked");
        int rc;
        synchronized (D_MonDump.class) {
            synchronized (M) {
                synchronized (M) {
                    synchronized (M) {
                        blocked.start();
                        until("blocked blocks", () -> blocked.getState() == Thread.State.BLOCKED);
                        rc = dump();
                    }
                }
            }
        }
        blocked.join();
        rawRelease();
        ro.join();
        re.join();
        rawNotify();
        rw.join();
        synchronized (M) {
            M.notifyAll();
        }
        waiter.join();
        System.out.println("dump returned " + rc);
        finish();
        System.out.println("D_MonDump end");
    }
}
