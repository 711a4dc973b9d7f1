/*
 * I_Xrun - a little of everything a legacy -Xrun agent may want to see:
 * constructors and calls with a branch (method events, receivers,
 * instructions), a monitor another thread has to wait for, and a wait.
 * Prints "I_Xrun: sum=N".
 */
public class I_Xrun {
    private final int value;

    I_Xrun(int value) { this.value = value; }

    int work(int x) { return x % 3 == 0 ? x / 3 : x + value; }

    static final Object lock = new Object();

    public static void main(String[] args) throws Exception {
        long sum = 0;
        for (int i = 0; i < 1000; i++) {
            sum += new I_Xrun(i).work(i);
        }
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
