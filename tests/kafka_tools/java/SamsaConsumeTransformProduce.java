import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka's consume-transform-produce loop: a consumer of the given group protocol
 * ("consumer" for KIP-848, or "classic") reads the input, a transactional producer
 * writes one output per input and commits the consumer's offsets in the same
 * transaction with sendOffsetsToTransaction(offsets, consumer.groupMetadata()).
 * Prints "COMMITTED n" per transaction and "DONE total" once the input is used up,
 * or "FAILED <exception>" and exits 1.
 */
public class SamsaConsumeTransformProduce {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], source = args[1], sink = args[2], group = args[3];
        String txnId = args[4], protocol = args[6];
        int expected = Integer.parseInt(args[5]);
        int done = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(bootstrap, group, protocol));
             KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(bootstrap, txnId))) {
            producer.initTransactions();
            consumer.subscribe(List.of(source));
            long deadline = System.currentTimeMillis() + 120_000;
            while (done < expected && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                if (records.isEmpty()) continue;
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<String, String> r : records) {
                    producer.send(new ProducerRecord<>(sink, r.partition(), r.key(), "out-" + r.value()));
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                try {
                    producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                    producer.commitTransaction();
                } catch (Exception e) {
                    System.out.println("FAILED " + e);
                    System.out.flush();
                    System.exit(1);
                }
                done += records.count();
                System.out.println("COMMITTED " + records.count());
            }
        }
        System.out.println("DONE " + done);
    }

    static Properties consumerProps(String bootstrap, String group, String protocol) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("group.protocol", protocol);
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("isolation.level", "read_committed");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return p;
    }

    static Properties producerProps(String bootstrap, String txnId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", txnId);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        return p;
    }
}
