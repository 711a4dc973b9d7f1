import java.nio.file.Files;
import java.nio.file.Path; import java.nio.file.Paths;

/**
 * Usage: A_Quit AGENT_FILE N.  Sends itself SIGQUIT N times; after each it
 * waits (up to 30 s) until the agent's file shows one more
 * "DATA_DUMP_REQUEST" line, so signals never coalesce.  Exit code 2 on a
 * timeout.
 */
public class A_Quit {
    static long seen(Path p) throws Exception {
        if (!Files.exists(p))
            return 0;
        return Files.readAllLines(p).stream().filter(l -> l.startsWith("DATA_DUMP_REQUEST ")).count();
    }

    public static void main(String[] args) throws Exception {
        Path file = Paths.get(args[0]);
        int n = Integer.parseInt(args[1]);
        long pid = Long.parseLong(new java.io.File("/proc/self").getCanonicalFile().getName());
        for (int i = 1; i <= n; i++) {
            int rc = new ProcessBuilder("kill", "-QUIT", Long.toString(pid)).inheritIO().start().waitFor();
            if (rc != 0)
                throw new IllegalStateException("kill exited " + rc);
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (seen(file) < i && System.nanoTime() < deadline)
                Thread.sleep(50);
            if (seen(file) < i) {
                System.out.println("TIMEOUT waiting for DATA_DUMP_REQUEST " + i);
                System.exit(2);
            }
            System.out.println("seen " + i);
        }
        System.out.println("quit done");
    }
}
