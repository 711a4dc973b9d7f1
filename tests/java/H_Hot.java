/**
 * A known hot method for cpu=samples and cpu=times: main calls H_Hot.spin
 * over and over for SECONDS seconds (default 2), and H_Hot.cold, a cheap
 * method, as often.  spin's loop is on one line, so every sample in spin has
 * the same line and trace.  Prints the number of spin calls at the end.
 * Usage: H_Hot [SECONDS]
 */
public class H_Hot {
    static long sink;

    static long spin(int n) {
        long x = 0;
        for (int i = 0; i < n; i++) { x = x * 31 + (i ^ (x >>> 7)); }
        return x;
    }

    static long cold(int n) {
        return n * 7L + 1;
    }

    public static void main(String[] args) {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2.0;
        long end = System.nanoTime() + (long) (secs * 1e9);
        long calls = 0;
        while (System.nanoTime() < end) {
            sink += spin(200_000);
            sink += cold((int) calls);
            calls++;
        }
        System.out.println("H_Hot done spin calls=" + calls + " sink=" + sink);
    }
}
