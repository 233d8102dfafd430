"""``MemoryRaftLog``: the ``RaftLog`` protocol in memory, for tests and the simulator.

It models durability the way a disk log behaves: entries are durable only once
flushed, and ``crash`` (a test hook) throws away what was not, so the simulator
can check that Raft never counts on an unflushed entry.  Snapshots are kept as
bytes in a small self-describing form (a JSON header with the voter set, then the
owner's data), so they travel between nodes chunk by chunk like a real file.
"""

from __future__ import annotations

import json
import uuid
from bisect import bisect_right
from collections.abc import Iterator, Sequence

from samsa.raft.persistence.raft_log import Snapshot, SnapshotChunk
from samsa.raft.records import Endpoint, Entry, OffsetAndEpoch, Payload, SnapshotId
from samsa.raft.voters import VoterNode, VoterSet

__all__ = ["MemoryRaftLog", "decode_snapshot", "encode_snapshot"]

_MAGIC = b"SAMSA-RAFT-SNAPSHOT-1\n"


class MemoryRaftLog:
    """An in-memory replicated log (see the module doc); not thread safe."""

    def __init__(self) -> None:
        self._start = 0
        self._entries: list[Entry] = []
        self._flushed = 0
        # (epoch, first offset) for each run of equal epochs in ``_entries``.
        self._epoch_starts: list[tuple[int, int]] = []
        self._snapshots: dict[SnapshotId, bytes] = {}

    # -- positions -------------------------------------------------------------------

    @property
    def start_offset(self) -> int:
        return self._start

    @property
    def end_offset(self) -> int:
        return self._start + len(self._entries)

    @property
    def flushed_end_offset(self) -> int:
        return self._flushed

    @property
    def last_fetched_epoch(self) -> int:
        if self._entries:
            return self._entries[-1].epoch
        base = self.earliest_snapshot_id
        return base.epoch if base is not None else 0

    @property
    def latest_snapshot_id(self) -> SnapshotId | None:
        return max(self._snapshots) if self._snapshots else None

    @property
    def earliest_snapshot_id(self) -> SnapshotId | None:
        if self._start == 0:
            return None
        for snapshot_id in sorted(self._snapshots):
            if snapshot_id.offset == self._start:
                return snapshot_id
        return None

    # -- entries ---------------------------------------------------------------------

    def append_as_leader(self, payloads: Sequence[Payload], epoch: int) -> range:
        if epoch < self.last_fetched_epoch:
            raise ValueError(f"epoch {epoch} is below the last epoch {self.last_fetched_epoch}")
        first = self.end_offset
        for index, payload in enumerate(payloads):
            self._add(Entry(first + index, epoch, payload))
        return range(first, self.end_offset)

    def append_as_follower(self, entries: Sequence[Entry]) -> None:
        for entry in entries:
            if entry.offset != self.end_offset:
                raise ValueError(f"entry at {entry.offset}, log ends at {self.end_offset}")
            if entry.epoch < self.last_fetched_epoch:
                raise ValueError(f"epoch {entry.epoch} below last epoch {self.last_fetched_epoch}")
            self._add(entry)

    def _add(self, entry: Entry) -> None:
        if not self._epoch_starts or self._epoch_starts[-1][0] != entry.epoch:
            self._epoch_starts.append((entry.epoch, entry.offset))
        self._entries.append(entry)

    def truncate_to(self, offset: int) -> None:
        if offset < self._start:
            raise ValueError(f"cannot truncate to {offset}, below the log start {self._start}")
        if offset >= self.end_offset:
            return
        del self._entries[offset - self._start :]
        while self._epoch_starts and self._epoch_starts[-1][1] >= offset:
            self._epoch_starts.pop()
        self._flushed = min(self._flushed, offset)

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        last = self.last_fetched_epoch
        if epoch >= last:
            return OffsetAndEpoch(self.end_offset, last)
        boundaries = list(self._epoch_starts)
        base = self.earliest_snapshot_id
        if base is not None and (not boundaries or boundaries[0][0] != base.epoch):
            boundaries.insert(0, (base.epoch, self._start))
        epochs = [boundary_epoch for boundary_epoch, _ in boundaries]
        index = bisect_right(epochs, epoch)
        higher_start = boundaries[index][1]
        if index == 0:
            return OffsetAndEpoch(self._start, epoch)
        return OffsetAndEpoch(higher_start, boundaries[index - 1][0])

    def read(self, from_offset: int, max_entries: int, max_bytes: int | None = None) -> list[Entry]:
        if from_offset < self._start or from_offset > self.end_offset:
            raise ValueError(f"read at {from_offset} outside [{self._start}, {self.end_offset}]")
        first = from_offset - self._start
        selected = self._entries[first : first + max(1, max_entries)]
        if max_bytes is None or not selected:
            return selected
        total = 0
        for count, entry in enumerate(selected):
            total += entry.size_bytes()
            if total > max_bytes and count > 0:
                return selected[:count]
        return selected

    def control_entries(self, from_offset: int) -> Iterator[Entry]:
        first = max(from_offset, self._start) - self._start
        return (e for e in self._entries[first:] if not isinstance(e.payload, bytes))

    def flush(self, up_to_offset: int) -> None:
        self._flushed = max(self._flushed, min(up_to_offset, self.end_offset))

    def crash(self, lose_unflushed: bool = True) -> None:
        """Test hook: what a crash and the recovery at the next open leave behind.

        With ``lose_unflushed`` the entries not flushed are gone; otherwise they
        happened to reach the disk, and what survived a crash is durable.  A log
        left behind its latest snapshot (a snapshot is durable at once, the entries
        it was taken from may not have been) then starts at that snapshot, as the
        disk log's recovery does.
        """
        if lose_unflushed:
            self.truncate_to(max(self._start, self._flushed))
        latest = self.latest_snapshot_id
        if latest is not None and latest.offset > self._start:
            behind = latest.offset > self.end_offset
            if behind or self._entries[latest.offset - 1 - self._start].epoch != latest.epoch:
                self._entries.clear()
                self._epoch_starts.clear()
                self._start = latest.offset
        self._flushed = self.end_offset

    # -- snapshots -------------------------------------------------------------------

    def create_snapshot(
        self, snapshot_id: SnapshotId, voters: VoterSet | None, data: bytes
    ) -> None:
        if not self._start <= snapshot_id.offset <= self.end_offset:
            raise ValueError(
                f"snapshot {snapshot_id} outside the log [{self._start}, {self.end_offset}]"
            )
        self._snapshots[snapshot_id] = encode_snapshot(voters, data)

    def read_snapshot(
        self, snapshot_id: SnapshotId, position: int, max_bytes: int
    ) -> SnapshotChunk | None:
        raw = self._snapshots.get(snapshot_id)
        if raw is None:
            return None
        return SnapshotChunk(len(raw), raw[position : position + max_bytes])

    def install_snapshot(self, snapshot_id: SnapshotId, raw: bytes) -> None:
        decode_snapshot(raw)  # refuse bytes that do not parse before dropping the log
        self._snapshots = {
            key: value for key, value in self._snapshots.items() if key.offset > snapshot_id.offset
        }
        self._snapshots[snapshot_id] = raw
        self._entries.clear()
        self._epoch_starts.clear()
        self._start = snapshot_id.offset
        self._flushed = snapshot_id.offset

    def load_snapshot(self, snapshot_id: SnapshotId) -> Snapshot | None:
        raw = self._snapshots.get(snapshot_id)
        if raw is None:
            return None
        voters, data = decode_snapshot(raw)
        return Snapshot(snapshot_id, voters, data)

    def delete_before_snapshot(self, snapshot_id: SnapshotId) -> None:
        if snapshot_id not in self._snapshots:
            raise ValueError(f"no snapshot {snapshot_id}")
        if snapshot_id.offset > self.end_offset:
            raise ValueError(f"snapshot {snapshot_id} is beyond the log end {self.end_offset}")
        if snapshot_id.offset > self._start:
            del self._entries[: snapshot_id.offset - self._start]
            self._start = snapshot_id.offset
            self._epoch_starts = []
            for entry in self._entries:
                if not self._epoch_starts or self._epoch_starts[-1][0] != entry.epoch:
                    self._epoch_starts.append((entry.epoch, entry.offset))
            self._flushed = max(self._flushed, self._start)
        self._snapshots = {
            key: value for key, value in self._snapshots.items() if key.offset >= snapshot_id.offset
        }


def encode_snapshot(voters: VoterSet | None, data: bytes) -> bytes:
    """The in-memory log's snapshot bytes: magic, a JSON header line, then ``data``."""
    header = None if voters is None else [_voter_to_json(node) for node in voters]
    return _MAGIC + json.dumps({"voters": header}, sort_keys=True).encode() + b"\n" + data


def decode_snapshot(raw: bytes) -> tuple[VoterSet | None, bytes]:
    if not raw.startswith(_MAGIC):
        raise ValueError("not a snapshot of MemoryRaftLog")
    header_end = raw.index(b"\n", len(_MAGIC))
    header = json.loads(raw[len(_MAGIC) : header_end])
    voters = header["voters"]
    voter_set = None if voters is None else VoterSet(tuple(_voter_from_json(v) for v in voters))
    return voter_set, raw[header_end + 1 :]


def _voter_to_json(node: VoterNode) -> dict[str, object]:
    return {
        "id": node.node_id,
        "directory": None if node.directory_id is None else str(node.directory_id),
        "endpoints": [[e.listener, e.host, e.port] for e in node.endpoints],
    }


def _voter_from_json(value: dict[str, object]) -> VoterNode:
    directory = value["directory"]
    endpoints = value["endpoints"]
    assert isinstance(endpoints, list)
    return VoterNode(
        int(str(value["id"])),
        None if directory is None else uuid.UUID(str(directory)),
        tuple(Endpoint(str(e[0]), str(e[1]), int(e[2])) for e in endpoints),
    )
