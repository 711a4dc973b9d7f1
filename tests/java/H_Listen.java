import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path; import java.nio.file.Paths;

/**
 * A loopback listener for hprof's net=host:port.  Binds 127.0.0.1 on a free
 * port, writes the port number to PORTFILE (via a rename, so a reader never
 * sees half of it), accepts one connection and copies every byte received to
 * OUTFILE until the peer closes.  Gives up after 90 s.
 * Usage: H_Listen PORTFILE OUTFILE
 */
public class H_Listen {
    public static void main(String[] args) throws Exception {
        try (ServerSocket ss = new ServerSocket()) {
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            ss.setSoTimeout(90_000);
            Path port = Paths.get(args[0]);
            Path tmp = Paths.get(args[0] + ".tmp");
            Files.write(tmp, (Integer.toString(ss.getLocalPort()) + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            Files.move(tmp, port);
            long total = 0;
            try (Socket s = ss.accept();
                 InputStream in = s.getInputStream();
                 OutputStream out = Files.newOutputStream(Paths.get(args[1]))) {
                s.setSoTimeout(90_000);
                byte[] buf = new byte[65536];
                int n;
                while ((n = in.read(buf)) > 0) {
                    out.write(buf, 0, n);
                    total += n;
                }
            }
            System.out.println("H_Listen received " + total + " bytes");
        }
    }
}
