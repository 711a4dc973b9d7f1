import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Method;

/**
 * A class no loader can find by name, for the e_* workloads: a hidden class
 * where the JDK has them (Lookup.defineHiddenClass, Java 15 on), else a
 * VM-anonymous class (Unsafe.defineAnonymousClass, JDK 8 to 16), which is
 * what JDK 8 makes of every lambda.  Either is named after the class whose
 * bytes it is defined from, then '/' and a suffix.  Reached by reflection,
 * so that the workloads compile for Java 8.
 */
final class E_Hidden {
    private E_Hidden() {}

    static Class<?> define(Class<?> host, String name, boolean initialize) throws Exception {
        byte[] bytes = bytesOf(host, name + ".class");
        Class<?> option;
        try {
            option = Class.forName("java.lang.invoke.MethodHandles$Lookup$ClassOption");
        } catch (ClassNotFoundException e) {
            return anonymous(host, bytes, initialize);
        }
        Object none = Array.newInstance(option, 0);
        Method define = MethodHandles.Lookup.class.getMethod("defineHiddenClass", byte[].class, boolean.class,
                none.getClass());
        MethodHandles.Lookup lookup = (MethodHandles.Lookup) define.invoke(MethodHandles.lookup(), bytes, initialize, none);
        return lookup.lookupClass();
    }

    private static Class<?> anonymous(Class<?> host, byte[] bytes, boolean initialize) throws Exception {
        Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
        Field the = unsafeClass.getDeclaredField("theUnsafe");
        the.setAccessible(true);
        Object unsafe = the.get(null);
        Class<?> c = (Class<?>) unsafeClass.getMethod("defineAnonymousClass", Class.class, byte[].class, Object[].class)
                .invoke(unsafe, host, bytes, null);
        if (initialize) {
            unsafeClass.getMethod("ensureClassInitialized", Class.class).invoke(unsafe, c);
        }
        return c;
    }

    /* InputStream.readAllBytes is Java 9's. */
    static byte[] bytesOf(Class<?> near, String resource) throws IOException {
        try (InputStream in = near.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("no resource " + resource);
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) > 0;) {
                out.write(buf, 0, n);
            }
            return out.toByteArray();
        }
    }
}
