import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * For the c_alloc agent (OBJECT_ALLOC completeness): allocates known numbers of
 * C_Marker objects and arrays by every path, in windows opened with begin()
 * and closed with end(label, expected, made); the agent counts the
 * OBJECT_ALLOC events of each kind in the window and checks that every
 * object in made[] is one of them.  Everything stays reachable (keep), so
 * no allocation can be optimised away.
 * Run with -Dagent.lib=<path of libc_alloc.so>.
 */
public class C_Alloc {
    static final int LEN = 4711;
    // kinds, in the agent's order
    static final int MARKER = 0, MARKER_ARR = 1, MARKER_ARR2 = 2, INT_ARR2 = 3, BOOLEAN = 4, BYTE = 5, CHAR = 6,
            SHORT = 7, INT = 8, LONG = 9, FLOAT = 10, DOUBLE = 11, STRING = 12, NK = 13;
    // JVMPI element type codes, for jniNewPrimArray
    static final int[] JVMPI_TYPE = {4, 8, 5, 9, 10, 11, 6, 7}; // boolean byte char short int long float double

    static native void setup(Class<?> marker);
    static native void begin();
    static native void end(String label, int[] expected, Object[] made);
    static native Object jniAllocObject();
    static native Object jniNewObject(int v);
    static native Object jniNewMarkerArray(int n);
    static native Object jniNewPrimArray(int jvmpiType, int n);

    static final List<Object> keep = new ArrayList<>();

    /** Every kind expected 0, but strings, which only the strings window counts. */
    static int[] none() {
        int[] e = new int[NK];
        e[STRING] = -1;
        return e;
    }

    static Object[] fit(Object[] made, int n) {
        if (n != made.length)
            throw new AssertionError("made " + n + " of " + made.length);
        keep.add(made);
        return made;
    }

    static void newMarkers(String label, int n) {
        Object[] made = new Object[n];
        int[] e = none();
        e[MARKER] = n;
        begin();
        for (int i = 0; i < n; i++)
            made[i] = new C_Marker(i);
        end(label, e, fit(made, n));
    }

    static void primArrays(String label, int copies) {
        Object[] made = new Object[8 * copies];
        int[] e = none();
        int k = 0;
        begin();
        for (int i = 0; i < copies; i++) {
            made[k++] = new boolean[LEN];
            made[k++] = new byte[LEN];
            made[k++] = new char[LEN];
            made[k++] = new short[LEN];
            made[k++] = new int[LEN];
            made[k++] = new long[LEN];
            made[k++] = new float[LEN];
            made[k++] = new double[LEN];
        }
        for (int t = BOOLEAN; t <= DOUBLE; t++)
            e[t] = copies;
        end(label, e, fit(made, k));
    }

    static void markerArrays(String label, int n) {
        Object[] made = new Object[n];
        int[] e = none();
        e[MARKER_ARR] = n;
        begin();
        for (int i = 0; i < n; i++)
            made[i] = new C_Marker[7];
        end(label, e, fit(made, n));
    }

    static void multiArrays(String label) {
        Object[] made = new Object[13 * 4 + 2 * 3];
        int k = 0;
        int[] e = none();
        begin();
        for (int i = 0; i < 13; i++) {
            C_Marker[][] m = new C_Marker[3][5];
            made[k++] = m;
            for (C_Marker[] row : m)
                made[k++] = row;
        }
        for (int i = 0; i < 2; i++) {
            int[][] m = new int[2][LEN];
            made[k++] = m;
            made[k++] = m[0];
            made[k++] = m[1];
        }
        e[MARKER_ARR2] = 13;
        e[MARKER_ARR] = 39;
        e[INT_ARR2] = 2;
        e[INT] = 4;
        end(label, e, fit(made, k));
    }

    static void clones(String label) {
        C_Marker[] src = new C_Marker[17];
        for (int i = 0; i < src.length; i++)
            src[i] = new C_Marker(i);
        int[] isrc = new int[LEN];
        C_Marker[] asrc = new C_Marker[7];
        keep.add(src);
        keep.add(isrc);
        keep.add(asrc);
        Object[] made = new Object[17 + 3 + 2];
        int k = 0;
        int[] e = none();
        begin();
        for (C_Marker m : src)
            made[k++] = m.clone();
        for (int i = 0; i < 3; i++)
            made[k++] = isrc.clone();
        for (int i = 0; i < 2; i++)
            made[k++] = asrc.clone();
        e[MARKER] = 17;
        e[INT] = 3;
        e[MARKER_ARR] = 2;
        end(label, e, fit(made, k));
    }

    static void reflection(String label) throws Exception {
        Constructor<C_Marker> ctor = C_Marker.class.getConstructor(int.class);
        // Past the reflection inflation threshold (JDK 17 generates an
        // accessor class after 15 calls) before counting.
        for (int i = 0; i < 40; i++)
            keep.add(ctor.newInstance(i));
        keep.add(Array.newInstance(C_Marker.class, 3, 5));
        Integer[] boxed = new Integer[19];
        for (int i = 0; i < boxed.length; i++)
            boxed[i] = 1000 + i;
        Object[] made = new Object[19 + 23 + 2 + 4];
        int k = 0;
        int[] e = none();
        begin();
        for (int i = 0; i < 19; i++)
            made[k++] = ctor.newInstance(boxed[i]);
        for (int i = 0; i < 23; i++)
            made[k++] = Array.newInstance(C_Marker.class, 7);
        for (int i = 0; i < 2; i++)
            made[k++] = Array.newInstance(long.class, LEN);
        Object[] m = (Object[]) Array.newInstance(C_Marker.class, 3, 5);
        made[k++] = m;
        for (Object row : m)
            made[k++] = row;
        e[MARKER] = 19;
        e[MARKER_ARR] = 23 + 3;
        e[LONG] = 2;
        e[MARKER_ARR2] = 1;
        end(label, e, fit(made, k));
    }

    static void jni(String label) {
        Object[] made = new Object[5 + 6 + 7 + 8];
        int k = 0;
        int[] e = none();
        begin();
        for (int i = 0; i < 5; i++)
            made[k++] = jniAllocObject();
        for (int i = 0; i < 6; i++)
            made[k++] = jniNewObject(i);
        for (int i = 0; i < 7; i++)
            made[k++] = jniNewMarkerArray(7);
        for (int t = 0; t < 8; t++)
            made[k++] = jniNewPrimArray(JVMPI_TYPE[t], LEN);
        e[MARKER] = 11;
        e[MARKER_ARR] = 7;
        for (int t = BOOLEAN; t <= DOUBLE; t++)
            e[t] = 1;
        end(label, e, fit(made, k));
    }

    static void strings(String label) {
        char[] chars = new char[5000]; // far from 4711: its byte[] is no marker array
        for (int i = 0; i < chars.length; i++)
            chars[i] = (char) ('a' + i % 26);
        keep.add(new String(chars)); // any first-use work happens here
        Object[] made = new Object[29];
        int[] e = none();
        begin();
        for (int i = 0; i < 29; i++)
            made[i] = new String(chars);
        e[STRING] = 29;
        end(label, e, fit(made, 29));
    }

    public static void main(String[] args) throws Exception {
        System.load(System.getProperty("agent.lib"));
        setup(C_Marker.class);
        // Main first, with well over 512 KB of markers (the JDK 17 sampling
        // trap hides about the first 512 KB of main's allocations).
        newMarkers("new", 60000);
        primArrays("newarray", 3);
        markerArrays("anewarray", 11);
        multiArrays("multianewarray");
        clones("clone");
        reflection("reflection");
        jni("jni");
        strings("strings");
        Throwable[] failed = new Throwable[1];
        Thread w = new Thread(() -> {
            try {
                newMarkers("worker-new", 30000);
                primArrays("worker-newarray", 2);
                jni("worker-jni");
            } catch (Throwable t) {
                failed[0] = t;
            }
        }, "c-alloc-worker");
        w.start();
        w.join();
        if (failed[0] != null)
            throw new RuntimeException(failed[0]);
        newMarkers("new-again", 5000);
        System.out.println("C_Alloc done, kept " + keep.size());
    }
}
