import java.nio.ByteBuffer;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValueJsonConverter;

/**
 * Reads a ConsumerGroupMemberMetadataValue record value (version prefix included,
 * as hex in args[0]) with Kafka's generated class; prints its JSON and, on a
 * second line, the value as Kafka writes it back (hex).
 */
public class MemberMetadataOracle {
    public static void main(String[] args) {
        byte[] bytes = hex(args[0]);
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        short version = buffer.getShort();
        ConsumerGroupMemberMetadataValue value =
            new ConsumerGroupMemberMetadataValue(new ByteBufferAccessor(buffer), version);
        System.out.println(ConsumerGroupMemberMetadataValueJsonConverter.write(value, version));
        ByteBuffer written = MessageUtil.toVersionPrefixedByteBuffer(version, value);
        byte[] out = new byte[written.remaining()];
        written.get(out);
        StringBuilder text = new StringBuilder();
        for (byte b : out) text.append(String.format("%02x", b));
        System.out.println(text);
    }

    static byte[] hex(String text) {
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }
}
