/*
 * D_Instr - driven by tests/agents/d_instr.c: INSTRUCTION_START is on only
 * between start() and stop(), around calls of branchy whose bytecodes and
 * branches the agent knows (the expected sequence, from javap, is in the
 * agent).
 */
public class D_Instr {
    static native void start();
    static native void stop();

    static int branchy(int x) {
        int r = 0;
        if (x > 0) {
            r += 1;
        }
        switch (x) {
        case 1: r += 10; break;
        case 2: r += 20; break;
        case 3: r += 30; break;
        default: r += 40;
        }
        switch (x) {
        case 10: r += 100; break;
        case 1000: r += 200; break;
        default: r += 300;
        }
        return r;
    }

    public static void main(String[] args) {
        System.load(System.getProperty("agent.lib"));
        int[] xs = {0, 2, 1000, 7};
        int sum = 0;
        start();
        for (int x : xs) {
            sum += branchy(x);
        }
        stop();
        System.out.println("D_Instr: sum=" + sum);
    }
}
