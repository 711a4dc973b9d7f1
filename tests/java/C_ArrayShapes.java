/*
 * Array allocations in the shapes the rewriter's array hooks must keep
 * right (tests/unit/test_arrays.c): a branch to the instruction right after
 * one, one inside a try whose handler allocates another, one of each kind
 * (newarray, anewarray, multianewarray).  Run, it prints how many arrays it
 * made and their total length.
 */
public class C_ArrayShapes {
    static int[] pick(boolean big) {
        int[] a = big ? new int[100] : new int[1];
        return a;
    }

    static Object guarded(int n) {
        try {
            return new long[n];
        } catch (NegativeArraySizeException e) {
            return new byte[0];
        }
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        long length = 0;
        int arrays = 0;
        for (int i = 0; i < rounds; i++) {
            length += pick(i % 2 == 0).length;
            length += ((long[]) guarded(i % 5)).length;
            String[][] grid = new String[2][3];
            length += grid.length + grid[0].length + grid[1].length;
            arrays += 5;
        }
        length += ((byte[]) guarded(-1)).length;
        arrays++;
        System.out.println("C_ArrayShapes arrays=" + arrays + " length=" + length);
    }
}
