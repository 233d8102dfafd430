"""Main classes of Kafka 4.4's command-line tools (what ``bin/kafka-*.sh`` run),
and where the previous reference (4.1.1) kept the ones that moved since."""

TOPICS = "org.apache.kafka.tools.TopicCommand"
CONFIGS = "org.apache.kafka.tools.ConfigCommand"
CONSOLE_PRODUCER = "org.apache.kafka.tools.ConsoleProducer"
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
DELETE_RECORDS = "org.apache.kafka.tools.DeleteRecordsCommand"
LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"
LEADER_ELECTION = "org.apache.kafka.tools.LeaderElectionCommand"
REASSIGN_PARTITIONS = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
METADATA_QUORUM = "org.apache.kafka.tools.MetadataQuorumCommand"
FEATURES = "org.apache.kafka.tools.FeatureCommand"
BROKER_API_VERSIONS = "org.apache.kafka.tools.BrokerApiVersionsCommand"
VERIFIABLE_PRODUCER = "org.apache.kafka.tools.VerifiableProducer"
VERIFIABLE_CONSUMER = "org.apache.kafka.tools.VerifiableConsumer"
CONSUMER_PERFORMANCE = "org.apache.kafka.tools.ConsumerPerformance"
CONSOLE_SHARE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleShareConsumer"
SHARE_GROUPS = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
STREAMS_GROUPS = "org.apache.kafka.tools.streams.StreamsGroupCommand"
DUMP_LOG_SEGMENTS = "org.apache.kafka.tools.DumpLogSegments"
ACLS = "org.apache.kafka.tools.AclCommand"
DELEGATION_TOKENS = "org.apache.kafka.tools.DelegationTokenCommand"

# Tools that moved out of the Scala core after 4.1 (KAFKA-14525), by their 4.1 class.
_BEFORE_4_2 = {
    CONFIGS: "kafka.admin.ConfigCommand",
    DUMP_LOG_SEGMENTS: "kafka.tools.DumpLogSegments",
}


def _before_4_2(kafka_version: str) -> bool:
    major, minor = (int(part) for part in kafka_version.split(".")[:2])
    return (major, minor) < (4, 2)


def property_flag(tool: str, kafka_version: str) -> str:
    """The console tools' flag for their formatter's / reader's properties:
    ``--formatter-property`` / ``--reader-property`` since Kafka 4.2 (KIP-1147;
    the old ``--property`` prints a deprecation line into the output)."""
    if _before_4_2(kafka_version):
        return "--property"
    return {CONSOLE_CONSUMER: "--formatter-property", CONSOLE_PRODUCER: "--reader-property"}[tool]


def client_config_flag(tool: str, kafka_version: str) -> str:
    """The console tools' flag for a client properties file: ``--command-config``
    since Kafka 4.2 (KIP-1147), ``--producer.config`` / ``--consumer.config`` before."""
    if not _before_4_2(kafka_version):
        return "--command-config"
    return {CONSOLE_PRODUCER: "--producer.config", CONSOLE_CONSUMER: "--consumer.config"}[tool]


def main_class_of(tool: str, kafka_version: str) -> str:
    """``tool``'s main class in ``kafka_version`` (the older references name a
    few tools by their former class)."""
    return _BEFORE_4_2.get(tool, tool) if _before_4_2(kafka_version) else tool
