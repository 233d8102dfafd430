"""The node's place in the metadata quorum: Raft, the metadata loader, the controller.

The metadata log (``__cluster_metadata-0``) is recovered and the Raft machine
starts from its stored election state; the metadata loader builds the image
only from committed records.  With ``process.roles`` naming the controller,
the controller server attaches to the loader too.  The voters are static
(``controller.quorum.voters``), found through ``controller.quorum.bootstrap.servers``,
or, on a single node with neither, this node alone (bootstrapped at once).

Requests to the active controller (registrations, heartbeats, forwarded
requests) go through a ``ControllerLink``: over the network to the Raft
leader's controller listener, or in-process when this node is the active
controller.  A data dir of the old single-node metadata file is migrated into
the metadata log once this node leads.
"""

from __future__ import annotations

import dataclasses
import random
import uuid
from functools import partial
from pathlib import Path
from typing import Any

from samsa.controller.controller_config import ControllerConfig
from samsa.controller.legacy_migration import (
    legacy_metadata_exists,
    legacy_records,
    retire_legacy_metadata,
)
from samsa.net import ChannelPool
from samsa.protocol.metadata_records import encode_metadata_record
from samsa.raft.config import QuorumConfig
from samsa.raft.driver import RaftDriver
from samsa.raft.machine import RaftMachine
from samsa.raft.persistence.disk_log import METADATA_LOG_CONFIG, DiskRaftLog
from samsa.raft.persistence.quorum_state_file import read_election_state
from samsa.raft.records import Endpoint
from samsa.raft.voters import VoterNode, VoterSet
from samsa.security.authorizer.standard import StandardAuthorizer
from samsa.security.scram_spec import parse_scram_specs
from samsa.server.access.authorizer_setup import AclPublisher
from samsa.server.controller_server import ControllerServer
from samsa.server.metadata.controller_link import ControllerLink
from samsa.server.metadata.loader import MetadataLoader
from samsa.server.node_listeners import NodeListeners
from samsa.storage.log_dir_failure import LogDirFailureChannel


class NodeQuorum(NodeListeners):
    """The quorum part of a ``Node`` (which sets these attributes)."""

    node_id: int
    cluster_id: str
    directory_id: uuid.UUID | None
    authorizer: StandardAuthorizer | None
    log_dir_failures: LogDirFailureChannel
    raft: RaftDriver | None
    raft_log: DiskRaftLog | None
    controller: ControllerServer | None
    _raft_channels: ChannelPool
    _migrated_from: Path | None

    def voter_nodes(self) -> list[dict[str, Any]]:
        """DescribeQuorum v2's ``nodes``: each voter's controller listeners."""
        assert self.raft is not None
        machine = self.raft.machine
        out = []
        for voter in machine.voter_set:
            endpoints = machine.endpoints(voter.node_id)
            out.append(
                {
                    "node_id": voter.node_id,
                    "listeners": [
                        {"name": e.listener, "host": e.host, "port": e.port} for e in endpoints
                    ],
                }
            )
        return out

    def _start_quorum(self, data_dir: Path) -> None:
        config = self.config
        settings = self.settings
        # A damaged snapshot is refetched from the other voters; a node alone
        # refuses to start instead of losing its metadata.
        others = len(settings.static_voters) > 1 or bool(settings.bootstrap_servers)
        raft_log = DiskRaftLog.open(
            data_dir,
            config=dataclasses.replace(
                METADATA_LOG_CONFIG, segment_bytes=config["metadata.log.segment.bytes"]
            ),
            refetch_lost_prefix=others,
        )
        raft_log.report_io_errors_to(
            partial(self.log_dir_failures.maybe_add_offline, str(data_dir))
        )
        self.raft_log = raft_log
        listener_name = self.controller_listener_name
        static = None
        if settings.static_voters:
            static = VoterSet(
                tuple(
                    VoterNode(v.node_id, None, (Endpoint(listener_name, v.host, v.port),))
                    for v in settings.static_voters
                )
            )
        quorum_config = QuorumConfig(
            election_timeout_ms=config["controller.quorum.election.timeout.ms"],
            fetch_timeout_ms=config["controller.quorum.fetch.timeout.ms"],
            election_backoff_max_ms=config["controller.quorum.election.backoff.max.ms"],
            request_timeout_ms=config["controller.quorum.request.timeout.ms"],
            retry_backoff_ms=config["controller.quorum.retry.backoff.ms"],
            static_voters=static,
            bootstrap_servers=tuple(f"{h}:{p}" for h, p in settings.bootstrap_servers),
        )
        endpoints = self.controller_endpoints() if settings.is_controller else ()
        bootstrap = None
        if settings.standalone:
            bootstrap = VoterSet((VoterNode(self.node_id, self.directory_id, endpoints),))
        election = read_election_state(raft_log.directory)
        machine = RaftMachine(
            node_id=self.node_id,
            config=quorum_config,
            log=raft_log,
            random_source=random.Random(),
            election_state=election,
            directory_id=self.directory_id,
            listeners=endpoints,
            bootstrap_voters=bootstrap,
        )
        loader = MetadataLoader(
            raft_log,
            snapshot_bytes=config["metadata.log.max.record.bytes.between.snapshots"],
            snapshot_interval_ms=config["metadata.log.max.snapshot.interval.ms"],
        )
        self.loader = loader
        if self.authorizer is not None:
            loader.add_publisher(AclPublisher(self.authorizer, loader.image))
        self.raft = RaftDriver(
            machine,
            raft_log,
            raft_log.directory,
            self._raft_transport,
            loader,
            cluster_id=self.cluster_id,
            listener_name=listener_name,
            bootstrap_servers=settings.bootstrap_servers,
        )
        raft = self.raft
        loader._create_snapshot = raft.create_snapshot
        if settings.is_controller:
            controller_config = ControllerConfig.from_properties(
                dict(config.items()),
                topic_defaults=config.topic_defaults(),
                static_broker_props=config.explicit_values(),
                cluster_id=self.cluster_id,
                scram_seeds=tuple(
                    (spec.name, spec.mechanism, spec.password, spec.iterations)
                    for spec in parse_scram_specs(
                        str(config["scram.bootstrap.credentials"]), "scram.bootstrap.credentials"
                    )
                ),
            )
            self.controller = ControllerServer(
                self.node_id,
                raft,
                loader,
                controller_config,
                voter_nodes=self.voter_nodes,
                authorizer=self.authorizer,
            )
            loader.add_publisher(self.controller)
        if (
            settings.standalone
            and legacy_metadata_exists(config.data_dir)
            and raft_log.end_offset == 0
        ):
            self._migrated_from = config.data_dir

    def _controller_link(self, raft: RaftDriver, channels: ChannelPool) -> ControllerLink:
        return ControllerLink(
            self.node_id,
            lambda: raft.leader_id,
            raft.wait_leader_change,
            channels,
            self._controller_address,
            self.controller,
            attempt_timeout_ms=int(self.config["controller.quorum.request.timeout.ms"]),
        )

    def _controller_address(self, node_id: int) -> tuple[str, int] | None:
        """Where ``node_id`` serves the controller APIs (its controller listener)."""
        assert self.raft is not None
        endpoints = self.raft.machine.endpoints(node_id)
        for endpoint in endpoints:
            if endpoint.listener == self.controller_listener_name:
                return endpoint.host, endpoint.port
        return (endpoints[0].host, endpoints[0].port) if endpoints else None

    async def _raft_transport(
        self,
        host: str,
        port: int,
        api_key: int,
        version: int,
        body: dict[str, Any],
        timeout_ms: int,
    ) -> dict[str, Any]:
        channel = self._raft_channels.to_address(host, port)
        return await channel.request(api_key, version, body, timeout_ms=timeout_ms)

    async def _migrate_legacy_metadata(self) -> None:
        """Append the old single-node metadata as this node's first data records."""
        assert self.raft is not None and self.loader is not None
        data_dir = self._migrated_from
        assert data_dir is not None
        records = legacy_records(data_dir, self.node_id)
        while not self.raft.machine.is_leader:
            await self.raft.wait_leader_change()
        if records:
            last = self.raft.append([encode_metadata_record(r) for r in records])
            await self.loader.wait_applied(last)
        retire_legacy_metadata(data_dir)
