"""All the console sees of the broker: one narrow Protocol and the shapes it returns.

The console never imports the server package: the broker hands it an object
that has exactly these facts and services (``server/endpoints/console_port.py`` builds
it), and the types below describe what the console reads of the values they
return, structurally.  Reads of state come from the metadata image, this
broker's replicas, its group coordinator's view and its counters; records and
every change go through ``call``, the broker's own Kafka API handlers with
their authorization checks, as ``caller``; ``authorizes`` answers the same
question those checks ask, for what the console reads directly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence, Sized
from typing import TYPE_CHECKING, Any, Protocol

from samsa.protocol.acl import AclOperation, ResourceType
from samsa.security.caller import Caller

if TYPE_CHECKING:
    from samsa.console.schemas.registry_port import ConsoleRegistry
    from samsa.controller.image.metadata_image import MetadataImage
    from samsa.storage.cleaner.manager import CleanerStats

Body = dict[str, Any]


class Segment(Protocol):
    @property
    def max_timestamp(self) -> int: ...


class ReplicaLog(Protocol):
    @property
    def size_bytes(self) -> int: ...

    @property
    def segments(self) -> Sequence[Segment]: ...


class ProducerStates(Protocol):
    def ongoing_transactions(self) -> Sized: ...


class LocalReplica(Protocol):
    """This broker's replica of a partition."""

    @property
    def high_watermark(self) -> int: ...

    @property
    def log_start_offset(self) -> int: ...

    @property
    def last_stable_offset(self) -> int: ...

    @property
    def log(self) -> ReplicaLog: ...

    @property
    def producer_state(self) -> ProducerStates: ...


class PartitionTiers(Protocol):
    """A tiered partition's two tiers as this broker's replica knows them."""

    @property
    def local_log_start_offset(self) -> int: ...

    @property
    def local_size_bytes(self) -> int: ...

    @property
    def log_start_offset(self) -> int:
        """The partition's start, remote tier included."""
        ...

    @property
    def tiered_end_offset(self) -> int:
        """The last offset in the remote tier (-1: none)."""
        ...

    @property
    def remote_size_bytes(self) -> int: ...

    @property
    def remote_segments(self) -> int: ...

    @property
    def copy_lag_bytes(self) -> int:
        """Bytes of rolled segments not copied yet."""
        ...

    @property
    def copy_lag_segments(self) -> int: ...

    @property
    def ready(self) -> bool:
        """The remote metadata is replayed here (else the remote figures are 0)."""
        ...


class Member(Protocol):
    @property
    def member_id(self) -> str: ...

    @property
    def client_id(self) -> str: ...

    @property
    def client_host(self) -> str: ...

    @property
    def assignment(self) -> Mapping[str, list[int]]: ...


class Group(Protocol):
    """A consumer group this broker coordinates, copied at the call."""

    @property
    def group_id(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def protocol_type(self) -> str | None: ...

    @property
    def protocol(self) -> str | None: ...

    @property
    def members(self) -> Sequence[Member]: ...

    @property
    def committed(self) -> Mapping[tuple[str, int], int]: ...


class ShareGroup(Protocol):
    @property
    def group_id(self) -> str: ...

    @property
    def state(self) -> str: ...

    @property
    def group_epoch(self) -> int: ...

    @property
    def members(self) -> Sequence[Member]: ...


class SharePartition(Protocol):
    @property
    def group_id(self) -> str: ...

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...

    @property
    def start_offset(self) -> int: ...

    @property
    def in_flight(self) -> Mapping[str, int]: ...

    @property
    def archived_total(self) -> int: ...


class BrokerState(Protocol):
    """Read-only answers about this broker (``server/metadata/broker_view.py``)."""

    def groups(self) -> Sequence[Group]: ...

    def share_groups(self) -> Sequence[ShareGroup]: ...

    def share_partitions(self) -> Sequence[SharePartition]: ...

    def high_watermark(self, topic: str, partition: int) -> int | None: ...

    def cleaner_stats(self) -> CleanerStats | None: ...


class RequestCount(Protocol):
    @property
    def count(self) -> int: ...

    @property
    def errors(self) -> int: ...

    @property
    def seconds(self) -> float: ...


class Counters(Protocol):
    """Totals since start (``server/observability/metrics.py``), per topic where they are."""

    @property
    def bytes_in(self) -> Mapping[str, int]: ...

    @property
    def records_in(self) -> Mapping[str, int]: ...

    @property
    def bytes_out(self) -> Mapping[str, int]: ...

    @property
    def records_out(self) -> Mapping[str, int]: ...

    @property
    def requests(self) -> Mapping[tuple[int, int], RequestCount]: ...

    @property
    def isr_shrinks(self) -> int: ...

    @property
    def isr_expands(self) -> int: ...

    @property
    def started(self) -> float: ...

    def totals(self) -> dict[str, int]: ...


class ConsoleBroker(Protocol):
    @property
    def node_id(self) -> int: ...

    @property
    def cluster_id(self) -> str: ...

    @property
    def image(self) -> MetadataImage:
        """The committed metadata as this broker has applied it."""
        ...

    @property
    def state(self) -> BrokerState: ...

    @property
    def counters(self) -> Counters: ...

    @property
    def authorizer_on(self) -> bool:
        """ACLs are enforced (``authorizer.class.name``)."""
        ...

    def setting(self, key: str) -> Any:
        """A broker setting (``config.py``'s keys)."""
        ...

    def quorum_leader(self) -> int | None: ...

    def replica(self, topic: str, partition: int) -> LocalReplica | None:
        """This broker's replica of the partition, if it hosts one."""
        ...

    def tiers(self, topic: str, partition: int) -> PartitionTiers | None:
        """Both tiers of this broker's replica of a partition with
        ``remote.storage.enable`` (None: not hosted here, not tiered, or
        tiered storage is off on this broker)."""
        ...

    def read_records(self, fetch: Body) -> list[Body]:
        """A Fetch request's ``responses``, read as the Fetch handler reads for
        a consumer (leaders only, below the high watermark) without touching
        fetch sessions or consumer state.  Authorization is the caller's job."""
        ...

    def call(
        self, api_key: int, version: int, body: Body, caller: Caller
    ) -> Body | Awaitable[Body | None] | None:
        """The broker's handler of ``api_key``, with its authorization checks,
        as if ``caller`` had sent the request on a Kafka listener."""
        ...

    def authorizes(
        self, caller: Caller, operation: AclOperation, resource_type: ResourceType, name: str
    ) -> bool:
        """What the authorizer answers for ``caller`` (True when ACLs are off)."""
        ...

    def schema_registry(self) -> ConsoleRegistry | None:
        """The schema registry's state on this broker (None: the cluster has none)."""
        ...
