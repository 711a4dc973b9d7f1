import java.lang.reflect.Array;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Workload of e_recurse (tests/agents/e_recurse.c): arrays of references
 * made while their element classes are loaded but not linked (no instance
 * made, no static touched), so that the array's OBJECT_ALLOC must name a
 * class the VM has not prepared yet:
 *  - E_RcMarker[] (new), before any E_RcMarker exists;
 *  - E_RcDeep[][] (new), whose element class is E_RcDeep[];
 *  - E_RcShape[] (new), an interface's;
 *  - an array of a hidden class (VM-anonymous before Java 15: E_Hidden);
 *  - an array of a JDK class loaded from the CDS archive, not linked
 *    (Class.forName with initialize=false; the class name is args[0]).
 * They are kept in statics, so that a heap dump taken later has them.
 * Usage: E_Recurse CDS_CLASS [GO_FILE]: with GO_FILE, prints "E_Recurse
 * ready" once the arrays are made and waits (up to 60 s) until GO_FILE
 * exists, so that a test can send SIGQUIT then.  Then makes an E_RcMarker
 * and prints "E_Recurse done".
 */
public class E_Recurse {
    static Object keepMarkers, keepDeep, keepShapes, keepHidden, keepShared;

    public static void main(String[] args) throws Exception {
        keepMarkers = new E_RcMarker[4];
        keepDeep = new E_RcDeep[2][3];
        keepShapes = new E_RcShape[5];
        Class<?> hidden = E_Hidden.define(E_Recurse.class, "E_RcHidden", false);
        keepHidden = Array.newInstance(hidden, 3);
        keepShared = Array.newInstance(Class.forName(args[0], false, null), 2);
        System.out.println("E_Recurse arrays made");
        if (args.length > 1) {
            System.out.println("E_Recurse ready");
            System.out.flush();
            Path go = Paths.get(args[1]);
            for (int i = 0; i < 600 && !Files.exists(go); i++)
                Thread.sleep(100);
        }
        ((E_RcMarker[]) keepMarkers)[0] = new E_RcMarker();
        System.out.println("E_Recurse done " + E_RcMarker.made);
    }
}

class E_RcMarker {
    static int made;

    E_RcMarker() {
        made++;
    }
}

class E_RcDeep {
    int depth;
}

interface E_RcShape {
    int corners();
}

class E_RcHidden {
    long value;
}
