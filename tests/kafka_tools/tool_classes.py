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
ACLS = "org.apache.kafka.tools.AclCommand"

# Tools that moved out of the Scala core after 4.1 (KAFKA-14525), by their 4.1 class.
_BEFORE_4_2 = {CONFIGS: "kafka.admin.ConfigCommand"}


def main_class_of(tool: str, kafka_version: str) -> str:
    """``tool``'s main class in ``kafka_version`` (the older references name a
    few tools by their former class)."""
    major, minor = (int(part) for part in kafka_version.split(".")[:2])
    if (major, minor) < (4, 2):
        return _BEFORE_4_2.get(tool, tool)
    return tool
