import java.util.Random;

/**
 * For the c_classes agent: OBJECT_ALLOC must name the right class while the
 * collector moves class mirrors around (the layer's class cache keys its
 * entries by mirror address, jvmti_backend/classcache.c).
 *
 * Sixteen classes of different sizes, first used in four rounds, so that
 * each round brings mirrors that are young and will be moved by the next
 * collections.  Four threads allocate, per round, a shuffled mix of
 * instances and arrays of the classes in use, with garbage in between for
 * young collections, and each round ends with System.gc() (a full,
 * compacting collection).  Everything escapes, into SINK, so no allocation
 * is optimised away.  At the end the program prints how many instances
 * and arrays of each class it made:
 *   expect C_Classes$K07 objects=N arrays=M
 */
public class C_Classes {
    static class K00 { long a; }
    static class K01 { long a, b; }
    static class K02 { long a, b, c; }
    static class K03 { long a, b, c, d; }
    static class K04 { long a, b, c, d, e; }
    static class K05 { long a, b, c, d, e, f; }
    static class K06 { long a, b, c, d, e, f, g; }
    static class K07 { long a, b, c, d, e, f, g, h; }
    static class K08 { long a, b, c, d, e, f, g, h, i; }
    static class K09 { long a, b, c, d, e, f, g, h, i, j; }
    static class K10 { long a, b, c, d, e, f, g, h, i, j, k; }
    static class K11 { long a, b, c, d, e, f, g, h, i, j, k, l; }
    static class K12 { long a, b, c, d, e, f, g, h, i, j, k, l, m; }
    static class K13 { long a, b, c, d, e, f, g, h, i, j, k, l, m, n; }
    static class K14 { long a, b, c, d, e, f, g, h, i, j, k, l, m, n, o; }
    static class K15 { long a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p; }

    static final int CLASSES = 16, ROUNDS = 4, THREADS = 4;
    static final Object[] SINK = new Object[1 << 14];
    static final long[][] objects = new long[THREADS][CLASSES], arrays = new long[THREADS][CLASSES];

    static Object make(int k) {
        switch (k) {
            case 0: return new K00();
            case 1: return new K01();
            case 2: return new K02();
            case 3: return new K03();
            case 4: return new K04();
            case 5: return new K05();
            case 6: return new K06();
            case 7: return new K07();
            case 8: return new K08();
            case 9: return new K09();
            case 10: return new K10();
            case 11: return new K11();
            case 12: return new K12();
            case 13: return new K13();
            case 14: return new K14();
            default: return new K15();
        }
    }

    static Object makeArray(int k, int n) {
        switch (k) {
            case 0: return new K00[n];
            case 1: return new K01[n];
            case 2: return new K02[n];
            case 3: return new K03[n];
            case 4: return new K04[n];
            case 5: return new K05[n];
            case 6: return new K06[n];
            case 7: return new K07[n];
            case 8: return new K08[n];
            case 9: return new K09[n];
            case 10: return new K10[n];
            case 11: return new K11[n];
            case 12: return new K12[n];
            case 13: return new K13[n];
            case 14: return new K14[n];
            default: return new K15[n];
        }
    }

    /** One thread's share of a round: classes [0, inUse) in a seeded random order. */
    static void work(int t, int round, int inUse) {
        Random r = new Random(31L * t + round);
        int slot = t * (SINK.length / THREADS);
        for (int i = 0; i < 60000; i++) {
            int k = r.nextInt(inUse);
            Object o;
            if (r.nextInt(8) == 0) {
                o = makeArray(k, 1 + r.nextInt(5));
                arrays[t][k]++;
            } else {
                o = make(k);
                objects[t][k]++;
            }
            SINK[slot + (i & (SINK.length / THREADS - 1))] = o;
            if ((i & 63) == 0) {
                SINK[slot] = new byte[2048]; // garbage, for young collections
            }
        }
    }

    public static void main(String[] args) throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            final int rd = round, inUse = (round + 1) * CLASSES / ROUNDS;
            // One instance of each new class first: an array of a class that
            // is loaded but not linked yet carries class_id NULL (JVM TI can
            // describe no such class), and this test counts by class.
            for (int k = round * CLASSES / ROUNDS; k < inUse; k++) {
                SINK[k] = make(k);
                objects[0][k]++;
            }
            Thread[] ts = new Thread[THREADS];
            for (int t = 0; t < THREADS; t++) {
                final int tt = t;
                ts[t] = new Thread(() -> work(tt, rd, inUse), "c-classes-" + t);
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            System.gc();
        }
        for (int k = 0; k < CLASSES; k++) {
            long o = 0, a = 0;
            for (int t = 0; t < THREADS; t++) {
                o += objects[t][k];
                a += arrays[t][k];
            }
            System.out.printf("expect C_Classes$K%02d objects=%d arrays=%d%n", k, o, a);
        }
        System.out.println("C_Classes done");
    }
}
