/*
 * J_Cov - the program that the j_cov coverage agent measures
 * (it_j_cov.sh compiles it with javac -Xjcov -g, as jcov's users compiled
 * theirs).  The marks in comments say how often what starts on their line
 * runs, from the program's logic alone:
 *   #S n     each statement that starts on this line, n times
 *   #B t f   the condition on this line, true t times and false f times
 *   #C m n   method m, n calls
 */
public class J_Cov {
    static int evens, odds, caught;
    private final int k;

    J_Cov(int k) {                                  //#C <init> 3
        this.k = k;                                 //#S 3
    }

    int twice() {                                   //#C twice 3
        return k * 2;                               //#S 3
    }

    /* n = 10, then 5: 15 trips, i even 5 + 3 times, odd 5 + 2 */
    static void loop(int n) {                       //#C loop 2
        for (int i = 0; i < n; i++) {               //#B 15 2
            if (i % 2 == 0)                         //#S 15 #B 8 7
                evens++;                            //#S 8
            else
                odds++;                             //#S 7
        }
    }

    static String pick(int v) {                     //#C pick 4
        switch (v) {                                //#S 4
        case 1:
            return "one";                           //#S 1
        case 2:
            return "two";                           //#S 2
        default:
            return "many";                          //#S 1
        }
    }

    static int div(int a, int b) {                  //#C div 3
        return a / b;                               //#S 3
    }

    static int never(int x) {                       //#C never 0
        int y = x * 2;                              //#S 0
        return y + 1;                               //#S 0
    }

    public static void main(String[] args) {        //#C main 1
        loop(10);                                   //#S 1
        loop(5);                                    //#S 1
        String s = pick(1) + pick(2) + pick(2) + pick(9); //#S 1
        int sum = 0;                                //#S 1
        /* d = 2, 1, 0: the last divides by zero */
        for (int d = 2; d >= 0; d--) {              //#B 3 1
            try {
                sum += div(12, d);                  //#S 3
            } catch (ArithmeticException e) {
                caught++;                           //#S 1
            }
        }
        /* w = 0, 1, 2 make objects whose twice() is 0, 2, 4 */
        int w = 0;                                  //#S 1
        while (w < 4) {                             //#B 3 1
            w += new J_Cov(w).twice() > 2 ? 2 : 1;  //#S 3 #B 1 2
        }
        String counts = "evens=" + evens + " odds=" + odds + " caught=" + caught; //#S 1
        System.out.println("J_Cov: " + counts + " sum=" + sum + " " + s + " w=" + w); //#S 1
    }
}
