import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Word count over Samsa topics: lines from args[2] are split into lower-case
 * words, counted in a state store backed by a changelog topic, and every new
 * count is written to args[3] (key = word, value = count as a long). Runs until
 * SIGTERM; prints "RUNNING" once the application reaches the RUNNING state so
 * the test knows when to start producing.
 *
 * Usage: SamsaWordCount BOOTSTRAP APPLICATION_ID INPUT_TOPIC OUTPUT_TOPIC STATE_DIR [GUARANTEE [THREADS [GROUP_PROTOCOL]]]
 *
 * GUARANTEE is a processing.guarantee value (at_least_once by default,
 * exactly_once_v2 for transactional produce with offsets sent to the
 * transaction and read_committed consumers).  THREADS is num.stream.threads
 * (1 by default); under exactly_once_v2 each thread has a transactional
 * producer of its own.  GROUP_PROTOCOL is group.protocol: classic (the default,
 * the consumer group protocol with Streams' own assignor) or streams (KIP-1071:
 * the broker's streams group coordinator assigns tasks and creates the internal
 * topics).
 *
 * The input line "halt now" makes the JVM halt (as SIGKILL would: no commit, no
 * abort, no LeaveGroup) in the middle of processing, so inside an open
 * transaction; only the first time, remembered by a file in STATE_DIR, so the
 * restarted instance reprocesses that line and counts it.
 */
public final class SamsaWordCount {
    public static void main(String[] args) throws InterruptedException {
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG,
            args.length > 5 ? args[5] : StreamsConfig.AT_LEAST_ONCE);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG,
            args.length > 6 ? Integer.parseInt(args[6]) : 1);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        String protocol = args.length > 7 ? args[7] : "classic";
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        if (protocol.equals("classic")) {
            // A SIGKILLed instance's member leaves the group after this, not Streams' 45 s
            // (under the streams protocol the broker's group.streams.session.timeout.ms decides).
            props.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 6000);
        }

        StreamsBuilder builder = new StreamsBuilder();
        Path halted = Paths.get(args[4], "halted-once");
        builder.<String, String>stream(args[2])
            .peek((key, line) -> haltOnceOn(line, halted))
            .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word)
            .count()
            .toStream()
            .to(args[3], Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        CountDownLatch stopped = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println(now);
            System.out.flush();
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                stopped.countDown();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // close returns once the state is NOT_RUNNING, which Streams sets
            // before it calls the listener, from its own close thread; the JVM
            // halts when this hook ends, so the listener may never print it.
            if (streams.close(Duration.ofSeconds(20))) {
                System.out.println(streams.state());
            } else {
                System.out.println("CLOSE_TIMED_OUT");
            }
            System.out.flush();
            stopped.countDown();
        }));
        streams.start();
        stopped.await();
    }

    private static void haltOnceOn(String line, Path marker) {
        if (!line.equals("halt now") || Files.exists(marker)) {
            return;
        }
        try {
            Files.createFile(marker);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Runtime.getRuntime().halt(137);
    }
}
