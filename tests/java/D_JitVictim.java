/*
 * D_JitVictim - loaded by D_Jit through a class loader of its own, made hot
 * (so compiled), then left to be unloaded with its loader: its compiled
 * code goes with it (COMPILED_METHOD_UNLOAD).
 */
public class D_JitVictim {
    public static int spin(int x) {
        int r = x;
        r = r * 13 + 5;
        return r ^ (r >>> 7);
    }
}
