import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * An idempotent producer (acks all) writing a steady stream, the Java side of the KIP-359 failover
 * check; the same commands and events as the librdkafka and franz-go producer drivers.
 *
 *   KctsProducer BOOTSTRAP TOPIC PREFIX
 *
 * It sends "PREFIX.n" (n = 0, 1, ...) to partition 0 of TOPIC, about 200 a second, until its input
 * says exit (or ends). Then, in this order, it stops sending, waits up to 60 s for every delivery
 * report, says stopped {sent, unreported}, and only then closes the producer: one thread both
 * sends and closes, so no send can meet a closed producer. (kafka-tools' VerifiableProducer closes
 * from its SIGTERM hook while its main thread may still be inside send(), and reports the
 * harness's own close as a failed write: "Cannot perform operation after producer has been closed".)
 * Events: ready, producer_send_success {value, offset}, producer_send_error {value, exception,
 * message}, stopped {sent, unreported}.
 */
public final class KctsProducer {
    private static final Duration REPORTS_WAIT = Duration.ofSeconds(60);

    private final Object lock = new Object();
    private long unreported;
    private boolean reporting = true;

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("KctsProducer BOOTSTRAP TOPIC PREFIX");
            System.exit(2);
        }
        new KctsProducer().run(args[0], args[1], args[2]);
    }

    private void run(String bootstrap, String topic, String prefix) throws InterruptedException {
        Properties p = KctsJson.clientProperties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.RETRIES_CONFIG, String.valueOf(Integer.MAX_VALUE));
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        // A paused leader answers nothing: give up on a request after 5 s and retry on the new leader,
        // which the 3 s broker session timeout has elected by then.
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        // kcts reads the written log with its own codec: uncompressed batches, as the other drivers send.
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        AtomicBoolean stop = new AtomicBoolean();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null && !line.trim().equals("exit")) {
                    // only "exit" is a command
                }
            } catch (java.io.IOException e) {
                // stdin gone: the harness is gone too; stop as on exit
            }
            stop.set(true);
        }, "kcts-stdin");
        reader.setDaemon(true);
        reader.start();
        KafkaProducer<String, String> producer = new KafkaProducer<>(p);
        KctsJson.emit("ready", "");
        long sent = 0;
        while (!stop.get()) {
            String value = prefix + "." + sent;
            synchronized (lock) {
                unreported++;
            }
            try {
                producer.send(new ProducerRecord<>(topic, 0, null, value), (meta, e) -> report(value, meta == null ? -1 : meta.offset(), e));
            } catch (RuntimeException e) {
                report(value, -1, e); // refused before it was queued (a full buffer past max.block.ms)
            }
            sent++;
            Thread.sleep(5);
        }
        long left = awaitReports();
        KctsJson.emit("stopped", ",\"sent\":" + sent + ",\"unreported\":" + left);
        producer.close(Duration.ofSeconds(5));
    }

    private void report(String value, long offset, Exception e) {
        synchronized (lock) {
            unreported--;
            lock.notifyAll();
            if (!reporting) {
                return; // after stopped: already counted as unreported, and the close's own doing
            }
            if (e == null) {
                KctsJson.emit("producer_send_success", ",\"value\":" + KctsJson.q(value) + ",\"offset\":" + offset);
            } else {
                KctsJson.emit("producer_send_error", ",\"value\":" + KctsJson.q(value) + ",\"exception\":"
                    + KctsJson.q(e.getClass().getName()) + ",\"message\":" + KctsJson.q(String.valueOf(e.getMessage())));
            }
        }
    }

    /** Waits until every send has its delivery report, at most REPORTS_WAIT; the count still without one. */
    private long awaitReports() throws InterruptedException {
        long deadline = System.nanoTime() + REPORTS_WAIT.toNanos();
        synchronized (lock) {
            while (unreported > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                lock.wait(Math.max(1, left / 1_000_000));
            }
            reporting = false;
            return unreported;
        }
    }
}
