/*
 * I_Xrun - a little of everything a legacy -Xrun agent may want to see:
 * constructors and calls with a branch, ITERATIONS times, hot enough for
 * C2 (method events, receivers, instructions, compiled code); each I_Xrun
 * kept in `last` until the next, so that every one is allocated, then all
 * freed by System.gc() (allocations, frees, collections); a monitor of a
 * class of its own, I_Xrun$Lock, that another thread has to wait for, and
 * a wait on it (monitor events and dumps).
 * Prints "I_Xrun: sum=N".
 */
public class I_Xrun {
    static final int ITERATIONS = 100000; /* tests/agents/i_xrun.c expects as many */

    private final int value;

    I_Xrun(int value) { this.value = value; }

    int work(int x) { return x % 3 == 0 ? x / 3 : x + value; }

    static final class Lock { }

    static final Lock lock = new Lock();
    static I_Xrun last;

    public static void main(String[] args) throws Exception {
        long sum = 0;
        for (int i = 0; i < ITERATIONS; i++) {
            I_Xrun o = new I_Xrun(i);
            last = o;
            sum += o.work(i);
        }
        last = null;
        System.gc();
        Thread contender;
        synchronized (lock) {
            contender = new Thread(() -> { synchronized (lock) { } }, "i-contender");
            contender.start();
            while (contender.getState() != Thread.State.BLOCKED) {
                Thread.sleep(1);
            }
            Thread.sleep(100); /* its MONITOR_CONTENDED_ENTER may still be on its way */
        }
        contender.join();
        synchronized (lock) {
            lock.wait(10);
        }
        System.out.println("I_Xrun: sum=" + sum);
    }
}
