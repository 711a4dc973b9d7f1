import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path; import java.nio.file.Paths;

/**
 * Usage: A_Unload AGENT_FILE.  Loads A_UnloadMe three times, each through a
 * new URLClassLoader with no parent (so the class comes from this loader,
 * not the application loader), drops every reference, then runs
 * System.gc() until the agent's file shows "UNLOADED A_UnloadMe" (up to
 * 60 s).  Exit code 2 on a timeout.
 */
public class A_Unload {
    static String useOnce(URL where) throws Exception {
        try (URLClassLoader loader = new URLClassLoader(new URL[] {where}, null)) {
            Class<?> c = loader.loadClass("A_UnloadMe");
            if (c.getClassLoader() != loader)
                throw new IllegalStateException("A_UnloadMe came from " + c.getClassLoader());
            return c.getDeclaredConstructor().newInstance().toString();
        }
    }

    static boolean unloadSeen(Path p) throws Exception {
        return Files.exists(p) && Files.readAllLines(p).stream().anyMatch(l -> l.startsWith("UNLOADED A_UnloadMe "));
    }

    public static void main(String[] args) throws Exception {
        Path file = Paths.get(args[0]);
        URL where = A_Unload.class.getProtectionDomain().getCodeSource().getLocation();
        for (int i = 0; i < 3; i++)
            System.out.println(useOnce(where));
        long deadline = System.nanoTime() + 60_000_000_000L;
        int gcs = 0;
        while (!unloadSeen(file) && System.nanoTime() < deadline) {
            System.gc();
            gcs++;
            Thread.sleep(200);
        }
        if (!unloadSeen(file)) {
            System.out.println("TIMEOUT: no CLASS_UNLOAD of A_UnloadMe after " + gcs + " System.gc() calls");
            System.exit(2);
        }
        System.out.println("unload seen after " + gcs + " System.gc() calls");
    }
}
