import java.lang.ref.WeakReference;
import java.net.URL;
import java.net.URLClassLoader;

// Test program for it_classtrace.sh: its shape (3 methods, 1 static and
// 1 instance field, 1 interface, a named worker thread) is what the test checks.
// With the argument "unload" it also loads CtHello$Gone through a class loader
// of its own, drops both and collects until the class is gone.
public class CtHello implements Runnable {
    static int runs;
    private final String greeting;

    CtHello(String greeting) {
        this.greeting = greeting;
    }

    public void run() {
        runs++;
        System.out.println(greeting + " " + runs);
    }

    public static void main(String[] args) throws Exception {
        Thread worker = new Thread(new CtHello("hello from"), "ct-worker");
        worker.start();
        worker.join();
        if (args.length > 0 && args[0].equals("unload")) {
            URL here = CtHello.class.getProtectionDomain().getCodeSource().getLocation();
            URLClassLoader loader = new URLClassLoader(new URL[] {here}, null);
            // Initialized, not only loaded: the layer reports a class once
            // it is prepared (JVM TI ClassPrepare), as it has no methods before.
            WeakReference<Class<?>> gone = new WeakReference<>(Class.forName("CtHello$Gone", true, loader));
            loader.close();
            loader = null;
            for (int i = 0; i < 200 && gone.get() != null; i++) {
                System.gc();
                Thread.sleep(50);
            }
            // The unload event follows the collection that freed the class:
            // a few more give it time to arrive before the VM shuts down.
            for (int i = 0; i < 3; i++) {
                System.gc();
                Thread.sleep(100);
            }
            System.out.println(gone.get() == null ? "unloaded" : "still loaded");
        }
        System.out.println("done");
    }

    static class Gone {
    }
}
