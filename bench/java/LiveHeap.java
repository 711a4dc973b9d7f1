/*
 * LiveHeap - the workload of bench/requests.sh: a heap of a known number of
 * live objects, interleaved with garbage, held while an agent dumps and
 * inspects it.
 *
 *   java LiveHeap <live objects> <go file> <done file>
 *
 * Builds the heap (a third plain objects, a third int[2], a third Object[1];
 * two short-lived objects are made between each two kept ones, so that the
 * survivors of a collection are spread out as in a real program), then
 * creates the go file and waits, holding the heap, until the agent creates
 * the done file (at most 30 minutes).
 *
 * Prints: LiveHeap: live=N
 */
import java.nio.file.Files;
import java.nio.file.Path;

public class LiveHeap {
    static final class Node {
        int a;
        Node next;
        Node(int a) { this.a = a; }
    }

    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Path go = Path.of(args[1]);
        Path done = Path.of(args[2]);
        Object[] live = new Object[n];
        for (int i = 0; i < n; i++) {
            switch (i % 3) {
            case 0: live[i] = new Node(i); break;
            case 1: live[i] = new int[] {i, i}; break;
            default: live[i] = new Object[] {live[i - 1]}; break;
            }
            sink = new Node(-i);
            sink = new int[3];
        }
        sink = null;
        System.gc();
        Files.deleteIfExists(done);
        Files.createFile(go);
        long deadline = System.nanoTime() + 30L * 60 * 1_000_000_000L;
        while (!Files.exists(done) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        System.out.println("LiveHeap: live=" + live.length);
    }
}
