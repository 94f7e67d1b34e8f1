import java.util.ArrayList;
import java.util.List;

/** JSON lines for the drivers' events, {"event": name, ...fields}; compiled with every driver (see harness/clients/jvm.py). */
final class KctsJson {
    private KctsJson() { }

    /** The run's TLS and SASL client settings (harness/clients/java_security.py), or none. */
    static java.util.Properties clientProperties() {
        java.util.Properties p = new java.util.Properties();
        String path = System.getenv("KCTS_CLIENT_PROPERTIES");
        if (path != null && !path.isEmpty()) {
            try (java.io.Reader r = java.nio.file.Files.newBufferedReader(java.nio.file.Path.of(path))) {
                p.load(r);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return p;
    }

    static String error(Throwable e) {
        List<String> chain = new ArrayList<>();
        for (Throwable t = e; t != null && chain.size() < 5; t = t.getCause()) {
            chain.add(q(t.getClass().getName()));
        }
        return ",\"error\":" + q(e.getClass().getName()) + ",\"message\":" + q(String.valueOf(e.getMessage()))
            + ",\"causes\":[" + String.join(",", chain) + "]";
    }

    static void emit(String name, String fields) {
        System.out.println("{\"event\":" + q(name) + fields + "}");
        System.out.flush();
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
