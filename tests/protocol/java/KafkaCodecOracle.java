import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.message.ApiMessageType;

/**
 * Reads message bodies with Kafka's own generated codec and writes them back,
 * for Samsa's schema tests: one case per input line, "KEY VERSION request|response
 * HEX", one answer per output line, "OK HEX" (Kafka's re-encoding) or
 * "ERR reason" (Kafka could not read the bytes, or left some unread).  A line
 * "versions KEY" is answered "OK LOW HIGH", the versions Kafka's codec knows
 * (unstable ones included), or "ERR" for a key Kafka does not have.
 */
public class KafkaCodecOracle {
    public static void main(String[] args) throws Exception {
        HexFormat hex = HexFormat.of();
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.trim().split(" ");
            if (parts.length == 2 && parts[0].equals("versions")) {
                try {
                    ApiMessageType type = ApiMessageType.fromApiKey(Short.parseShort(parts[1]));
                    out.println("OK " + type.lowestSupportedVersion() + " " + type.highestSupportedVersion(true));
                } catch (Exception e) {
                    out.println("ERR " + e);
                }
                out.flush();
                continue;
            }
            if (parts.length < 3) {
                out.println("ERR bad line");
                out.flush();
                continue;
            }
            try {
                short key = Short.parseShort(parts[0]);
                short version = Short.parseShort(parts[1]);
                boolean request = parts[2].equals("request");
                byte[] bytes = parts.length > 3 ? hex.parseHex(parts[3]) : new byte[0];
                ApiMessageType type = ApiMessageType.fromApiKey(key);
                ApiMessage message = request ? type.newRequest() : type.newResponse();
                ByteBuffer buffer = ByteBuffer.wrap(bytes);
                message.read(new ByteBufferAccessor(buffer), version);
                if (buffer.hasRemaining()) {
                    out.println("ERR " + buffer.remaining() + " bytes left unread");
                } else {
                    ObjectSerializationCache cache = new ObjectSerializationCache();
                    ByteBuffer written = ByteBuffer.allocate(message.size(cache, version));
                    message.write(new ByteBufferAccessor(written), cache, version);
                    out.println("OK " + hex.formatHex(written.array()));
                }
            } catch (Exception e) {
                out.println("ERR " + String.valueOf(e).replace('\n', ' '));
            }
            out.flush();
        }
    }
}
