// For it_b_tls.sh: starts N short-lived threads "b-w0".."b-w<N-1>", each
// busy for about 50 ms, and waits for them all.
// Arguments: N
public class B_Workers {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        System.out.println("B_Workers start");
        int n = Integer.parseInt(args[0]);
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            ts[i] = new Thread(() -> {
                long end = System.nanoTime() + 50_000_000L;
                while (System.nanoTime() < end) {
                    sink++;
                }
            }, "b-w" + i);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("B_Workers end");
    }
}
