/*
 * D_Jit - driven by tests/agents/d_jit.c (its natives live there); run with
 * -Xbatch, so that a method is compiled, on the calling thread, as soon as
 * it gets hot: hotBefore is certainly compiled before the agent enables
 * COMPILED_METHOD_LOAD, and the only way the agent can learn of it is the
 * replay.  (-Xcomp would compile every method at its first call: slow, and
 * nothing would be left to compile after the enable.)
 */
import java.io.InputStream;

public class D_Jit {
    static native void enableCompiledEvents();
    static native boolean seen(String name);

    static int hotBefore(int x) {
        int r = x;
        r = r * 31 + 7;
        r ^= r >>> 11;
        return r;
    }

    static int hotAfter(int x) {
        int r = x;
        r = r * 17 + 3;
        r ^= r >>> 13;
        return r;
    }

    /* Loads D_JitVictim from the class path's bytes, not through the parent. */
    static final class OwnLoader extends ClassLoader {
        OwnLoader() { super(D_Jit.class.getClassLoader()); }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals("D_JitVictim")) {
                return super.loadClass(name, resolve);
            }
            try (InputStream in = getParent().getResourceAsStream("D_JitVictim.class")) {
                java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
                byte[] chunk = new byte[8192];
                for (int n; (n = in.read(chunk)) > 0; )
                    buf.write(chunk, 0, n);
                byte[] b = buf.toByteArray();
                return defineClass(name, b, 0, b.length);
            } catch (java.io.IOException e) {
                throw new ClassNotFoundException(name, e);
            }
        }
    }

    static long runVictim() throws Exception {
        Class<?> c = new OwnLoader().loadClass("D_JitVictim");
        java.lang.reflect.Method m = c.getMethod("spin", int.class);
        long s = 0;
        for (int i = 0; i < 30000; i++) s += (Integer) m.invoke(null, i);
        return s;
    }

    public static void main(String[] args) throws Exception {
        System.load(System.getProperty("agent.lib"));
        long sum = 0;
        for (int i = 0; i < 200000; i++) sum += hotBefore(i);
        enableCompiledEvents();
        long until = System.currentTimeMillis() + 20000;
        while (!seen("hotAfter") && System.currentTimeMillis() < until) {
            for (int i = 0; i < 20000; i++) sum += hotAfter(i);
            Thread.sleep(10);
        }
        sum += runVictim();
        until = System.currentTimeMillis() + 20000;
        while (!seen("spin-unloaded") && System.currentTimeMillis() < until) {
            System.gc();
            Thread.sleep(50);
        }
        System.out.println("D_Jit: hotAfter=" + seen("hotAfter") + " spin=" + seen("spin") + " unloaded="
                           + seen("spin-unloaded") + " sum=" + sum);
    }
}
