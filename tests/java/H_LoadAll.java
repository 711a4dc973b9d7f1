import java.net.URI;
import java.nio.file.*;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

/*
 * Loads and links every class of the modules named in its arguments, so that
 * the verifier (-Xverify:all) checks each one as the class rewriter left it.
 * JDK 8 has no modules: there an argument ending in ".jar" names a jar (rt.jar,
 * tools.jar) and one ending in "/" a package prefix, and the classes taken are
 * those of the jars under one of the prefixes (all, when none is given).
 * Class.forName with initialize=true is what links a class; an initializer
 * that fails is no concern here, a VerifyError or ClassFormatError is.
 */
public class H_LoadAll {
    public static void main(String[] args) throws Exception {
        List<Path> roots = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        for (String a : args) {
            if (a.endsWith("/")) {
                prefixes.add(a);
            } else if (a.endsWith(".jar")) {
                URI jar = URI.create("jar:" + Paths.get(a).toUri());
                roots.add(FileSystems.newFileSystem(jar, Collections.<String, Object>emptyMap()).getPath("/"));
            } else {
                FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
                roots.add(jrt.getPath("/modules/" + a));
            }
        }
        int ok = 0, bad = 0, other = 0;
        for (Path root : roots) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path p : (Iterable<Path>) files::iterator) {
                    String name = root.relativize(p).toString();
                    if (!name.endsWith(".class") || name.endsWith("module-info.class")) continue;
                    if (!prefixes.isEmpty() && !prefixes.stream().anyMatch(name::startsWith)) continue;
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
