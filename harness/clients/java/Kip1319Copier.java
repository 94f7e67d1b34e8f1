// Consume-transform-produce by the Java clients under test: what kafka-tools' TransactionalMessageCopier
// does (a group member copies records and commits its consumed offsets inside each transaction with
// sendOffsetsToTransaction(offsets, consumer.groupMetadata())), compiled against the version under
// test. The 4.3.1 copier borrowed for 4.4.0 (see harness/kafka/dist.py) cannot run there: it calls
// org.apache.kafka.common.utils.Exit, which kafka-clients 4.4.0 no longer has.
// Prints JSON lines: initialized, transaction_committed (per transaction), transaction_failed, done.
//
// args: --bootstrap-server HOST:PORT --input-topic T --output-topic T --group G --transactional-id ID
//       --messages N [--transaction-size K] [--group-protocol classic|consumer] [--timeout-ms MS]
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class Kip1319Copier {
    public static void main(String[] args) {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            opts.put(args[i], args[i + 1]);
        }
        String bootstrap = opts.get("--bootstrap-server");
        String output = opts.get("--output-topic");
        long wanted = Long.parseLong(opts.get("--messages"));
        long deadline = System.currentTimeMillis() + Long.parseLong(opts.getOrDefault("--timeout-ms", "60000"));

        Properties c = KctsJson.clientProperties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, opts.get("--group"));
        c.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, opts.getOrDefault("--group-protocol", "classic"));
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, opts.getOrDefault("--transaction-size", "5"));
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        Properties p = KctsJson.clientProperties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, opts.get("--transactional-id"));
        // A commit the target never lets finish (a retriable answer that never clears) fails within this,
        // and its abort within it again: both inside the harness's wait for the copier (120 s).
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, opts.getOrDefault("--max-block-ms", "30000"));
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());

        long copied = 0;
        String outcome = "copied";
        // Closed within a bound, not by try-with-resources: close() waits without end for a coordinator that
        // refuses everything, and the harness must hear "done" whatever the target does.
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c);
        KafkaProducer<String, String> producer = new KafkaProducer<>(p);
        try {
            producer.initTransactions();
            consumer.subscribe(List.of(opts.get("--input-topic")));
            KctsJson.emit("initialized", "");
            while (copied < wanted) {
                if (System.currentTimeMillis() > deadline) {
                    outcome = "timeout";
                    break;
                }
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    continue;
                }
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<String, String> r : records) {
                    producer.send(new ProducerRecord<>(output, r.partition(), r.key(), r.value()));
                    offsets.put(new TopicPartition(r.topic(), r.partition()),
                        new OffsetAndMetadata(r.offset() + 1, r.leaderEpoch(), ""));
                }
                try {
                    producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                    producer.commitTransaction();
                } catch (RuntimeException e) {
                    KctsJson.emit("transaction_failed", KctsJson.error(e));
                    abort(producer);
                    outcome = "aborted";
                    break;
                }
                copied += records.count();
                List<String> committed = new ArrayList<>();
                for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
                    committed.add(KctsJson.q(e.getKey().toString()) + ":" + e.getValue().offset());
                }
                KctsJson.emit("transaction_committed", ",\"records\":" + records.count() + ",\"copied\":" + copied
                    + ",\"offsets\":{" + String.join(",", committed) + "}");
            }
        } finally {
            producer.close(Duration.ofSeconds(5));
            consumer.close(Duration.ofSeconds(5));
        }
        KctsJson.emit("done", ",\"outcome\":" + KctsJson.q(outcome) + ",\"copied\":" + copied);
        System.exit(outcome.equals("copied") ? 0 : 1);
    }

    // An abort the target does not let finish is reported, not waited on past the producer's own bound.
    static void abort(KafkaProducer<String, String> producer) {
        try {
            producer.abortTransaction();
        } catch (RuntimeException e) {
            KctsJson.emit("abort_failed", KctsJson.error(e));
        }
    }
}
