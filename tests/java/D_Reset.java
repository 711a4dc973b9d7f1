/*
 * D_Reset - driven by tests/agents/d_reset.c and it_d_reset.sh: says it is
 * ready (the agent has enabled DATA_RESET_REQUEST in JVM_OnLoad), then waits
 * until the agent has seen as many resets as the script sends (SIGUSR1).
 */
public class D_Reset {
    static native int resets();

    public static void main(String[] args) throws Exception {
        System.load(System.getProperty("agent.lib"));
        int want = Integer.parseInt(args[0]);
        System.out.println("D_Reset: ready pid=" + Long.parseLong(new java.io.File("/proc/self").getCanonicalFile().getName()));
        long until = System.currentTimeMillis() + 30000;
        while (resets() < want && System.currentTimeMillis() < until) {
            Thread.sleep(20);
        }
        System.out.println("D_Reset: resets=" + resets());
    }
}
