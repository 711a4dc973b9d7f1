import java.nio.file.Files;
import java.nio.file.Path; import java.nio.file.Paths;

// A plain main class for the part-B tests whose agent does the work.
// "B_Main start" and "B_Main end" show whether the program ran and finished.
// Arguments:
//   --wait-for FILE    wait (up to 60 s) until the agent creates FILE;
//                      exit code 3 when it never appears
public class B_Main {
    public static void main(String[] args) throws Exception {
        System.out.println("B_Main start");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--wait-for": {
                    Path p = Paths.get(args[++i]);
                    long end = System.currentTimeMillis() + 60_000;
                    while (!Files.exists(p)) {
                        if (System.currentTimeMillis() > end) {
                            System.out.println("B_Main timeout waiting for " + p);
                            System.exit(3);
                        }
                        Thread.sleep(20);
                    }
                    break;
                }
                default:
                    System.out.println("B_Main: unknown argument " + args[i]);
                    System.exit(2);
            }
        }
        System.out.println("B_Main end");
    }
}
