// KIP-1094: a group member that commits ConsumerRecords.nextOffsets() after every poll, reporting JSON lines.
//
// Args: BOOTSTRAP TOPIC PARTITION GROUP ISOLATION MAX_POLL_RECORDS END
// Reads from the group's start (earliest) until position() reaches END or 30 s pass. After each
// poll whose nextOffsets() moved past the last commit it commits them and prints what poll returned,
// nextOffsets(), position() and committed() read back; at the end it prints position and committed.
// A poll that returned no records may still carry nextOffsets(): one whose fetch held only control
// records (transaction markers) or aborted data, which move the position on (KIP-1094 guide, "How to
// Know Which Offset to Commit": "the consumer's position steps over these markers"). A broker may
// answer a Fetch with the first batch alone (PartitionMaxBytes, KIP-74), so the markers after the
// last data record can come a poll later; committing them then is what keeps the lag at 0.
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public class Kip1094NextOffsets {
    public static void main(String[] args) {
        TopicPartition tp = new TopicPartition(args[1], Integer.parseInt(args[2]));
        long end = Long.parseLong(args[6]);
        Properties p = KctsJson.clientProperties();
        p.put("bootstrap.servers", args[0]);
        p.put("group.id", args[3]);
        p.put("isolation.level", args[4]);
        p.put("max.poll.records", args[5]);
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            c.subscribe(List.of(tp.topic()));
            long deadline = System.currentTimeMillis() + 30_000;
            OffsetAndMetadata last = null;  // the last nextOffsets() committed
            while (System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(100));
                OffsetAndMetadata next = records.nextOffsets().get(tp);
                if (next != null && !next.equals(last)) {
                    last = next;
                    c.commitSync(records.nextOffsets());
                    StringBuilder got = new StringBuilder("[");
                    for (ConsumerRecord<String, String> r : records.records(tp)) {
                        if (got.length() > 1) got.append(',');
                        got.append('[').append(r.offset()).append(',').append(r.leaderEpoch().orElse(-1)).append(']');
                    }
                    System.out.println("{\"event\":\"poll\",\"records\":" + got + "],\"next\":" + json(next)
                            + ",\"position\":" + c.position(tp) + ",\"committed\":" + json(committed(c, tp)) + "}");
                }
                if (c.assignment().contains(tp) && c.position(tp) >= end) break;
            }
            String position = c.assignment().contains(tp) ? String.valueOf(c.position(tp)) : "null";
            System.out.println("{\"event\":\"end\",\"position\":" + position + ",\"committed\":"
                    + json(committed(c, tp)) + "}");
        }
    }

    private static OffsetAndMetadata committed(KafkaConsumer<String, String> c, TopicPartition tp) {
        return c.committed(Set.of(tp)).get(tp);
    }

    private static String json(OffsetAndMetadata o) {
        if (o == null) return "null";
        return "{\"offset\":" + o.offset() + ",\"epoch\":" + o.leaderEpoch().orElse(-1) + "}";
    }
}
