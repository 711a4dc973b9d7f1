import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Walks a binary HPROF file ("JAVA PROFILE 1.0.1") record by record, written
 * from the HPROF formats of JDK 1.4/5.0 only, and checks the framing and
 * the references the format requires: every record and sub-record fits its
 * length, the file ends exactly after the last record, every string, class
 * serial, frame and trace a record points at appeared before it, every
 * instance dump's class had a CLASS DUMP before it, and an instance dump's
 * byte count equals the field sizes of its class chain.
 *
 * Prints (for the test scripts):
 *   HEADER <version> idsize=<n>
 *   TAG <hex tag> <count>                    one line per record kind
 *   SITE <class> <live objs> <live bytes> <alloc objs> <alloc bytes>
 *                                            non-array sites of the last ALLOC SITES
 *                                            record, summed per class
 *   DUMP <class> <instances>                 INSTANCE DUMPs per class, all heap dumps
 *   ERROR <what>                             one per problem (at most 20 printed)
 *   END errors=<n> bytes=<n>
 * Exit code 0 when there are no errors, 1 otherwise.
 * Usage: HprofWalk FILE
 */
public class HprofWalk {
    private final byte[] b;
    private int p;
    private int idSize;
    private int errors;

    private final Set<Long> strings = new HashSet<>();
    private final Map<Long, String> stringText = new HashMap<>();
    private final Map<Integer, String> classBySerial = new HashMap<>();
    private final Map<Long, String> classByObject = new HashMap<>();
    private final Set<Long> frames = new HashSet<>();
    private final Set<Integer> traces = new HashSet<>();
    private final Map<Long, Long> superOf = new HashMap<>();
    private final Map<Long, Integer> ownFieldBytes = new HashMap<>();
    private final Map<Integer, Integer> tagCounts = new TreeMap<>();
    private Map<String, long[]> lastSites = new TreeMap<>();
    private final Map<String, Long> dumpCounts = new TreeMap<>();

    private HprofWalk(byte[] bytes) {
        b = bytes;
    }

    private void error(String what) {
        errors++;
        if (errors <= 20)
            System.out.println("ERROR " + what);
    }

    private void need(int n) throws EOFException {
        if (n < 0 || p + n > b.length)
            throw new EOFException("need " + n + " bytes at offset " + p + ", file has " + b.length);
    }

    private int u1() throws EOFException {
        need(1);
        return b[p++] & 0xff;
    }

    private int u2() throws EOFException {
        need(2);
        int v = ((b[p] & 0xff) << 8) | (b[p + 1] & 0xff);
        p += 2;
        return v;
    }

    private int u4() throws EOFException {
        need(4);
        int v = ((b[p] & 0xff) << 24) | ((b[p + 1] & 0xff) << 16) | ((b[p + 2] & 0xff) << 8) | (b[p + 3] & 0xff);
        p += 4;
        return v;
    }

    private long u8() throws EOFException {
        long hi = u4() & 0xffffffffL;
        return (hi << 32) | (u4() & 0xffffffffL);
    }

    private long id() throws EOFException {
        return idSize == 4 ? (u4() & 0xffffffffL) : u8();
    }

    private void skip(int n) throws EOFException {
        need(n);
        p += n;
    }

    /** Size of a value of basic type t in the binary format, -1 if t is not one. */
    private int typeSize(int t) {
        switch (t) {
        case 1: case 2: return idSize;
        case 4: case 8: return 1;
        case 5: case 9: return 2;
        case 6: case 10: return 4;
        case 7: case 11: return 8;
        default: return -1;
        }
    }

    private static String primName(int t) {
        switch (t) {
        case 4: return "boolean";
        case 5: return "char";
        case 6: return "float";
        case 7: return "double";
        case 8: return "byte";
        case 9: return "short";
        case 10: return "int";
        case 11: return "long";
        default: return "type" + t;
        }
    }

    private static String dotted(String s) {
        return s.replace('/', '.');
    }

    private void needString(long sid, String where) {
        if (sid != 0 && !strings.contains(sid))
            error(where + ": string id 0x" + Long.toHexString(sid) + " not defined before");
    }

    private void needClassSerial(int serial, String where) {
        if (serial != 0 && !classBySerial.containsKey(serial))
            error(where + ": class serial " + serial + " not loaded before");
    }

    private void needTrace(int serial, String where) {
        if (serial != 0 && !traces.contains(serial))
            error(where + ": trace serial " + serial + " not defined before");
    }

    private void walk() throws IOException {
        int nul = 0;
        while (nul < b.length && b[nul] != 0)
            nul++;
        if (nul >= b.length || nul > 64)
            throw new EOFException("no NUL-terminated header");
        String version = new String(b, 0, nul, "US-ASCII");
        p = nul + 1;
        idSize = u4();
        u8(); // time
        System.out.println("HEADER " + version + " idsize=" + idSize);
        if (!version.equals("JAVA PROFILE 1.0.1") && !version.equals("JAVA PROFILE 1.0.2"))
            error("unknown header '" + version + "'");
        if (idSize != 4 && idSize != 8)
            throw new EOFException("identifier size " + idSize);
        while (p < b.length) {
            int start = p;
            int tag = u1();
            u4(); // microseconds
            int len = u4();
            if (len < 0 || p + len > b.length) {
                error("record tag 0x" + Integer.toHexString(tag) + " at " + start + " has length " + (len & 0xffffffffL)
                        + " beyond the end of the file (" + b.length + ")");
                return;
            }
            int end = p + len;
            tagCounts.merge(tag, 1, Integer::sum);
            try {
                record(tag, end, start);
            } catch (EOFException e) {
                error("record tag 0x" + Integer.toHexString(tag) + " at " + start + " overruns its length: " + e.getMessage());
            }
            if (p != end) {
                if (p < end)
                    error("record tag 0x" + Integer.toHexString(tag) + " at " + start + ": " + (end - p) + " bytes unread");
                p = end;
            }
        }
    }

    private void record(int tag, int end, int start) throws IOException {
        switch (tag) {
        case 0x01: {
            long sid = id();
            String s = new String(b, p, end - p, "UTF-8");
            p = end;
            strings.add(sid);
            stringText.put(sid, s);
            break;
        }
        case 0x02: {
            int serial = u4();
            long obj = id();
            int trace = u4();
            long name = id();
            if (serial <= 0)
                error("LOAD CLASS at " + start + " with class serial " + serial);
            needTrace(trace, "LOAD CLASS");
            needString(name, "LOAD CLASS");
            String n = dotted(stringText.getOrDefault(name, "?"));
            classBySerial.put(serial, n);
            classByObject.put(obj, n);
            break;
        }
        case 0x03:
            u4();
            break;
        case 0x04: {
            long fid = id();
            needString(id(), "STACK FRAME method name");
            needString(id(), "STACK FRAME signature");
            needString(id(), "STACK FRAME source file");
            needClassSerial(u4(), "STACK FRAME");
            u4();
            frames.add(fid);
            break;
        }
        case 0x05: {
            int serial = u4();
            u4(); // thread serial
            int n = u4();
            for (int i = 0; i < n; i++) {
                long f = id();
                if (!frames.contains(f))
                    error("STACK TRACE " + serial + ": frame 0x" + Long.toHexString(f) + " not defined before");
            }
            traces.add(serial);
            break;
        }
        case 0x06: {
            u2(); // flags
            u4(); // cutoff
            u4(); u4(); u8(); u8(); // totals
            int n = u4();
            Map<String, long[]> sites = new TreeMap<>();
            for (int i = 0; i < n; i++) {
                int arr = u1();
                int cls = u4();
                int trace = u4();
                long lb = u4() & 0xffffffffL, lo = u4() & 0xffffffffL;
                long ab = u4() & 0xffffffffL, ao = u4() & 0xffffffffL;
                needTrace(trace, "ALLOC SITES");
                if (arr == 0) {
                    needClassSerial(cls, "ALLOC SITES");
                    String name = classBySerial.getOrDefault(cls, "serial" + cls);
                    long[] v = sites.computeIfAbsent(name, k -> new long[4]);
                    v[0] += lo; v[1] += lb; v[2] += ao; v[3] += ab;
                }
            }
            lastSites = sites;
            break;
        }
        case 0x07:
            u4(); u4(); u8(); u8();
            break;
        case 0x0A:
            u4();
            id();
            needTrace(u4(), "START THREAD");
            needString(id(), "START THREAD name");
            needString(id(), "START THREAD group");
            needString(id(), "START THREAD parent group");
            break;
        case 0x0B:
            u4();
            break;
        case 0x0C:
        case 0x1C:
            while (p < end)
                subRecord(end);
            break;
        case 0x2C:
            break;
        case 0x0D: {
            u4();
            int n = u4();
            for (int i = 0; i < n; i++) {
                u4();
                needTrace(u4(), "CPU SAMPLES");
            }
            break;
        }
        case 0x0E:
            u4();
            u2();
            break;
        default:
            error("unknown record tag 0x" + Integer.toHexString(tag) + " at " + start);
            p = end;
        }
    }

    private void subRecord(int end) throws IOException {
        int at = p;
        int sub = u1();
        switch (sub) {
        case 0xFF: case 0x05: case 0x07:
            id();
            break;
        case 0x01:
            id(); id();
            break;
        case 0x02: case 0x03: case 0x08:
            id(); u4(); u4();
            break;
        case 0x04: case 0x06:
            id(); u4();
            break;
        case 0x20: {
            long cls = id();
            needTrace(u4(), "CLASS DUMP");
            long sup = id();
            id(); id(); id(); id(); id();
            u4(); // instance size
            int cp = u2();
            for (int i = 0; i < cp; i++) {
                u2();
                int t = u1();
                int sz = typeSize(t);
                if (sz < 0)
                    throw new EOFException("bad constant pool type " + t + " in CLASS DUMP at " + at);
                skip(sz);
            }
            int statics = u2();
            for (int i = 0; i < statics; i++) {
                needString(id(), "CLASS DUMP static field name");
                int t = u1();
                int sz = typeSize(t);
                if (sz < 0)
                    throw new EOFException("bad static field type " + t + " in CLASS DUMP at " + at);
                skip(sz);
            }
            int fields = u2();
            int bytes = 0;
            for (int i = 0; i < fields; i++) {
                needString(id(), "CLASS DUMP instance field name");
                int t = u1();
                int sz = typeSize(t);
                if (sz < 0)
                    throw new EOFException("bad instance field type " + t + " in CLASS DUMP at " + at);
                bytes += sz;
            }
            if (!classByObject.containsKey(cls))
                error("CLASS DUMP at " + at + " of class 0x" + Long.toHexString(cls) + " with no LOAD CLASS before");
            superOf.put(cls, sup);
            ownFieldBytes.put(cls, bytes);
            break;
        }
        case 0x21: {
            id();
            needTrace(u4(), "INSTANCE DUMP");
            long cls = id();
            int n = u4();
            skip(n);
            String name = classByObject.get(cls);
            if (!ownFieldBytes.containsKey(cls)) {
                error("INSTANCE DUMP at " + at + " of class " + (name != null ? name : "0x" + Long.toHexString(cls))
                        + " with no CLASS DUMP before");
            } else {
                int want = 0;
                for (long c = cls; c != 0 && ownFieldBytes.containsKey(c); c = superOf.getOrDefault(c, 0L))
                    want += ownFieldBytes.get(c);
                if (want != n)
                    error("INSTANCE DUMP at " + at + " of " + name + ": " + n + " bytes of fields, class chain has " + want);
            }
            dumpCounts.merge(name != null ? name : "?", 1L, Long::sum);
            break;
        }
        case 0x22: {
            id();
            needTrace(u4(), "OBJECT ARRAY DUMP");
            int n = u4();
            id();
            skip(n * idSize);
            break;
        }
        case 0x23: {
            id();
            needTrace(u4(), "PRIMITIVE ARRAY DUMP");
            int n = u4();
            int t = u1();
            int sz = typeSize(t);
            if (sz < 0 || t == 1 || t == 2)
                throw new EOFException("bad primitive array type " + t + " at " + at);
            skip(n * sz);
            dumpCounts.merge(primName(t) + "[]", 1L, Long::sum);
            break;
        }
        default:
            throw new EOFException("unknown heap dump sub-record 0x" + Integer.toHexString(sub) + " at " + at);
        }
        if (p > end)
            throw new EOFException("sub-record at " + at + " runs past its HEAP DUMP record");
    }

    public static void main(String[] args) throws Exception {
        HprofWalk w = new HprofWalk(Files.readAllBytes(java.nio.file.Paths.get(args[0])));
        try {
            w.walk();
        } catch (EOFException e) {
            w.error("truncated or malformed: " + e.getMessage());
        }
        for (Map.Entry<Integer, Integer> e : w.tagCounts.entrySet())
            System.out.printf("TAG 0x%02X %d%n", e.getKey(), e.getValue());
        for (Map.Entry<String, long[]> e : w.lastSites.entrySet()) {
            long[] v = e.getValue();
            System.out.println("SITE " + e.getKey() + " " + v[0] + " " + v[1] + " " + v[2] + " " + v[3]);
        }
        for (Map.Entry<String, Long> e : w.dumpCounts.entrySet())
            System.out.println("DUMP " + e.getKey() + " " + e.getValue());
        System.out.println("END errors=" + w.errors + " bytes=" + w.b.length);
        System.exit(w.errors == 0 ? 0 : 1);
    }
}
