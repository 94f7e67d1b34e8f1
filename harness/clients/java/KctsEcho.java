// A minimal driver that proves the compile-and-run path: prints the kafka-clients version it runs on.
import java.io.InputStream;
import java.util.Properties;

public class KctsEcho {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        try (InputStream in = org.apache.kafka.clients.producer.KafkaProducer.class
                .getResourceAsStream("/kafka/kafka-version.properties")) {
            props.load(in);
        }
        System.out.println("{\"event\":\"version\",\"kafka_clients\":\"" + props.getProperty("version") + "\"}");
    }
}
