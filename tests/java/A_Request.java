/**
 * For the a_request agent: one thread "a-req-worker" that runs marker() and
 * ends; the agent asks for this class's CLASS_LOAD from that thread's
 * THREAD_END.
 */
public class A_Request {
    static int marker() {
        return 42;
    }

    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> System.out.println("marker=" + marker()), "a-req-worker");
        t.start();
        t.join();
        System.out.println("request done");
    }
}
