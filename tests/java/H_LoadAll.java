import java.nio.file.*;

/*
 * Loads and links every class of the modules named in its arguments, so that
 * the verifier (-Xverify:all) checks each one as the class rewriter left it.
 * Class.forName with initialize=true is what links a class; an initializer
 * that fails is no concern here, a VerifyError or ClassFormatError is.
 */
public class H_LoadAll {
    public static void main(String[] args) throws Exception {
        FileSystem jrt = FileSystems.getFileSystem(java.net.URI.create("jrt:/"));
        int ok = 0, bad = 0, other = 0;
        for (String module : args) {
            Path root = jrt.getPath("/modules/" + module);
            try (var files = Files.walk(root)) {
                for (Path p : (Iterable<Path>) files::iterator) {
                    String name = root.relativize(p).toString();
                    if (!name.endsWith(".class") || name.endsWith("module-info.class")) continue;
                    String cn = name.substring(0, name.length() - 6).replace('/', '.');
                    try {
                        Class.forName(cn, true, ClassLoader.getSystemClassLoader());
                        ok++;
                    } catch (VerifyError | ClassFormatError e) {
                        bad++;
                        System.out.println("BAD " + cn + ": " + e);
                    } catch (Throwable t) {
                        other++;
                    }
                }
            }
        }
        System.out.println("H_LoadAll: linked=" + ok + " rejected=" + bad + " other=" + other);
    }
}
