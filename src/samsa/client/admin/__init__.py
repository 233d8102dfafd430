"""The Samsa admin client: ``Admin`` and its result values."""

from __future__ import annotations

from samsa.client.admin.admin import EARLIEST, LATEST, Admin
from samsa.client.admin.families.delegation_tokens import DelegationToken
from samsa.client.admin.families.elections import ElectionType
from samsa.client.admin.families.quorum import QuorumInfo, ReplicaInfo
from samsa.client.admin.families.reassignments import PartitionReassignment
from samsa.client.admin.results import (
    BrokerInfo,
    ClusterDescription,
    ConfigEntry,
    GroupDescription,
    GroupListing,
    MemberDescription,
    NewTopic,
    PartitionDescription,
    TopicDescription,
)

__all__ = [
    "EARLIEST",
    "LATEST",
    "Admin",
    "BrokerInfo",
    "ClusterDescription",
    "ConfigEntry",
    "DelegationToken",
    "ElectionType",
    "GroupDescription",
    "GroupListing",
    "MemberDescription",
    "NewTopic",
    "PartitionDescription",
    "PartitionReassignment",
    "QuorumInfo",
    "ReplicaInfo",
    "TopicDescription",
]
