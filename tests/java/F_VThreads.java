import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

/**
 * Workload of the f_vthreads agent (tests/agents/f_vthreads.c): virtual
 * threads that allocate, sleep (so that they leave their carrier and come
 * back, usually on another one) and allocate again; one that stays parked,
 * one that parks holding LOCK's monitor and one blocked entering it, while
 * the main thread allocates a probe object.
 *
 * Each "fv-N" allocates one F_VtWork in work(), sleeps 5 ms, allocates
 * another in work(), and ends.  "fv-parked" parks in parkedBody() until
 * main has allocated its F_Probe.  Everything runs in virtual threads
 * started through reflection (Thread.ofVirtual, JDK 21), so that this
 * compiles with JDK 17's javac; on a JDK without virtual threads it prints
 * "F_VThreads: no virtual threads" and ends.
 * Usage: F_VThreads [COUNT]  (default 200).
 */
public class F_VThreads {
    static volatile Object sink;
    static final CountDownLatch parkedReady = new CountDownLatch(1);
    static volatile boolean released;

    static final class F_VtWork {
        final int n;

        F_VtWork(int n) {
            this.n = n;
        }
    }

    static final class F_Probe {
    }

    static void work(int n) {
        sink = new F_VtWork(n);
    }

    static final Object LOCK = new Object();
    static final CountDownLatch holding = new CountDownLatch(1);

    static void holderBody() {
        synchronized (LOCK) {
            holding.countDown();
            while (!released)
                LockSupport.park();
        }
    }

    static void blockedBody() {
        synchronized (LOCK) {
            sink = LOCK;
        }
    }

    static void parkedBody() {
        parkedReady.countDown();
        while (!released)
            LockSupport.park();
    }

    static Thread startVirtual(String name, Runnable r) throws Exception {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Method named = Class.forName("java.lang.Thread$Builder$OfVirtual").getMethod("name", String.class);
        builder = named.invoke(builder, name);
        Method start = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
        return (Thread) start.invoke(builder, r);
    }

    static final class Worker implements Runnable {
        final int n;

        Worker(int n) {
            this.n = n;
        }

        @Override
        public void run() {
            work(n);
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
            work(n);
        }
    }

    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        try {
            Thread.class.getMethod("ofVirtual");
        } catch (NoSuchMethodException e) {
            System.out.println("F_VThreads: no virtual threads");
            return;
        }
        Thread parked = startVirtual("fv-parked", F_VThreads::parkedBody);
        Thread holder = startVirtual("fv-holder", F_VThreads::holderBody);
        parkedReady.await();
        holding.await();
        Thread blocked = startVirtual("fv-blocked", F_VThreads::blockedBody);
        while (parked.getState() != Thread.State.WAITING || blocked.getState() != Thread.State.BLOCKED)
            Thread.sleep(1);
        sink = new F_Probe(); // the agent looks at fv-parked, fv-holder and fv-blocked now
        released = true;
        LockSupport.unpark(parked);
        LockSupport.unpark(holder);
        parked.join();
        holder.join();
        blocked.join();

        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < count; i++)
            threads.add(startVirtual("fv-" + i, new Worker(i)));
        for (Thread t : threads)
            t.join();
        System.out.println("F_VThreads done: " + count + " virtual threads");
    }
}
