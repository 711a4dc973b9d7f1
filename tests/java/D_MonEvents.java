/*
 * D_MonEvents - Java monitor events at known points, for the agent
 * d_mon_events (tests/agents/d_mon_events.c), which records the events by
 * phase and checks them in finish().  Run with -Dagent.lib=<libd_mon_events.so>.
 *
 * Phase 1: one thread holds lock1 until one other thread is blocked on it
 *          (the agent has seen its CONTENDED_ENTER), then lets go.
 * Phase 2: the same with two blocked threads on lock2.
 * Phase 3: lock3.wait(300) timing out; lock3.wait() woken by notify.
 * Phase 4: Thread.sleep(120).
 */
public class D_MonEvents {
    static native void register(int role);
    static native void mark(Object lock, int which);
    static native void phase(int n);
    /* CONTENDED_ENTER events seen so far for marked object `which` */
    static native int enters(int which);
    static native void finish();

    static volatile boolean release;
    static volatile int holding;

    static final Object lock1 = new Object(), lock2 = new Object(), lock3 = new Object();

    static Thread holder(Object lock, int role) {
        return new Thread(() -> {
            register(role);
            synchronized (lock) {
                holding = role;
                while (!release) {
                    Thread.yield();
                }
            }
        }, "holder" + role);
    }

    static Thread enterer(Object lock, int role) {
        return new Thread(() -> {
            register(role);
            synchronized (lock) {
                holding = -role;
            }
        }, "enterer" + role);
    }

    static void contend(Object lock, int which, int holderRole, int... blockedRoles) throws Exception {
        release = false;
        holding = 0;
        Thread h = holder(lock, holderRole);
        h.start();
        while (holding != holderRole) {
            Thread.yield();
        }
        Thread[] bs = new Thread[blockedRoles.length];
        for (int i = 0; i < bs.length; i++) {
            bs[i] = enterer(lock, blockedRoles[i]);
            bs[i].start();
            // one at a time, so the order of the enters is known
            long until = System.nanoTime() + 30_000_000_000L;
            while (enters(which) != i + 1 || bs[i].getState() != Thread.State.BLOCKED) {
                if (System.nanoTime() > until) {
                    throw new IllegalStateException("enterer " + blockedRoles[i] + " never blocked");
                }
                Thread.yield();
            }
        }
        release = true;
        h.join();
        for (Thread b : bs) {
            b.join();
        }
    }

    public static void main(String[] args) throws Exception {
        System.load(System.getProperty("agent.lib"));
        register(0);
        mark(lock1, 1);
        mark(lock2, 2);
        mark(lock3, 3);

        phase(1);
        contend(lock1, 1, 1, 2);
        phase(2);
        contend(lock2, 2, 3, 4, 5);

        phase(3);
        synchronized (lock3) {
            lock3.wait(300);
        }
        Thread notifier = new Thread(() -> {
            register(6);
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
            synchronized (lock3) {
                lock3.notifyAll();
            }
        }, "notifier");
        synchronized (lock3) {
            notifier.start();
            lock3.wait();
        }
        notifier.join();

        phase(4);
        Thread.sleep(120);
        phase(5);
        finish();
        System.out.println("D_MonEvents end");
    }
}
