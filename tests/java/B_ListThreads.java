import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.management.ObjectName;

// For it_b_systhread.sh: lists the live threads, as two views, to OUT_FILE:
//   dump|NAME|PRIORITY|DAEMON   from the VM's thread dump (jcmd Thread.print,
//                               run in-process through the DiagnosticCommand
//                               MBean), which shows every Java thread
//   api|NAME|PRIORITY|DAEMON    from Thread.getAllStackTraces(), which HotSpot
//                               keeps JVM TI agent threads out of
// It first waits (up to 30 s) until the dump shows threads with the given names.
// Arguments: OUT_FILE NAME...
public class B_ListThreads {
    // "name" #id [tid] daemon prio=N ...  ([tid] only on newer JDKs)
    static final Pattern HEADER =
            Pattern.compile("^\"(.*)\" #\\d+ (?:\\[\\d+\\] )?(daemon )?prio=(\\d+) .*");

    static List<String> dump() throws Exception {
        String text = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "threadPrint",
                new Object[] { new String[0] }, new String[] { String[].class.getName() });
        List<String> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            Matcher m = HEADER.matcher(line);
            if (m.matches()) {
                out.add(m.group(1) + "|" + m.group(3) + "|" + (m.group(2) != null));
            }
        }
        return out;
    }

    public static void main(String[] args) throws Exception {
        System.out.println("B_ListThreads start");
        Set<String> wanted = Arrays.stream(args).skip(1).collect(Collectors.toSet());
        long end = System.currentTimeMillis() + 30_000;
        List<String> seen;
        while (true) {
            seen = dump();
            Set<String> names = seen.stream().map(s -> s.substring(0, s.indexOf('|'))).collect(Collectors.toSet());
            if (names.containsAll(wanted) || System.currentTimeMillis() > end) {
                break;
            }
            Thread.sleep(20);
        }
        try (PrintWriter out = new PrintWriter(args[0])) {
            for (String s : seen) {
                out.println("dump|" + s);
            }
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                out.println("api|" + t.getName() + "|" + t.getPriority() + "|" + t.isDaemon());
            }
        }
        System.out.println("B_ListThreads end");
    }
}
