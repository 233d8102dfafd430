import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.server.log.remote.metadata.storage.RemoteLogMetadataTopicPartitioner;
import org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde;
import org.apache.kafka.server.log.remote.storage.RemoteLogMetadata;

/**
 * Kafka's own answers for Samsa's __remote_log_metadata tests, one per input line.
 *
 *   serde HEX                      -> "HEX2 TAB toString": Kafka decodes the record Samsa
 *                                     wrote, then writes it again with its own serde
 *   partition TOPIC_ID PART COUNT  -> the metadata partition Kafka's partitioner chooses
 */
public class RemoteLogMetadataBytes {
    public static void main(String[] args) throws Exception {
        RemoteLogMetadataSerde serde = new RemoteLogMetadataSerde();
        HexFormat hex = HexFormat.of();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split(" ");
            if (words[0].equals("serde")) {
                RemoteLogMetadata metadata = serde.deserialize(hex.parseHex(words[1]));
                System.out.println(hex.formatHex(serde.serialize(metadata)) + "\t" + metadata);
            } else if (words[0].equals("partition")) {
                TopicIdPartition tip = new TopicIdPartition(Uuid.fromString(words[1]),
                        new TopicPartition("t", Integer.parseInt(words[2])));
                RemoteLogMetadataTopicPartitioner partitioner =
                        new RemoteLogMetadataTopicPartitioner(Integer.parseInt(words[3]));
                System.out.println(partitioner.metadataPartition(tip));
            } else {
                throw new IllegalArgumentException("unknown command: " + line);
            }
        }
    }
}
