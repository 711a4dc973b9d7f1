import java.lang.reflect.Array;

/**
 * Workload of e_dumpsize (tests/agents/e_dumpsize.c): a heap that holds
 * classes in every state a heap dump must describe the way their
 * CLASS_LOAD did, so that an agent sizing records from CLASS_LOAD alone
 * meets each of them:
 *  - E_DsNotLinked: loaded, not linked (Class.forName(name, false, loader));
 *    no array of it is made, since an array names its element class and
 *    the layer links that class for it;
 *  - E_DsArrayFirst: loaded, an array of it made before it was ever linked
 *    (the layer links it then, so that the array can name it);
 *  - E_DsLinkedOnly: linked, not initialized (getDeclaredFields links);
 *  - a hidden class (VM-anonymous before Java 15: E_Hidden), defined from
 *    E_DsHiddenSrc's bytes, and an instance;
 *  - E_DsStatics: static and instance fields of every type, long, double
 *    and arrays among them, a superclass with fields of its own, and
 *    interfaces with constants (E_DsConsts, E_DsMore);
 *  - arrays of each of them, primitive arrays of every type;
 *  - the primitive types' Class objects (int.class ... void.class);
 *  - JDK classes from the CDS archive, and instances of them;
 *  - a thread blocked entering a monitor, with objects in its top frame
 *    (a stack that stays put, so its frame roots keep their frames).
 * Usage: E_DumpShapes [FILE]: holds all that while allocating a little,
 * until FILE (the agent's output) has a line "dumps for the timer done",
 * 60 s at most; without FILE for 6 s.  Then prints "E_DumpShapes done".
 */
public class E_DumpShapes {
    static Class<?> notLinked, linkedOnly, hidden;
    static Object arrayFirstArray, linkedOnlyArray, hiddenObj, hiddenArray, statics, staticsArray, ifaceArray;
    static Object primArrays, cdsObjects;
    static final Class<?>[] PRIMS = {boolean.class, byte.class, char.class, short.class, int.class, long.class,
            float.class, double.class, void.class};
    static volatile Object sink;

    public static void main(String[] args) throws Throwable {
        java.nio.file.Path done = args.length > 0 ? java.nio.file.Paths.get(args[0]) : null;
        ClassLoader app = E_DumpShapes.class.getClassLoader();
        notLinked = Class.forName("E_DsNotLinked", false, app);
        arrayFirstArray = Array.newInstance(Class.forName("E_DsArrayFirst", false, app), 2);
        linkedOnly = Class.forName("E_DsLinkedOnly", false, app);
        linkedOnly.getDeclaredFields();
        linkedOnlyArray = Array.newInstance(linkedOnly, 3);
        hidden = E_Hidden.define(E_DumpShapes.class, "E_DsHiddenSrc", true);
        hiddenObj = hidden.getDeclaredConstructor().newInstance();
        hiddenArray = Array.newInstance(hidden, 2);
        Array.set(hiddenArray, 0, hiddenObj);
        E_DsStatics s = new E_DsStatics();
        statics = s;
        staticsArray = new E_DsStatics[][] {{s}, null};
        ifaceArray = new E_DsConsts[] {s};
        primArrays = new Object[] {new boolean[1], new byte[2], new char[3], new short[4], new int[5], new long[6],
            new float[7], new double[8], new int[2][2], new long[1][]};
        cdsObjects = new Object[] {new java.util.concurrent.ConcurrentSkipListMap<String, Integer>(),
            java.time.Duration.ofSeconds(3), Thread.State.BLOCKED, E_DsConsts.O, E_DsMore.OA, PRIMS};
        Object lock = new Object();
        synchronized (lock) {
            Thread blocker = new Thread(() -> blocked(lock, new int[3]), "E_DumpShapes blocked");
            blocker.setDaemon(true);
            blocker.start();
            System.out.println("E_DumpShapes ready: " + hidden.getName());
            long end = System.currentTimeMillis() + (done != null ? 60000 : 6000);
            while (System.currentTimeMillis() < end && !agentDone(done)) {
                sink = new StringBuilder().append(end).append(s.i).toString();
                Thread.sleep(10);
            }
        }
        System.out.println("E_DumpShapes done");
    }

    static boolean agentDone(java.nio.file.Path file) throws java.io.IOException {
        return file != null && java.nio.file.Files.exists(file)
                && new String(java.nio.file.Files.readAllBytes(file), "UTF-8").contains("\ndumps for the timer done");
    }

    static void blocked(Object lock, Object marker) {
        synchronized (lock) {
            sink = marker;
        }
    }
}

interface E_DsConsts {
    int K = 7;
    long L = 1L << 40;
    double D = 2.5;
    float F = 1.5f;
    char C = 'c';
    String S = "s";
    Object O = new Object();
    int[] A = {1, 2, 3};
}

interface E_DsMore extends E_DsConsts {
    byte B = 3;
    short SH = 4;
    boolean Z = true;
    Object[] OA = {"x", null};
}

class E_DsBase {
    int baseInt = 1;
    Object baseRef = "base";
    long baseLong = 2;
}

class E_DsStatics extends E_DsBase implements E_DsMore, Runnable {
    static boolean sz = true;
    static byte sb = 1;
    static char sc = 'x';
    static short ss = 2;
    static int si = 3;
    static long sl = 4;
    static float sf = 5f;
    static double sd = 6;
    static Object so = new Object();
    static int[] sia = {1};
    static long[][] sla = new long[2][3];
    static String sstr = "str";
    static Runnable[] sra;
    boolean z = true;
    byte b = 1;
    char c = 'y';
    short s = 2;
    int i = 3;
    long l = 4;
    float f = 5f;
    double d = 6;
    Object o = "o";
    double[] da = {1.0};

    public void run() {
    }
}

class E_DsNotLinked {
    static long x = 5;
    long y;
}

class E_DsArrayFirst {
    static double d = 2;
    Object o;
}

class E_DsLinkedOnly {
    static long lx = 5;
    static double ld;
    static Object lo;
    int a;
    long b;
}

class E_DsHiddenSrc {
    static int hs = 9;
    long hv = 10;
    Object href = "h";

    public E_DsHiddenSrc() {
    }
}
