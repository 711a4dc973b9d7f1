import java.io.InputStream;

/*
 * Defines copies of a small class that a later JDK might have written: one
 * whose class file version is far past any JDK's, and copies whose first
 * constant has a tag no class file has (21, twice, and 22).  Each is refused
 * by the VM (the version, the tag), after the layer's class rewriter has
 * seen it; what the layer says of them is the test's.
 */
public class H_Unknown {
    static class Shape {
        int area(int w, int h) { return w * h; }
    }

    static class Loader extends ClassLoader {
        Class<?> define(String name, byte[] b) { return defineClass(name, b, 0, b.length); }
    }

    static void tryDefine(String name, byte[] b) {
        try {
            new Loader().define(name, b);
            System.out.println(name + ": defined");
        } catch (LinkageError e) {
            System.out.println(name + ": " + e.getClass().getSimpleName());
        }
    }

    public static void main(String[] args) throws Exception {
        byte[] orig;
        try (InputStream in = H_Unknown.class.getResourceAsStream("H_Unknown$Shape.class")) {
            orig = in.readAllBytes();
        }
        byte[] newer = orig.clone();
        newer[6] = 0;
        newer[7] = (byte) 200;
        tryDefine("H_Unknown$Shape", newer);
        // the first constant's tag is always at offset 10
        for (int tag : new int[] {21, 21, 22}) {
            byte[] b = orig.clone();
            b[10] = (byte) tag;
            tryDefine("H_Unknown$Shape", b);
        }
    }
}
