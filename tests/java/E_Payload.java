/**
 * Loaded only by E_LateArrays's throw-away class loader (never named in its
 * code, so the application loader never loads it): its class, and the array
 * classes it makes of itself, belong to that loader and unload with it.
 */
public class E_Payload implements Runnable {
    static E_Payload[] all = new E_Payload[4];
    E_Payload[][] grid = new E_Payload[2][2];
    int value;

    @Override
    public void run() {
        for (int i = 0; i < 16; i++) {
            E_Payload p = new E_Payload();
            p.value = i;
            all[i % all.length] = p;
            grid[i % 2][(i / 2) % 2] = p;
        }
        Object rows = java.lang.reflect.Array.newInstance(E_Payload[].class, 3);
        java.lang.reflect.Array.set(rows, 0, all);
        synchronized (E_Payload.class) {
            value = java.lang.reflect.Array.getLength(rows) + all.length;
        }
    }

    @Override
    public String toString() {
        return "E_Payload ".concat(Integer.toString(value));
    }
}
