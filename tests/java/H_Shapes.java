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
 * the property agent.lib): static, instance, and one that throws.
 */
public class H_Shapes {
    static int seed;
    static { seed = 3; }

    final int v;
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
