import java.nio.file.Files;
import java.nio.file.Path; import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;

// For it_b_threadstat.sh: five threads in known states, held there until the
// agent (b_threadstat) is done sampling them.
//   sleeper  Thread.sleep                 JVMPI_THREAD_RUNNABLE (as HotSpot 5.0)
//   spinner  busy loop                    JVMPI_THREAD_RUNNABLE
//   holder   Thread.sleep holding `lock`  JVMPI_THREAD_RUNNABLE
//   blocked  entering `lock`              JVMPI_THREAD_MONITOR_WAIT
//   waiter   Object.wait on `cond`        JVMPI_THREAD_CONDVAR_WAIT
//   flagged  busy loop, interrupted       JVMPI_THREAD_RUNNABLE | JVMPI_THREAD_INTERRUPTED
//            (it never looks at the flag, so the flag stays set)
// Arguments: READY_FILE DONE_FILE.  READY_FILE is created once every thread
// is in its state; the program then waits (up to 60 s) for DONE_FILE.
public class B_ThreadStates {
    static volatile boolean stop;
    static volatile boolean flaggedRuns;   // getState() is RUNNABLE before a thread runs
    static volatile long spins;
    static final Object lock = new Object();
    static final Object cond = new Object();

    static void sleepUntilStopped() {
        while (!stop) {
            try {
                Thread.sleep(600_000);
            } catch (InterruptedException e) {
                // stop is checked again
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Path ready = Paths.get(args[0]);
        Path done = Paths.get(args[1]);
        System.out.println("B_ThreadStates start");

        CountDownLatch held = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            synchronized (lock) {
                held.countDown();
                sleepUntilStopped();
            }
        }, "holder");
        holder.start();
        held.await();

        Thread sleeper = new Thread(B_ThreadStates::sleepUntilStopped, "sleeper");
        Thread spinner = new Thread(() -> {
            while (!stop) {
                spins++;
            }
        }, "spinner");
        Thread blocked = new Thread(() -> {
            synchronized (lock) {
                spins++;
            }
        }, "blocked");
        Thread waiter = new Thread(() -> {
            synchronized (cond) {
                while (!stop) {
                    try {
                        cond.wait();
                    } catch (InterruptedException e) {
                        // stop is checked again
                    }
                }
            }
        }, "waiter");
        Thread flagged = new Thread(() -> {
            flaggedRuns = true;
            while (!stop) {
                spins++;
            }
        }, "flagged");
        Thread[] all = { holder, sleeper, spinner, blocked, waiter, flagged };
        for (int i = 1; i < all.length; i++) {
            all[i].start();
        }
        flagged.interrupt();

        long end = System.currentTimeMillis() + 30_000;
        while (!(sleeper.getState() == Thread.State.TIMED_WAITING
                && holder.getState() == Thread.State.TIMED_WAITING
                && spinner.getState() == Thread.State.RUNNABLE
                && blocked.getState() == Thread.State.BLOCKED
                && waiter.getState() == Thread.State.WAITING
                && flaggedRuns && flagged.isInterrupted())) {
            if (System.currentTimeMillis() > end) {
                for (Thread t : all) {
                    System.out.println("B_ThreadStates: " + t.getName() + " is " + t.getState());
                }
                System.out.println("B_ThreadStates: threads never reached their states");
                System.exit(4);
            }
            Thread.sleep(10);
        }
        Files.createFile(ready);
        System.out.println("B_ThreadStates ready");

        end = System.currentTimeMillis() + 60_000;
        boolean timedOut = false;
        while (!Files.exists(done)) {
            if (System.currentTimeMillis() > end) {
                timedOut = true;
                break;
            }
            Thread.sleep(20);
        }
        stop = true;
        sleeper.interrupt();
        holder.interrupt();
        synchronized (cond) {
            cond.notifyAll();
        }
        for (Thread t : all) {
            t.join();
        }
        if (timedOut) {
            System.out.println("B_ThreadStates timeout waiting for " + done);
            System.exit(3);
        }
        System.out.println("B_ThreadStates end");
    }
}
