/**
 * Allocates for the given number of milliseconds, keeping the last 20,000
 * objects alive in a ring so that each dies a while after it was made
 * (often after the agent has switched OBJECT_ALLOC again).
 */
public class C_AllocSwitch {
    public static void main(String[] args) {
        long until = System.currentTimeMillis() + Long.parseLong(args[0]);
        Object[] ring = new Object[20_000];
        long made = 0;
        while (System.currentTimeMillis() < until) {
            for (int i = 0; i < 1000; i++) {
                ring[(int) (made++ % ring.length)] = new int[8];
            }
        }
        System.out.println("C_AllocSwitch done: " + made + " objects");
    }
}
