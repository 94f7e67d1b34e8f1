// Java consumers for the KIP-320 truncation checks: driven by commands on stdin, reporting JSON lines.
//
// Args: BOOTSTRAP TOPIC PARTITION. Commands, one per line:
//   assign NAME RESET OFFSET    a consumer without a group, positioned at OFFSET of the partition
//   seekepoch NAME RESET OFFSET EPOCH  the same, positioned by seek(OffsetAndMetadata(OFFSET, EPOCH)):
//                               a position restored from outside, which KIP-320 validates on the next poll
//   subscribe NAME RESET GROUP  a member of GROUP, starting from the group's committed offset and epoch
//   commit NAME                 commitSync() of the consumed position; answers with what committed() reads back
//   offsetsfortimes NAME TIMESTAMP  a consumer of its own (assigned nothing) asks offsetsForTimes(TIMESTAMP) of the
//                               partition; answers offset_for_time {offset, epoch, found_timestamp} (-1, null: none)
//   pause NAME / resume NAME    stop and restart fetching its partitions (the position stays)
//   close NAME
// RESET is the auto.offset.reset value (earliest, latest, none). One thread owns every consumer
// (KafkaConsumer is not thread-safe) and polls them in turn; a consumer that throws stops polling,
// so that its one error is the answer to read.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.LogTruncationException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public class Kip320Consumers {
    private static final Map<String, KafkaConsumer<String, String>> polling = new LinkedHashMap<>();
    private static final Map<String, KafkaConsumer<String, String>> stopped = new LinkedHashMap<>();

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        TopicPartition tp = new TopicPartition(args[1], Integer.parseInt(args[2]));
        LinkedBlockingQueue<String> commands = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in))) {
                for (String line; (line = in.readLine()) != null; ) commands.add(line.trim());
            } catch (Exception e) {
                emit("{\"event\":\"stdin_error\",\"message\":" + KctsJson.q(e.toString()) + "}");
            }
            commands.add("exit");
        });
        reader.setDaemon(true);
        reader.start();
        emit("{\"event\":\"ready\"}");
        while (true) {
            for (String cmd; (cmd = commands.poll()) != null; ) {
                if (cmd.equals("exit")) {
                    for (KafkaConsumer<String, String> c : polling.values()) c.close(Duration.ofSeconds(5));
                    for (KafkaConsumer<String, String> c : stopped.values()) c.close(Duration.ofSeconds(5));
                    emit("{\"event\":\"exited\"}");
                    return;
                }
                if (!cmd.isEmpty()) run(cmd.split("\\s+"), bootstrap, tp);
            }
            if (polling.isEmpty()) {
                Thread.sleep(20);  // idle until the next command; nothing to poll
                continue;
            }
            for (String name : List.copyOf(polling.keySet())) poll(name);
        }
    }

    private static void run(String[] cmd, String bootstrap, TopicPartition tp) {
        String name = cmd[1];
        try {
            switch (cmd[0]) {
                case "assign" -> {
                    KafkaConsumer<String, String> c = consumer(bootstrap, name, cmd[2], null);
                    c.assign(List.of(tp));
                    c.seek(tp, Long.parseLong(cmd[3]));
                    polling.put(name, c);
                }
                case "seekepoch" -> {
                    KafkaConsumer<String, String> c = consumer(bootstrap, name, cmd[2], null);
                    c.assign(List.of(tp));
                    c.seek(tp, new OffsetAndMetadata(Long.parseLong(cmd[3]), Optional.of(Integer.parseInt(cmd[4])), ""));
                    polling.put(name, c);
                }
                case "subscribe" -> {
                    KafkaConsumer<String, String> c = consumer(bootstrap, name, cmd[2], cmd[3]);
                    c.subscribe(List.of(tp.topic()));
                    polling.put(name, c);
                }
                case "commit" -> {
                    KafkaConsumer<String, String> c = polling.get(name);
                    c.commitSync();
                    OffsetAndMetadata got = c.committed(Set.of(tp)).get(tp);
                    emit("{\"event\":\"committed\",\"consumer\":" + KctsJson.q(name) + ",\"offset\":" + got.offset()
                            + ",\"epoch\":" + got.leaderEpoch().orElse(-1) + "}");
                }
                case "offsetsfortimes" -> {
                    long timestamp = Long.parseLong(cmd[2]);
                    try (KafkaConsumer<String, String> c = consumer(bootstrap, name, "none", null)) {
                        OffsetAndTimestamp found = c.offsetsForTimes(Map.of(tp, timestamp), Duration.ofSeconds(15)).get(tp);
                        emit("{\"event\":\"offset_for_time\",\"consumer\":" + KctsJson.q(name) + ",\"timestamp\":" + timestamp
                                + ",\"offset\":" + (found == null ? -1 : found.offset())
                                + ",\"epoch\":" + (found == null ? "null" : found.leaderEpoch().map(String::valueOf).orElse("null"))
                                + ",\"found_timestamp\":" + (found == null ? -1 : found.timestamp()) + ",\"error\":null}");
                    }
                }
                // A consumer that stopped on an error stays stopped: its error is the answer.
                case "pause" -> { if (polling.containsKey(name)) polling.get(name).pause(polling.get(name).assignment()); }
                case "resume" -> { if (polling.containsKey(name)) polling.get(name).resume(polling.get(name).paused()); }
                case "close" -> {
                    KafkaConsumer<String, String> c = polling.remove(name);
                    if (c == null) c = stopped.remove(name);
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
        // Leader changes are noticed through metadata; the default age (5 min) would hide them.
        p.put("metadata.max.age.ms", "1000");
        p.put("reconnect.backoff.max.ms", "500");
        if (group != null) p.put("group.id", group);
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    private static void poll(String name) {
        KafkaConsumer<String, String> c = polling.get(name);
        try {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(50))) {
                emit("{\"event\":\"record\",\"consumer\":" + KctsJson.q(name) + ",\"offset\":" + r.offset() + ",\"epoch\":"
                        + r.leaderEpoch().orElse(-1) + ",\"value\":" + KctsJson.q(r.value()) + "}");
            }
        } catch (LogTruncationException e) {
            StringBuilder divergent = new StringBuilder("[");
            for (Map.Entry<TopicPartition, OffsetAndMetadata> d : e.divergentOffsets().entrySet()) {
                if (divergent.length() > 1) divergent.append(',');
                divergent.append("{\"partition\":").append(d.getKey().partition()).append(",\"offset\":")
                        .append(d.getValue().offset()).append(",\"epoch\":")
                        .append(d.getValue().leaderEpoch().orElse(-1)).append('}');
            }
            stop(name, "{\"event\":\"error\",\"consumer\":" + KctsJson.q(name) + ",\"exception\":" + KctsJson.q(e.getClass().getName())
                    + ",\"message\":" + KctsJson.q(String.valueOf(e.getMessage())) + ",\"divergent\":" + divergent + "]}");
        } catch (Exception e) {
            stop(name, "{\"event\":\"error\",\"consumer\":" + KctsJson.q(name) + ",\"exception\":" + KctsJson.q(e.getClass().getName())
                    + ",\"message\":" + KctsJson.q(String.valueOf(e.getMessage())) + "}");
        }
    }

    private static void stop(String name, String event) {
        stopped.put(name, polling.remove(name));
        emit(event);
    }

    private static synchronized void emit(String json) {
        System.out.println(json);
        System.out.flush();
    }
}
