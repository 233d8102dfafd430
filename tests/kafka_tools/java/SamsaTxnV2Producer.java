import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka's transactional producer against Samsa with transaction version 2: commits,
 * an abort, and a second instance fencing the first. Prints the producer epoch the
 * coordinator holds after each step (DescribeTransactions): with version 2 every
 * commit or abort bumps it.
 */
public class SamsaTxnV2Producer {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], txnId = args[2];
        try (Admin admin = Admin.create(props(bootstrap, null))) {
            KafkaProducer<String, String> first = new KafkaProducer<>(props(bootstrap, txnId));
            first.initTransactions();
            System.out.println("EPOCH init " + epoch(admin, txnId));
            transaction(first, topic, "c1", true);
            transaction(first, topic, "a1", false);
            transaction(first, topic, "c2", true);
            System.out.println("EPOCH after3 " + epoch(admin, txnId));
            KafkaProducer<String, String> second = new KafkaProducer<>(props(bootstrap, txnId));
            second.initTransactions();
            try {
                transaction(first, topic, "zombie", true);
                System.out.println("NOT FENCED");
            } catch (Exception e) {
                System.out.println("FENCED " + e.getClass().getSimpleName());
            }
            first.close();
            transaction(second, topic, "b1", true);
            System.out.println("EPOCH second " + epoch(admin, txnId));
            second.close();
        }
        System.out.println("DONE");
    }

    static void transaction(KafkaProducer<String, String> p, String topic, String value, boolean commit)
            throws Exception {
        p.beginTransaction();
        p.send(new ProducerRecord<>(topic, "k", value)).get();
        if (commit) p.commitTransaction(); else p.abortTransaction();
    }

    static int epoch(Admin admin, String txnId) throws Exception {
        return admin.describeTransactions(List.of(txnId)).all().get().get(txnId).producerEpoch();
    }

    static Properties props(String bootstrap, String txnId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        if (txnId != null) {
            p.put("transactional.id", txnId);
            p.put("key.serializer", StringSerializer.class.getName());
            p.put("value.serializer", StringSerializer.class.getName());
        }
        return p;
    }
}
