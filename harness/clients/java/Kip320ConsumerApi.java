// Java consumers for the KIP-320 "Public Interfaces" checks: one command at a time on stdin, JSON lines out.
//
// Args: BOOTSTRAP TOPIC PARTITION LOGFILE. Unlike Kip320Consumers, nothing is polled but on a command,
// so that between two commands a consumer sends nothing (the check of seek's "no remote calls").
// The clients' own log (org.apache.kafka.clients.consumer at INFO, everything else at WARN) goes to
// LOGFILE: log4j 2 (Kafka 4) and reload4j (Kafka 3) are both configured before any client class logs.
// Commands, one per line:
//   open NAME RESET GROUP       a consumer (auto.offset.reset RESET; GROUP "-" for none) assigned the partition
//   seek NAME OFFSET EPOCH      seek(tp, new OffsetAndMetadata(OFFSET, Optional.of(EPOCH), "")); answers
//                               sought {offset, epoch, nanos} (EPOCH -1: seek(tp, OFFSET), no epoch)
//   poll NAME MILLIS UNTIL      poll until a record at UNTIL or later, an exception, or MILLIS; answers
//                               record events, then polled {records, position} or error
//   commit NAME OFFSET MODE     commitSync({tp: OffsetAndMetadata}) built by MODE: "offset" new OffsetAndMetadata(OFFSET),
//                               "metadata" new OffsetAndMetadata(OFFSET, "kcts"), "epoch:E" the KIP-320 constructor
//                               with Optional.of(E); answers committed {mode, offset, built_epoch, read_offset, read_epoch}
//   close NAME
// An error event names the exception's class and every class it is an instance of (`types`, from the
// class itself up to Throwable, interfaces aside), whether an application catching
// OffsetOutOfRangeException would catch it (`out_of_range`), and, for a LogTruncationException, its
// divergent offsets.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.LogTruncationException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public class Kip320ConsumerApi {
    private static final Map<String, KafkaConsumer<String, String>> consumers = new LinkedHashMap<>();

    public static void main(String[] args) throws Exception {
        configureLogging(Path.of(args[3]));
        String bootstrap = args[0];
        TopicPartition tp = new TopicPartition(args[1], Integer.parseInt(args[2]));
        emit("{\"event\":\"ready\"}");
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in))) {
            for (String line; (line = in.readLine()) != null; ) {
                line = line.trim();
                if (line.equals("exit")) break;
                if (!line.isEmpty()) run(line.split("\\s+"), bootstrap, tp);
            }
        }
        for (KafkaConsumer<String, String> c : consumers.values()) c.close(Duration.ofSeconds(5));
        emit("{\"event\":\"exited\"}");
    }

    private static void configureLogging(Path file) throws Exception {
        String log = file.toAbsolutePath().toString().replace("\\", "/");
        // Beside the log, in the session's scratch folder, which the session removes (the system temp
        // folder kept two files per driver run).
        Path dir = file.toAbsolutePath().getParent();
        Path log4j2 = Files.createTempFile(dir, "log4j2-", ".properties");
        Files.writeString(log4j2, String.join("\n",
            "status = error",
            "appender.f.type = File",
            "appender.f.name = F",
            "appender.f.fileName = " + log,
            "appender.f.layout.type = PatternLayout",
            "appender.f.layout.pattern = %d{ISO8601} %p %c [%t] %m%n",
            "rootLogger.level = warn",
            "rootLogger.appenderRef.f.ref = F",
            "logger.consumer.name = org.apache.kafka.clients.consumer",
            "logger.consumer.level = info", ""));
        Path log4j1 = Files.createTempFile(dir, "log4j-", ".properties");
        Files.writeString(log4j1, String.join("\n",
            "log4j.rootLogger=WARN, F",
            "log4j.appender.F=org.apache.log4j.FileAppender",
            "log4j.appender.F.File=" + log,
            "log4j.appender.F.layout=org.apache.log4j.PatternLayout",
            "log4j.appender.F.layout.ConversionPattern=%d{ISO8601} %p %c [%t] %m%n",
            "log4j.logger.org.apache.kafka.clients.consumer=INFO", ""));
        System.setProperty("log4j2.configurationFile", log4j2.toString());
        System.setProperty("log4j.configuration", log4j1.toUri().toString());
    }

    private static void run(String[] cmd, String bootstrap, TopicPartition tp) {
        String name = cmd[1];
        try {
            switch (cmd[0]) {
                case "open" -> {
                    KafkaConsumer<String, String> c = consumer(bootstrap, name, cmd[2], cmd[3].equals("-") ? null : cmd[3]);
                    c.assign(List.of(tp));
                    consumers.put(name, c);
                }
                case "seek" -> {
                    KafkaConsumer<String, String> c = consumers.get(name);
                    long offset = Long.parseLong(cmd[2]);
                    int epoch = Integer.parseInt(cmd[3]);
                    long start = System.nanoTime();
                    if (epoch < 0) c.seek(tp, offset);
                    else c.seek(tp, new OffsetAndMetadata(offset, Optional.of(epoch), ""));
                    long nanos = System.nanoTime() - start;
                    emit("{\"event\":\"sought\",\"consumer\":" + KctsJson.q(name) + ",\"offset\":" + offset
                            + ",\"epoch\":" + epoch + ",\"nanos\":" + nanos + "}");
                }
                case "poll" -> poll(name, consumers.get(name), Long.parseLong(cmd[2]), Long.parseLong(cmd[3]), tp);
                case "commit" -> {
                    KafkaConsumer<String, String> c = consumers.get(name);
                    long offset = Long.parseLong(cmd[2]);
                    String mode = cmd[3];
                    OffsetAndMetadata built;
                    if (mode.equals("offset")) built = new OffsetAndMetadata(offset);
                    else if (mode.equals("metadata")) built = new OffsetAndMetadata(offset, "kcts");
                    else if (mode.startsWith("epoch:")) {
                        built = new OffsetAndMetadata(offset, Optional.of(Integer.parseInt(mode.substring(6))), "kcts");
                    } else throw new IllegalArgumentException("unknown commit mode " + mode);
                    c.commitSync(Map.of(tp, built));
                    OffsetAndMetadata read = c.committed(Set.of(tp)).get(tp);
                    emit("{\"event\":\"committed\",\"consumer\":" + KctsJson.q(name) + ",\"mode\":" + KctsJson.q(mode)
                            + ",\"offset\":" + offset + ",\"built_epoch\":" + built.leaderEpoch().orElse(-1)
                            + ",\"read_offset\":" + (read == null ? -1 : read.offset())
                            + ",\"read_epoch\":" + (read == null ? -1 : read.leaderEpoch().orElse(-1)) + "}");
                }
                case "close" -> {
                    KafkaConsumer<String, String> c = consumers.remove(name);
                    if (c != null) c.close(Duration.ofSeconds(5));
                    emit("{\"event\":\"closed\",\"consumer\":" + KctsJson.q(name) + "}");
                }
                default -> throw new IllegalArgumentException("unknown command " + cmd[0]);
            }
            emit("{\"event\":\"done\",\"command\":" + KctsJson.q(String.join(" ", cmd)) + "}");
        } catch (Exception e) {
            emit("{\"event\":\"command_failed\",\"command\":" + KctsJson.q(String.join(" ", cmd)) + ",\"exception\":"
                    + KctsJson.q(e.getClass().getName()) + ",\"message\":" + KctsJson.q(String.valueOf(e.getMessage())) + "}");
        }
    }

    private static KafkaConsumer<String, String> consumer(String bootstrap, String name, String reset, String group) {
        Properties p = KctsJson.clientProperties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", name);
        p.put("auto.offset.reset", reset);
        p.put("enable.auto.commit", "false");
        p.put("metadata.max.age.ms", "1000");
        p.put("reconnect.backoff.max.ms", "500");
        if (group != null) p.put("group.id", group);
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    private static void poll(String name, KafkaConsumer<String, String> c, long millis, long until, TopicPartition tp) {
        long deadline = System.currentTimeMillis() + millis;
        int n = 0;
        try {
            while (System.currentTimeMillis() < deadline) {
                boolean reached = false;
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                    n++;
                    reached |= r.offset() >= until;
                    emit("{\"event\":\"record\",\"consumer\":" + KctsJson.q(name) + ",\"offset\":" + r.offset()
                            + ",\"epoch\":" + r.leaderEpoch().orElse(-1) + ",\"value\":" + KctsJson.q(r.value()) + "}");
                }
                if (reached) break;
            }
            emit("{\"event\":\"polled\",\"consumer\":" + KctsJson.q(name) + ",\"records\":" + n + ",\"position\":"
                    + c.position(tp, Duration.ofSeconds(5)) + "}");
        } catch (OffsetOutOfRangeException e) {
            error(name, e, "OffsetOutOfRangeException");
        } catch (Exception e) {
            error(name, e, "Exception");
        }
    }

    private static void error(String name, Exception e, String caughtAs) {
        List<String> types = new ArrayList<>();
        for (Class<?> k = e.getClass(); k != null; k = k.getSuperclass()) types.add(KctsJson.q(k.getName()));
        StringBuilder divergent = new StringBuilder("[");
        if (e instanceof LogTruncationException t) {
            for (Map.Entry<TopicPartition, OffsetAndMetadata> d : t.divergentOffsets().entrySet()) {
                if (divergent.length() > 1) divergent.append(',');
                divergent.append("{\"partition\":").append(d.getKey().partition()).append(",\"offset\":")
                        .append(d.getValue().offset()).append(",\"epoch\":")
                        .append(d.getValue().leaderEpoch().orElse(-1)).append('}');
            }
        }
        emit("{\"event\":\"error\",\"consumer\":" + KctsJson.q(name) + ",\"exception\":" + KctsJson.q(e.getClass().getName())
                + ",\"message\":" + KctsJson.q(String.valueOf(e.getMessage())) + ",\"caught_as\":" + KctsJson.q(caughtAs)
                + ",\"out_of_range\":" + (e instanceof OffsetOutOfRangeException) + ",\"types\":[" + String.join(",", types)
                + "],\"divergent\":" + divergent + "]}");
    }

    private static synchronized void emit(String json) {
        System.out.println(json);
        System.out.flush();
    }
}
