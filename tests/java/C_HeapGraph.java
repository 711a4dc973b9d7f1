/**
 * For the c_heapdump agent (tests/agents/c_heapdump.c): builds a known
 * object graph, keeps it reachable from statics, hands the agent each known
 * object with reg(key, o) (the agent keeps its jobjectID only, no reference),
 * then asks for heap dumps at levels 0, 1, 2 and with a NULL argument, and for
 * object dumps, through the agent's JNI natives.
 *
 * The K_* keys and every value below are repeated in c_heapdump.c: change
 * both together.
 */
public class C_HeapGraph {
    static final int K_SUB = 0, K_STR = 1, K_OBJARR = 2, K_NODEA = 3, K_NODEB = 4, K_MARKERS = 5,
            K_MROW0 = 6, K_MROW1 = 7, K_M1 = 8, K_M2 = 9, K_ZARR = 10, K_BARR = 11, K_CARR = 12,
            K_SARR = 13, K_IARR = 14, K_JARR = 15, K_FARR = 16, K_DARR = 17, K_GLOBAL = 18,
            K_LOCAL = 19, K_SUBCLASS = 20, K_BASE = 21;

    static native void reg(int key, Object o);
    /** The agent makes a JNI global ref to o and keeps it: then o's only referent. */
    static native void makeGlobal(Object o);
    /** RequestEvent(HEAP_DUMP) at level (-1: NULL argument); returns its result. */
    static native int dump(int level);
    static native int dumpObject(int key, Object o);
    static native int badLevel(int level);
    static native void finish();

    static CHgSub SUB;
    static CHgBase BASE;
    static String STR;
    static Object[] OBJS;
    static CHgNode NODE_A;
    static CHgMarker[][] MARKERS;
    static boolean[] ZA;
    static byte[] BA;
    static char[] CA;
    static short[] SA;
    static int[] IA;
    static long[] JA;
    static float[] FA;
    static double[] DA;

    static void build() {
        STR = "hg-string";
        ZA = new boolean[] {true, false, true};
        BA = new byte[] {1, -2, 127, -128};
        CA = new char[] {'J', 'V', 'M', 'P', 'I'};
        SA = new short[] {1, -1, 0x7fff, -32768};
        IA = new int[] {0x12345678, -1, 0, 42};
        JA = new long[] {0x1122334455667788L, -2L};
        FA = new float[] {1.5f, -0.0f, Float.MIN_VALUE};
        DA = new double[] {3.25, Double.MIN_VALUE, -0.0};
        CHgNode a = new CHgNode(1001), b = new CHgNode(1002);
        a.next = b;
        b.next = a;
        NODE_A = a;
        CHgSub.sRef = b;
        CHgMarker m1 = new CHgMarker(1), m2 = new CHgMarker(2);
        MARKERS = new CHgMarker[2][];
        MARKERS[0] = new CHgMarker[] {m1, null};
        MARKERS[1] = new CHgMarker[] {m2};
        SUB = new CHgSub();
        OBJS = new Object[] {STR, a, null, IA, SUB};
        SUB.refStr = STR;
        SUB.refArr = OBJS;
        SUB.refNode = a;
        SUB.refMarkers = MARKERS;
        SUB.baseRef = IA;
        BASE = new CHgBase();

        reg(K_SUB, SUB);
        reg(K_BASE, BASE);
        reg(K_STR, STR);
        reg(K_OBJARR, OBJS);
        reg(K_NODEA, a);
        reg(K_NODEB, b);
        reg(K_MARKERS, MARKERS);
        reg(K_MROW0, MARKERS[0]);
        reg(K_MROW1, MARKERS[1]);
        reg(K_M1, m1);
        reg(K_M2, m2);
        reg(K_ZARR, ZA);
        reg(K_BARR, BA);
        reg(K_CARR, CA);
        reg(K_SARR, SA);
        reg(K_IARR, IA);
        reg(K_JARR, JA);
        reg(K_FARR, FA);
        reg(K_DARR, DA);
        reg(K_SUBCLASS, CHgSub.class);
    }

    /** local is held by this frame alone while dump runs (the JAVA_FRAME root). */
    static int holdAndDump(int level) {
        CHgMarker local = new CHgMarker(88);
        reg(K_LOCAL, local);
        int rc = dump(level);
        System.out.println("dump level " + level + " rc=" + rc + " local=" + local.id);
        return rc;
    }

    public static void main(String[] args) {
        System.load(System.getProperty("agent.lib"));
        build();
        makeGlobal(new CHgMarker(77));
        holdAndDump(0);
        holdAndDump(1);
        holdAndDump(2);
        holdAndDump(-1);
        System.out.println("object dump sub rc=" + dumpObject(K_SUB, SUB));
        System.out.println("object dump objs rc=" + dumpObject(K_OBJARR, OBJS));
        System.out.println("object dump markers rc=" + dumpObject(K_MARKERS, MARKERS));
        System.out.println("object dump ints rc=" + dumpObject(K_IARR, IA));
        System.out.println("object dump doubles rc=" + dumpObject(K_DARR, DA));
        System.out.println("object dump class rc=" + dumpObject(K_SUBCLASS, CHgSub.class));
        System.out.println("bad level 7 rc=" + badLevel(7));
        System.out.println("bad level -2 rc=" + badLevel(-2));
        finish();
        System.out.println("C_HeapGraph done " + SUB.i + " " + BASE.i);
    }
}

interface CHgIface {
    int tag();
}

/** Superclass with fields of its own, one shadowed by the subclass ("i"). */
class CHgBase {
    int i = 0x0B0B0B0B;
    short baseShort = (short) 0xCAFE;
    Object baseRef;
    Object baseNull;
    long baseLong = -0x0102030405060708L;
}

class CHgSub extends CHgBase implements CHgIface {
    boolean z = true;
    byte b = (byte) 0xA5;
    char c = 'Q';
    short s = (short) 0x5A5A;
    int i = 0x12345678;
    long j = 0x1122334455667788L;
    float f = 1.5f;
    double d = -2.25;
    String refStr;
    Object[] refArr;
    CHgNode refNode;
    CHgMarker[][] refMarkers;

    static boolean sZ = true;
    static byte sB = (byte) 0x81;
    static char sC = 'W';
    static short sS = (short) 0x7ABC;
    static int sI = 0x76543210;
    static long sJ = 0x0123456789ABCDEFL;
    static float sF = -0.75f;
    static double sD = 0.5;
    static Object sRef;
    static Object sNull;

    public int tag() {
        return i;
    }
}

class CHgNode {
    int val;
    CHgNode next;

    CHgNode(int v) {
        val = v;
    }
}

class CHgMarker {
    int id;

    CHgMarker(int v) {
        id = v;
    }
}
