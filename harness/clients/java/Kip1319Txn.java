// One transaction by the Java producer under test, with sendOffsetsToTransaction on offsets chosen
// by the caller (the verifiable tools only commit what they consumed). Prints JSON lines:
// initialized {max_block_ms}, produced, offsets_sent {send_offsets_ms}, committed | transaction_failed
// {send_offsets_ms when sendOffsetsToTransaction itself threw}, aborted, done. send_offsets_ms is how
// long the sendOffsetsToTransaction call took, on this process's monotonic clock.
//
// args: --bootstrap-server HOST:PORT --transactional-id ID --group ID --output-topic T
//       [--records N] [--offset TOPIC:PARTITION:OFFSET[:LEADER_EPOCH]]... [--generation N --member-id M]
//       [--config KEY=VALUE]...
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

public class Kip1319Txn {
    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new HashMap<>();
        Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        Properties props = KctsJson.clientProperties();
        for (int i = 0; i + 1 < args.length; i += 2) {
            String key = args[i], value = args[i + 1];
            if (key.equals("--offset")) {
                String[] p = value.split(":");
                Optional<Integer> epoch = p.length > 3 ? Optional.of(Integer.parseInt(p[3])) : Optional.empty();
                offsets.put(new TopicPartition(p[0], Integer.parseInt(p[1])),
                    new OffsetAndMetadata(Long.parseLong(p[2]), epoch, "kcts"));
            } else if (key.equals("--config")) {
                String[] kv = value.split("=", 2);
                props.put(kv[0], kv[1]);
            } else {
                opts.put(key, value);
            }
        }
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("--bootstrap-server"));
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, opts.get("--transactional-id"));
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        props.putIfAbsent(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "50");
        String topic = opts.get("--output-topic");
        int records = Integer.parseInt(opts.getOrDefault("--records", "3"));
        String group = opts.get("--group");
        ConsumerGroupMetadata groupMetadata = opts.containsKey("--generation")
            ? new ConsumerGroupMetadata(group, Integer.parseInt(opts.get("--generation")),
                opts.getOrDefault("--member-id", ""), Optional.empty())
            : new ConsumerGroupMetadata(group);

        String outcome;
        // Closed within a bound (close() waits without end for a coordinator that refuses everything).
        KafkaProducer<String, String> producer = new KafkaProducer<>(props);
        try {
            producer.initTransactions();
            KctsJson.emit("initialized", ",\"max_block_ms\":" + props.get(ProducerConfig.MAX_BLOCK_MS_CONFIG));
            producer.beginTransaction();
            List<String> sent = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                RecordMetadata md = producer.send(new ProducerRecord<>(topic, 0, null, "txn-value-" + i)).get();
                sent.add(String.valueOf(md.offset()));
            }
            KctsJson.emit("produced", ",\"topic\":" + KctsJson.q(topic) + ",\"offsets\":[" + String.join(",", sent) + "]");
            long started = System.nanoTime();
            boolean offsetsSent = false;
            try {
                producer.sendOffsetsToTransaction(offsets, groupMetadata);
                offsetsSent = true;
                KctsJson.emit("offsets_sent", ",\"count\":" + offsets.size() + ",\"send_offsets_ms\":" + msSince(started));
                producer.commitTransaction();
                KctsJson.emit("committed", "");
                outcome = "committed";
            } catch (RuntimeException e) {
                KctsJson.emit("transaction_failed", KctsJson.error(e)
                    + (offsetsSent ? "" : ",\"send_offsets_ms\":" + msSince(started)));
                try {
                    producer.abortTransaction();
                    KctsJson.emit("aborted", "");
                } catch (RuntimeException abort) {
                    KctsJson.emit("abort_failed", KctsJson.error(abort));
                }
                outcome = "aborted";
            }
        } finally {
            producer.close(Duration.ofSeconds(5));
        }
        KctsJson.emit("done", ",\"outcome\":" + KctsJson.q(outcome));
    }

    private static long msSince(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1_000_000;
    }
}
