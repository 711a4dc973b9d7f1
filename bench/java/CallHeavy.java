/*
 * CallHeavy - a call-heavy workload for bench/methods.sh: recursion, static
 * and interface calls, small methods, little allocation.
 *
 *   java CallHeavy [rounds]      (default 20)
 *
 * Prints "CallHeavy: calls=N result=R": the number of Java calls it made
 * itself (what a method-entry counter must see at least).
 */
public class CallHeavy {
    interface Op { int apply(int x); }
    static final class Add implements Op { public int apply(int x) { return x + 3; } }
    static final class Mul implements Op { public int apply(int x) { return x * 5; } }
    static final class Xor implements Op { public int apply(int x) { return x ^ 0x55; } }

    static long calls;

    static int fib(int n) {
        calls++;
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    static int chain(Op[] ops, int x) {
        for (int i = 0; i < 1000; i++) {
            x = ops[i % ops.length].apply(x);
        }
        calls += 1001;
        return x;
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        Op[] ops = {new Add(), new Mul(), new Xor()};
        long result = 0;
        for (int r = 0; r < rounds; r++) {
            result += fib(24);
            for (int k = 0; k < 200; k++) {
                result += chain(ops, k + r);
            }
        }
        System.out.println("CallHeavy: calls=" + calls + " result=" + result);
    }
}
