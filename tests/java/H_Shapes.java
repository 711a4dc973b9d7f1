import java.util.function.IntUnaryOperator;

/*
 * The shapes of calls whose METHOD_ENTRY2/METHOD_EXIT the class rewriter must
 * report as JVM TI's method events do (it_h_compare.sh): recursion, an
 * exception thrown through several frames and caught, one that escapes a
 * thread's run() and, with an argument, one that escapes main; synchronized
 * methods, constructors (one calling another), class initializers, a lambda
 * and a method reference (invokedynamic), string concatenation
 * (invokedynamic), a bridge method, methods of bootstrap classes, and native
 * methods (the h_trace agent's library holds them, loaded from the path in
 * the property agent.lib): static, instance, and one that throws.  And
 * leaves, whose entry and exit the rewriter reports from one call (a
 * getter, a setter, a static's getter, forward branches, a JDK getter),
 * beside methods as small that are no leaves (a division, an array, another
 * object's field, a loop, a string, two lines): test_inject checks which is
 * which.
 */
public class H_Shapes {
    static int seed;
    static { seed = 3; }

    final int v;
    int w;
    H_Shapes(int v) { super(); this.v = v; }
    H_Shapes() { this(seed + 4); }

    interface Maker<T> { T make(T x); }
    static class Box implements Maker<String> {
        public String make(String x) { return x + "!"; } /* javac adds the bridge make(Object) */
    }
    static class Lazy {
        static final int K;
        static { K = fact(4); }
        int get() { return K; }
    }

    static int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
    static void thrower(int n) { if (n == 0) throw new IllegalStateException("deep"); thrower(n - 1); }
    static int catcher() { try { thrower(3); return 0; } catch (IllegalStateException e) { return 1; } }
    static synchronized int syncStatic(int x) { return x + 1; }
    synchronized int syncInstance(int x) { return x * v; }
    static void helper() { seed++; }
    static native int twice(int x);
    native long mix(long a, double b, String s);
    static native void raise(String message);
    static void dies() { thrower(2); }

    int getV() { return v; }
    void setW(int w) { this.w = w; }
    static int getSeed() { return seed; }
    static int max(int a, int b) { return a >= b ? a : b; }
    static int div(int a, int b) { return a / b; }
    static int first(int[] a) { return a[0]; }
    int otherV(H_Shapes o) { return o.v; }
    static int loop(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }
    static String name() { return "n"; }
    int twoLines(int x) {
        int y = x + w;
        return y;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void main(String[] args) throws Exception {
        int sum = fact(6) + catcher() + syncStatic(1) + new H_Shapes().syncInstance(2);
        Maker raw = new Box();
        sum += ((String) raw.make("x")).length();
        IntUnaryOperator f = x -> x + seed;
        sum += f.applyAsInt(1);
        Runnable r = H_Shapes::helper;
        r.run();
        String cat = "n" + sum + seed;
        /* java.lang.Short: a bootstrap class the VM loads before VM init, which
         * the JDK's own code (string concatenation, class loading) leaves alone */
        sum += Short.valueOf((short) 1000).hashCode() + Short.parseShort("42") + cat.length();
        sum += new Lazy().get();
        H_Shapes h = new H_Shapes(5);
        h.setW(h.getV() + getSeed());
        sum += max(h.w, 3) + max(1, h.w) + div(9, 2) + first(new int[] {7}) + h.otherV(h) + loop(4) +
               name().length() + h.twoLines(1) + Short.valueOf((short) 300).shortValue();
        System.load(System.getProperty("agent.lib"));
        sum += twice(21) + (int) new H_Shapes(2).mix(5L, 2.5, "abc");
        try { raise("from native"); } catch (IllegalArgumentException e) { sum++; }
        Thread t = new Thread(H_Shapes::dies, "h-dies");
        t.setUncaughtExceptionHandler((th, e) -> seed--);
        t.start();
        t.join();
        System.out.println("H_Shapes: sum=" + sum);
        if (args.length > 0) {
            thrower(1);
        }
    }
}
