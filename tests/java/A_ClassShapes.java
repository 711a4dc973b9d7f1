import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Classes of a known shape for it_a_classload.sh, and their reflection view.
 *
 * Usage: A_ClassShapes OUTFILE.  Writes one line per fact, in the format the
 * a_classload agent uses for its CLASS_LOAD view:
 *   class SOURCE file | INTERFACES n | METHOD name descriptor |
 *   STATIC name descriptor | INSTANCE name descriptor
 * Constructors are listed as METHOD &lt;init&gt;, as JVMPI lists them.
 * Reflection cannot see static initializers, so &lt;clinit&gt; never appears
 * here while JVMPI lists it; the script accounts for that.
 */
public class A_ClassShapes {
    static final Class<?>[] SHAPES = {
        A_ClassShapes.class, A_ClassShapes.Nested.class, A_ClassShapes.Inner.class,
        A_Shape.class, A_ShapeBase.class, A_ShapeOne.class, A_ShapeTwo.class, A_ShapeMark.class,
    };

    static class Nested {
        static Map<String, Integer> cache = new HashMap<>();
        int[] values;
        static String src() { return new Throwable().getStackTrace()[0].getFileName(); }
    }

    /* No src(): an inner class may have static methods from Java 16 on
     * only, and the test programs run on Java 8 too (describe). */
    class Inner {
        String text = "inner";
    }

    static String src() { return new Throwable().getStackTrace()[0].getFileName(); }

    public static void main(String[] args) throws Exception {
        A_Shape s = new A_Shape(3);
        long total = s.compute(4) + s.area(2) + s.one() + s.two("x").length() + s.twice(5);
        total += new A_ClassShapes().new Inner().text.length();
        System.out.println("total=" + total);

        List<String> lines = new ArrayList<>();
        for (Class<?> c : SHAPES)
            describe(c, lines);
        Files.write(Paths.get(args[0]), lines);
    }

    static String descriptor(Class<?> ret, Class<?>[] params) {
        return MethodType.methodType(ret, params).toMethodDescriptorString();
    }

    /* A field type's descriptor: "()T" less its "()" (Class.descriptorString
     * is Java 12's). */
    static String descriptor(Class<?> type) {
        return descriptor(type, new Class<?>[0]).substring(2);
    }

    /* The source file a class's own code reports, or, for a class without a
     * src() of its own, its enclosing class's. */
    static Object sourceOf(Class<?> c) throws Exception {
        try {
            return c.getDeclaredMethod("src").invoke(null);
        } catch (NoSuchMethodException e) {
            return sourceOf(c.getEnclosingClass());
        }
    }

    static void describe(Class<?> c, List<String> out) throws Exception {
        String n = c.getName();
        out.add(n + " SOURCE " + sourceOf(c));
        out.add(n + " INTERFACES " + c.getInterfaces().length);
        for (Constructor<?> k : c.getDeclaredConstructors())
            out.add(n + " METHOD <init> " + descriptor(void.class, k.getParameterTypes()));
        for (Method m : c.getDeclaredMethods())
            out.add(n + " METHOD " + m.getName() + " " + descriptor(m.getReturnType(), m.getParameterTypes()));
        for (Field f : c.getDeclaredFields())
            out.add(n + (Modifier.isStatic(f.getModifiers()) ? " STATIC " : " INSTANCE ")
                    + f.getName() + " " + descriptor(f.getType()));
    }
}

/* A marker super-interface: A_ShapeTwo extends it, so a class implementing
 * A_ShapeTwo has it among all its interfaces but not its direct ones. */
interface A_ShapeMark {
    static String src() { return new Throwable().getStackTrace()[0].getFileName(); }
}

/* Only a compile-time constant: no static initializer, so no <clinit>. */
interface A_ShapeOne {
    int ONE_CONST = 1;
    int one();
    static String src() { return new Throwable().getStackTrace()[0].getFileName(); }
}

interface A_ShapeTwo extends A_ShapeMark {
    String two(String s);
    default long twice(long v) { return v * 2; }
    static String src() { return new Throwable().getStackTrace()[0].getFileName(); }
}

abstract class A_ShapeBase implements A_ShapeOne {
    protected double baseValue = 1.5;
    abstract long area(int scale);
    static String src() { return new Throwable().getStackTrace()[0].getFileName(); }
}

/* Direct interfaces: A_ShapeOne (again; the superclass has it too) and
 * A_ShapeTwo.  All interfaces: three. */
class A_Shape extends A_ShapeBase implements A_ShapeOne, A_ShapeTwo {
    static int counter;
    static final String LABEL;
    static final long[] TABLE = {1, 2, 3};
    private int size;
    String name;
    List<String> tags = new ArrayList<>();
    Object[][] grid;
    boolean flag;
    char ch;
    byte by;
    short sh;
    float fl;
    double db;
    long lg;

    static {
        counter = 10;
        LABEL = "shape-" + counter;
    }

    A_Shape(int size) {
        this.size = size;
        this.name = "s" + size;
    }

    A_Shape() {
        this(1);
    }

    public int one() { return ONE_CONST; }

    public String two(String s) { return s + s; }

    long area(int scale) { return (long) size * size * scale; }

    int compute(int x) {
        int y = x * size; // A-FIRST-LINE
        y += counter;
        String t = LABEL + y;
        y += t.length() + (int) TABLE[1];
        return y; // A-LAST-LINE
    }

    synchronized void touch(String tag, int[][] where, Object o) { tags.add(tag); }

    static String src() { return new Throwable().getStackTrace()[0].getFileName(); }
}
