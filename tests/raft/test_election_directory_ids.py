"""Votes count by node id, whether or not the voter set knows directory ids.

A dynamic quorum (KIP-853) records each voter with its log directory id; an
answer to a vote request is known by the node it came from.  Counting by
``is_voter(id)`` alone (directory unknown) would refuse every voter recorded
with a directory id, and such a quorum could never elect a leader.
"""

from __future__ import annotations

import uuid

from samsa.raft.election import EpochElection
from samsa.raft.voters import VoterNode, VoterSet


def test_grants_from_voters_with_directory_ids_make_a_majority() -> None:
    voters = VoterSet(tuple(VoterNode(i, uuid.uuid4()) for i in (1, 2, 3)))
    election = EpochElection(voters)
    election.record_granted(1)
    assert not election.is_vote_granted()
    election.record_granted(2)
    assert election.is_vote_granted()


def test_rejections_from_voters_with_directory_ids_end_the_election() -> None:
    voters = VoterSet(tuple(VoterNode(i, uuid.uuid4()) for i in (1, 2, 3)))
    election = EpochElection(voters)
    election.record_rejected(2)
    election.record_rejected(3)
    assert election.is_vote_rejected()


def test_answers_from_non_voters_do_not_count() -> None:
    election = EpochElection(VoterSet.of([1, 2, 3]))
    election.record_granted(7)
    election.record_granted(1)
    assert not election.is_vote_granted()
