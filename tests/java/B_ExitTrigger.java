// For it_b_exit.sh: prints "B_ExitTrigger before",
// starts a thread named "b-exit-now" (whose THREAD_START makes the agent
// call ProfilerExit), and would print "B_ExitTrigger after" two seconds later.
public class B_ExitTrigger {
    public static void main(String[] args) throws Exception {
        System.out.println("B_ExitTrigger before");
        System.out.flush();
        Thread t = new Thread(() -> { }, "b-exit-now");
        t.start();
        t.join();
        Thread.sleep(2000);
        System.out.println("B_ExitTrigger after");
    }
}
