/**
 * For the a_hook agent: prints a string constant that lives only in
 * A_HookTarget's constant pool (a method's literal, not a static final
 * field, so javac does not copy it into this class).
 */
public class A_Hook {
    public static void main(String[] args) {
        System.out.println("text=" + A_HookTarget.text());
    }
}

class A_HookTarget {
    static String text() {
        return "ORIGINAL-MARK";
    }
}
