import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.LockSupport;

/**
 * Workload of the f_vthreads agent (tests/agents/f_vthreads.c): virtual
 * threads that allocate, sleep (so that they leave their carrier and come
 * back, usually on another one) and allocate again, and one that stays
 * parked while the main thread allocates a probe object.
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
        parkedReady.await();
        while (parked.getState() != Thread.State.WAITING)
            Thread.sleep(1);
        sink = new F_Probe(); // the agent looks at fv-parked now
        released = true;
        LockSupport.unpark(parked);
        parked.join();

        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < count; i++)
            threads.add(startVirtual("fv-" + i, new Worker(i)));
        for (Thread t : threads)
            t.join();
        System.out.println("F_VThreads done: " + count + " virtual threads");
    }
}
