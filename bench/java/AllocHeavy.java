/*
 * AllocHeavy - the allocation-heavy workload of bench/heap.sh.
 *
 *   java AllocHeavy [threads] [allocations per thread]     (default 4 600000)
 *
 * A fixed amount of work, the same in every run: each thread draws from its
 * own seeded generator a mix of small objects, linked pairs, and primitive
 * and reference arrays of varied sizes.  Every object is stored into an
 * array that outlives it, so none can be removed by escape analysis and an
 * agent that sees every allocation sees all of them.  Most die young (a
 * short ring overwritten at once); about one in 16 goes to a large per-thread
 * ring that keeps it alive for a while, so that collections have old objects
 * to copy and free too.
 *
 * Prints the number of objects and arrays the workers allocated (not the
 * Worker objects, their rings or the summary line, nor the JDK's own):
 *   AllocHeavy: threads=4 allocations=N checksum=C
 */
public class AllocHeavy {
    static final class Node {
        Node next;
        int a;
        long b;
        Object payload;
        Node(int a, long b) { this.a = a; this.b = b; }
    }

    static final class Pair {
        final Object left;
        final Object right;
        Pair(Object left, Object right) { this.left = left; this.right = right; }
    }

    static final int SHORT_RING = 256;
    static final int LONG_RING = 1 << 15;

    static final class Worker extends Thread {
        private final long ops;
        private long seed;
        long allocations;
        long checksum;
        final Object[] shortLived = new Object[SHORT_RING];
        final Object[] longLived = new Object[LONG_RING];

        Worker(int index, long ops) {
            super("alloc-" + index);
            this.ops = ops;
            this.seed = 0x9E3779B97F4A7C15L * (index + 1);
        }

        private int next(int bound) {
            seed = seed * 6364136223846793005L + 1442695040888963407L;
            return (int) ((seed >>> 33) % bound);
        }

        @Override
        public void run() {
            long n = 0;
            long sum = 0;
            for (long i = 0; i < ops; i++) {
                Object o;
                int kind = next(100);
                if (kind < 45) {
                    Node node = new Node(kind, i);
                    n++;
                    o = node;
                } else if (kind < 60) {
                    Node head = new Node(kind, i);
                    head.next = new Node(kind + 1, i + 1);
                    head.payload = new Pair(head, head.next);
                    n += 3;
                    o = head;
                } else if (kind < 72) {
                    int[] ints = new int[1 + next(64)];
                    ints[ints.length - 1] = kind;
                    n++;
                    o = ints;
                } else if (kind < 82) {
                    byte[] data = new byte[16 + next(1024)];
                    data[0] = (byte) kind;
                    n++;
                    o = data;
                } else if (kind < 92) {
                    Object[] refs = new Object[1 + next(32)];
                    refs[0] = shortLived[next(SHORT_RING)];
                    n++;
                    o = refs;
                } else if (kind < 97) {
                    long[] longs = new long[1 + next(512)];
                    longs[0] = i;
                    n++;
                    o = longs;
                } else {
                    Node[][] grid = new Node[2][3];
                    n += 3; // the outer array and its two rows
                    o = grid;
                }
                sum += kind;
                shortLived[(int) (i & (SHORT_RING - 1))] = o;
                if ((i & 15) == 0)
                    longLived[next(LONG_RING)] = o;
            }
            allocations = n;
            checksum = sum;
        }
    }

    public static void main(String[] args) throws InterruptedException {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        long ops = args.length > 1 ? Long.parseLong(args[1]) : 600_000L;
        Worker[] workers = new Worker[threads];
        for (int t = 0; t < threads; t++)
            workers[t] = new Worker(t, ops);
        for (Worker w : workers)
            w.start();
        long total = 0;
        long checksum = 0;
        for (Worker w : workers) {
            w.join();
            total += w.allocations;
            checksum += w.checksum;
        }
        System.out.println("AllocHeavy: threads=" + threads + " allocations=" + total
                           + " checksum=" + checksum);
    }
}
