"""Kafka's ``quorum-state`` file: the election state that must survive a crash.

A node may vote once per epoch, so the epoch and the vote are on disk before a
vote is answered (the machine orders ``PersistElectionState`` before the
``Respond``).  The file is Kafka's JSON (``leaderId``, ``leaderEpoch``,
``votedId``, ``votedDirectoryId``, ``currentVoters``, ``data_version``), written
whole through an atomic replace, so a crash leaves the old or the new state,
never a torn one.  An unreadable file stops the node with a clear message: a
guess could let it vote twice.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from samsa.errors import ConfigError
from samsa.raft.election import ElectionState
from samsa.storage.files.atomic_file import atomic_write

FILE_NAME = "quorum-state"
NO_ID = -1


def read_election_state(directory: Path) -> ElectionState | None:
    path = directory / FILE_NAME
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
        voted_directory = data.get("votedDirectoryId")
        voters = data.get("currentVoters")
        return ElectionState(
            epoch=int(data["leaderEpoch"]),
            leader_id=None if int(data.get("leaderId", NO_ID)) < 0 else int(data["leaderId"]),
            voted_id=None if int(data.get("votedId", NO_ID)) < 0 else int(data["votedId"]),
            voted_directory_id=uuid.UUID(voted_directory) if voted_directory else None,
            voters=None if voters is None else tuple(int(v["voterId"]) for v in voters),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"{path} is unreadable ({exc}); restore it or remove the node's metadata"
        ) from None


def write_election_state(directory: Path, state: ElectionState) -> None:
    data: dict[str, object] = {
        "leaderId": NO_ID if state.leader_id is None else state.leader_id,
        "leaderEpoch": state.epoch,
        "votedId": NO_ID if state.voted_id is None else state.voted_id,
    }
    if state.voted_directory_id is not None:
        data["votedDirectoryId"] = str(state.voted_directory_id)
    if state.voters is not None:
        data["currentVoters"] = [{"voterId": v} for v in state.voters]
        data["data_version"] = 0
    else:
        data["data_version"] = 1
    atomic_write(directory / FILE_NAME, json.dumps(data, sort_keys=True).encode())
