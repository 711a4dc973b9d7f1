/*
 * OneSecond - a small program doing about a second of ordinary work, for
 * bench/xrun.sh's start-up figures: collections, strings, a stream, a
 * lambda, so that start-up loads the classes a small program loads.
 *
 *   java OneSecond [rounds]      (default 90)
 *
 * Prints "OneSecond: rounds=N checksum=C".
 */
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

public class OneSecond {
    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 90;
        long checksum = 0;
        for (int r = 0; r < rounds; r++) {
            Map<String, Integer> counts = new HashMap<>();
            List<String> words = new ArrayList<>();
            for (int i = 0; i < 20000; i++) {
                String w = "w" + ((i * 7919 + r) % 5003);
                words.add(w);
                counts.merge(w, 1, Integer::sum);
            }
            words.sort(null);
            String joined = words.stream().filter(s -> s.length() > 3).limit(500).collect(Collectors.joining(","));
            checksum += joined.hashCode() + counts.size() + String.format("%d", r).length();
        }
        System.out.println("OneSecond: rounds=" + rounds + " checksum=" + checksum);
    }
}
