/**
 * Loaded only through throw-away class loaders by A_Unload (which never
 * names it in code, so the application loader never loads it).
 */
public class A_UnloadMe {
    static int loads = 7;
    int value = 3;

    @Override
    public String toString() {
        return "A_UnloadMe " + (value * loads);
    }
}
