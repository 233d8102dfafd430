"""Which version of each API this client speaks, within what a broker advertises.

The codec (``samsa.protocol.messages``) knows Kafka 4.4's versions, some of
which this client does not implement: it names topics by name, while Fetch
13+, Produce 13, OffsetCommit/OffsetFetch 10 and TxnOffsetCommit 6 name them
by id.  A connection settles on the highest version both the broker and these
bounds allow.
"""

from __future__ import annotations

# Lowest version the client is willing to speak per API (max = what the codec
# knows).  Produce v3 is the first with v2 record batches.
CLIENT_MIN_VERSIONS: dict[int, int] = {0: 3, 1: 4, 2: 1, 3: 1}
# Newest versions a client sends where brokers speak newer ones among themselves:
# AddPartitionsToTxn v4+ is the broker-to-coordinator form (KIP-890), as in Kafka.
# Produce v12, EndTxn v5 and TxnOffsetCommit v5 are transaction version 2
# (KIP-890 part 2: an epoch bump per transaction), which this client does not do.
# The rest are the versions this client implements where the broker's codec
# knows newer ones (Kafka 4.4's): Fetch 13+, OffsetCommit/OffsetFetch 10 name
# topics by id, which this client does not.
CLIENT_MAX_VERSIONS: dict[int, int] = {
    0: 9,  # Produce
    1: 12,  # Fetch
    2: 10,  # ListOffsets
    3: 12,  # Metadata
    8: 9,  # OffsetCommit
    9: 9,  # OffsetFetch
    10: 4,  # FindCoordinator
    15: 5,  # DescribeGroups
    24: 3,  # AddPartitionsToTxn
    25: 3,  # AddOffsetsToTxn
    26: 3,  # EndTxn
    28: 3,  # TxnOffsetCommit
    35: 4,  # DescribeLogDirs
    42: 2,  # DeleteGroups
    60: 1,  # DescribeCluster
    66: 0,  # ListTransactions
    69: 0,  # ConsumerGroupDescribe
    78: 1,  # ShareFetch
    79: 1,  # ShareAcknowledge
}
