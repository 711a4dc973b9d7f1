/**
 * Workload of the e_* agents (tests/agents/e_*.c) in the shape of the
 * program a heap profiler is most often pointed at: a large structure kept
 * for the whole run (NODES linked nodes), a great many short-lived objects
 * (StringBuilders and their Strings, on four threads), and those four
 * threads contending for one lock meanwhile.  An agent that writes a heap
 * dump at exit, as Sun's HPROF does with heap=dump, meets every class the
 * run touched there.
 * Usage: E_Keeper [NODES] [BUILDERS_PER_THREAD]; prints "E_Keeper done" last.
 */
public class E_Keeper {
    static final class Node {
        final int value;
        final Node next;
        final String label;

        Node(int value, Node next) {
            this.value = value;
            this.next = next;
            this.label = (value % 1000) == 0 ? "node " + value : null;
        }
    }

    static Node kept;
    static final Object LOCK = new Object();
    static long shared;

    public static void main(String[] args) throws Exception {
        int nodes = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int builders = args.length > 1 ? Integer.parseInt(args[1]) : 500_000;
        for (int i = 0; i < nodes; i++) {
            kept = new Node(i, kept);
        }
        Thread[] workers = new Thread[4];
        for (int t = 0; t < workers.length; t++) {
            final int id = t;
            workers[t] = new Thread(() -> {
                long sum = 0;
                for (int i = 0; i < builders; i++) {
                    StringBuilder sb = new StringBuilder();
                    sb.append("worker ").append(id).append(" item ").append(i);
                    sum += sb.toString().length();
                    if ((i & 1023) == 0) {
                        synchronized (LOCK) {
                            shared += sum;
                        }
                    }
                }
            }, "keeper-" + t);
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        int count = 0;
        for (Node n = kept; n != null; n = n.next) {
            count++;
        }
        System.out.println("E_Keeper done: " + count + " nodes kept, " + shared);
    }
}
