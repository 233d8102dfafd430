"""StreamsGroupTopologyDescriptionUpdate (key 93, KIP-1331): a member hands the broker its
topology's full description for a topology description plugin to keep.  Samsa
has no such plugin and answers UNSUPPORTED_VERSION, as Kafka does when none is
configured (its heartbeats never ask for the description either)."""

from samsa.protocol.messages.streams_group_describe import TOPOLOGY_DESCRIPTION
from samsa.protocol.schema import F, api

API = api(
    93,
    "StreamsGroupTopologyDescriptionUpdate",
    valid="0",
    flexible="0+",
    request=[
        F("group_id", "string"),
        F("member_id", "string"),
        F("topology_epoch", "int32"),
        F("topology_description", "struct", fields=TOPOLOGY_DESCRIPTION),
    ],
    response=[
        F("throttle_time_ms", "int32"),
        F("error_code", "int16"),
        F("error_message", "string", nullable="0+", default=None),
    ],
)
