"""What a controller operation returns: records to append and the response to send.

Kafka's ``ControllerResult``.  The caller appends ``records`` through Raft (all
in one batch: they are computed together and only make sense together), waits
for them to commit and replays them into the image, and only then sends
``response``: a client must never hear "done" about a change that could still
be lost in a controller failover.  An empty ``records`` means the response can
go at once.

``atomic`` False (Kafka's ``ControllerResult.of`` against ``atomicOf``): each
record stands on its own, so the caller may commit them in several batches,
and a failover may keep a prefix of them.  The timed work (fencing a broker,
elections, reassignments finishing) is of that kind: every partition change
is a whole leader/ISR state, and committing thousands of them as one
transaction made every node replay them in one step that held its loop for
seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from samsa.protocol.metadata_records import MetadataRecord


@dataclass(slots=True)
class ControllerResult:
    records: list[MetadataRecord] = field(default_factory=list)
    response: dict[str, Any] | None = None
    atomic: bool = True
