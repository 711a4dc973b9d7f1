/**
 * The marker class of the heap and GC tests (c_* agents): they learn its class
 * ID from CLASS_LOAD "C_Marker" and count OBJECT_ALLOC / OBJECT_FREE of it.
 * One int field, so an instance is 16 bytes on 64-bit HotSpot.
 */
public class C_Marker implements Cloneable {
    int v;

    public C_Marker() {
    }

    public C_Marker(int v) {
        this.v = v;
    }

    @Override
    public C_Marker clone() {
        try {
            return (C_Marker) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError(e);
        }
    }
}
