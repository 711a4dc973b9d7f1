/*
 * Allocation traces through constructors (it_hprof_ascii.sh): each H_CSub
 * is made in main (line 12), its constructors chaining H_CSub -> H_CBase ->
 * Object; each H_CBase constructor makes an H_CPart (line 21), whose trace
 * starts there, in the constructor of another object.  Keep the lines.
 */
public class H_Ctors {
    static Object[] keep = new Object[500];

    public static void main(String[] args) {
        for (int i = 0; i < keep.length; i++) {
            keep[i] = new H_CSub(i);
        }
        System.out.println("H_Ctors done " + keep.length);
    }
}

class H_CBase {
    H_CPart part;

    H_CBase() { part = new H_CPart(); }
}

class H_CSub extends H_CBase {
    int n;

    H_CSub(int n) {
        this.n = n;
    }
}

class H_CPart {
}
