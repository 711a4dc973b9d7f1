import java.nio.file.Files;
import java.nio.file.Path; import java.nio.file.Paths;

// For it_b_calltrace.sh (agent b_calltrace): threads whose stacks have
// statements at known source lines.  The LINE_* constants are those lines,
// counted by hand; main checks them against the JVM's own stack traces and
// prints a MISMATCH line if one is off, so a wrong constant cannot pass for a
// wrong layer.  Keep them in step when editing this file.
// Arguments: READY_FILE DONE_FILE (as B_ThreadStates).
public class B_CallTrace {
    static final int LINE_CALL_L2 = 26;   // level1's call of level2
    static final int LINE_CALL_L3 = 30;   // level2's call of level3
    static final int LINE_SPIN = 35;      // level3's busy loop, all on one line
    static final int LINE_CALL_W2 = 39;   // waitLevel1's call of waitLevel2
    static final int LINE_WAIT = 46;      // waitLevel2's cond.wait()
    static final int LINE_CALL_L1 = 61;   // Target.run's call of level1
    static final int LINE_CALL_W1 = 72;   // Waiter.run's call of waitLevel1
    static final int LINE_NEW_TARGET = 87; // main's new Target()

    static volatile boolean inLevel3;
    static volatile boolean stop;
    static volatile long spins;
    static final Object cond = new Object();

    static void level1() {
        level2();
    }

    static void level2() {
        level3();
    }

    static void level3() {
        inLevel3 = true;
        while (!stop) { spins++; }
    }

    static void waitLevel1() {
        waitLevel2();
    }

    static void waitLevel2() {
        synchronized (cond) {
            while (!stop) {
                try {
                    cond.wait();
                } catch (InterruptedException e) {
                    // stop is checked again
                }
            }
        }
    }

    static class Target extends Thread {
        Target() {
            super("b-target");
        }

        @Override
        public void run() {
            level1();
        }
    }

    static class Waiter extends Thread {
        Waiter() {
            super("b-waiter");
        }

        @Override
        public void run() {
            waitLevel1();
        }
    }

    // Line of the caller's statement.
    static int here() {
        return new Throwable().getStackTrace()[1].getLineNumber();
    }

    public static void main(String[] args) throws Exception {
        Path ready = Paths.get(args[0]);
        Path done = Paths.get(args[1]);
        System.out.println("B_CallTrace start");
        boolean ok = true;
        // The agent looks at this statement from its CLASS_LOAD of Target.
        Thread target = new Target(); int newTargetLine = here();
        ok &= expect("main's new Target()", LINE_NEW_TARGET, newTargetLine);
        Thread waiter = new Waiter();
        target.start();
        waiter.start();
        // Ended before the agent samples; started after the others, so that
        // none of them can be given its JNIEnv *.
        Thread brief = new Thread(() -> { }, "b-brief");
        brief.start();
        brief.join();
        long end = System.currentTimeMillis() + 30_000;
        while (!inLevel3 || waiter.getState() != Thread.State.WAITING) {
            if (System.currentTimeMillis() > end) {
                System.out.println("B_CallTrace: threads never got in place");
                System.exit(4);
            }
            Thread.sleep(10);
        }

        StackTraceElement[] t = target.getStackTrace();
        ok &= expectFrame(t, 0, "B_CallTrace", "level3", LINE_SPIN);
        ok &= expectFrame(t, 1, "B_CallTrace", "level2", LINE_CALL_L3);
        ok &= expectFrame(t, 2, "B_CallTrace", "level1", LINE_CALL_L2);
        ok &= expectFrame(t, 3, "B_CallTrace$Target", "run", LINE_CALL_L1);
        StackTraceElement[] w = waiter.getStackTrace();
        int k = 0;
        while (k < w.length && !w[k].getClassName().startsWith("B_CallTrace")) {
            k++;
        }
        ok &= expectFrame(w, k, "B_CallTrace", "waitLevel2", LINE_WAIT);
        ok &= expectFrame(w, k + 1, "B_CallTrace", "waitLevel1", LINE_CALL_W2);
        ok &= expectFrame(w, k + 2, "B_CallTrace$Waiter", "run", LINE_CALL_W1);
        System.out.println(ok ? "B_CallTrace: the JVM's stacks agree with the LINE constants"
                              : "B_CallTrace: MISMATCH between the LINE constants and the JVM's stacks");

        Files.createFile(ready);
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
        synchronized (cond) {
            cond.notifyAll();
        }
        target.join();
        waiter.join();
        if (timedOut) {
            System.out.println("B_CallTrace timeout waiting for " + done);
            System.exit(3);
        }
        System.out.println("B_CallTrace end");
    }

    static boolean expect(String what, int expected, int actual) {
        if (expected != actual) {
            System.out.println("B_CallTrace: " + what + " is on line " + actual + ", constant says " + expected);
            return false;
        }
        return true;
    }

    static boolean expectFrame(StackTraceElement[] st, int i, String cls, String method, int line) {
        if (i >= st.length) {
            System.out.println("B_CallTrace: no frame " + i + " (want " + cls + "." + method + ")");
            return false;
        }
        StackTraceElement e = st[i];
        if (!e.getClassName().equals(cls) || !e.getMethodName().equals(method) || e.getLineNumber() != line) {
            System.out.println("B_CallTrace: frame " + i + " is " + e + ", want " + cls + "." + method + ":" + line);
            return false;
        }
        return true;
    }
}
