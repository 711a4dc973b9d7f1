/*
 * D_Methods - driven by tests/agents/d_methods.c (its natives live there).
 *
 * Known methods called a known number of times, on two threads: a static
 * one, an instance one (whose receiver the agent learns through a native),
 * one that leaves by an exception it throws, and one that leaves by an
 * exception thrown in its callee.  Then the method events are switched off
 * and a method that has never run gets hot: it must be compiled (the JIT
 * works again), while the same kind of method run hot while the events were
 * on was not.  Also a constructor run hot whose objects never leave the
 * loop that makes them: the JIT's escape analysis would replace them by
 * their fields, yet METHOD_ENTRY2 must name each one.
 */
public class D_Methods {
    static final int N = 1000;
    static final int M = 300;
    static final int HOT_POINTS = 200000;

    /* Made hot, and used only through its fields. */
    static final class Point {
        final int x, y;
        Point(int x, int y) { this.x = x; this.y = y; }
    }

    static native void receiverIs(Object o);
    static native void methodEventsOff();
    static native boolean compiledSeen(String name);

    int base;

    D_Methods(int base) { this.base = base; }

    static int staticCallee(int x) { return x + 1; }

    int instanceCallee(int x) { return x + base; }

    static void thrower(int i) { throw new IllegalStateException("t" + i); }

    static void passesThrough(int i) { thrower(i); }

    /* Hot while the events are on (interpreted only: never compiled then). */
    static int hotWhileOn(int x) { return (x * 31) ^ (x >>> 3); }

    /* Never run before the events go off. */
    static int hotAfterOff(int x) { return (x * 17) ^ (x >>> 5); }

    public static void main(String[] args) throws Exception {
        System.load(System.getProperty("agent.lib"));
        Thread worker = new Thread(() -> {
            long s = 0;
            for (int i = 0; i < M; i++) s += staticCallee(i);
            if (s == 42) System.out.println("unlikely");
        }, "d-worker");
        worker.start();
        worker.join();

        long sum = 0;
        for (int i = 0; i < N; i++) sum += staticCallee(i);
        D_Methods a = new D_Methods(7);
        receiverIs(a);
        for (int i = 0; i < N; i++) sum += a.instanceCallee(i);
        int caught = 0;
        for (int i = 0; i < N; i++) {
            try { thrower(i); } catch (IllegalStateException e) { caught++; }
        }
        for (int i = 0; i < N; i++) {
            try { passesThrough(i); } catch (IllegalStateException e) { caught++; }
        }
        for (int i = 0; i < 20000; i++) sum += hotWhileOn(i);
        for (int i = 0; i < HOT_POINTS; i++) {
            Point p = new Point(i, i + 1);
            sum += p.x + p.y;
        }
        Thread.sleep(500);
        boolean compiledWhileOn = compiledSeen("hotWhileOn");
        methodEventsOff();
        long until = System.currentTimeMillis() + 20000;
        boolean compiledAfter = false;
        while (!compiledAfter && System.currentTimeMillis() < until) {
            for (int i = 0; i < 20000; i++) sum += hotAfterOff(i);
            compiledAfter = compiledSeen("hotAfterOff");
            if (!compiledAfter) Thread.sleep(10);
        }
        System.out.println("D_Methods: caught=" + caught + " sum=" + sum + " compiledWhileOn=" + compiledWhileOn
                           + " compiledAfterOff=" + compiledAfter);
    }
}
