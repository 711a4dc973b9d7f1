/**
 * A small program for the a_* agents that only look at start-up, options or
 * event filtering: it starts and ends a thread and runs a GC, so that events
 * the agent did not enable (THREAD_END, GC, ...) have a chance to be sent
 * wrongly.
 */
public class A_Hello {
    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> System.out.println("hello from " + Thread.currentThread().getName()),
                              "a-hello-thread");
        t.start();
        t.join();
        System.gc();
        System.out.println("hello done");
    }
}
