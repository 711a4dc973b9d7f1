import java.util.concurrent.CountDownLatch;

/**
 * Starts worker-1..worker-3 in thread group "a-workers" (parent "a-parent"),
 * keeps all three alive at the same time (so their JNIEnvs are distinct) and
 * joins them before main returns, so that every THREAD_END comes before
 * JVM_SHUT_DOWN.
 */
public class A_Threads {
    public static void main(String[] args) throws Exception {
        ThreadGroup parent = new ThreadGroup("a-parent");
        ThreadGroup group = new ThreadGroup(parent, "a-workers");
        CountDownLatch allUp = new CountDownLatch(3);
        Thread[] ts = new Thread[3];
        for (int i = 0; i < 3; i++) {
            ts[i] = new Thread(group, () -> {
                allUp.countDown();
                try {
                    allUp.await();
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
                long sum = 0;
                for (int k = 0; k < 100000; k++)
                    sum += k;
                System.out.println(Thread.currentThread().getName() + " sum=" + sum);
            }, "worker-" + (i + 1));
            ts[i].start();
        }
        for (Thread t : ts)
            t.join();
        System.out.println("threads done");
    }
}
