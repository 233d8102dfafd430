"""Node-to-node requests over the Kafka wire protocol, for asyncio code.

The broker, the Raft driver and the follower fetchers all talk to other nodes
(votes, metadata fetches, heartbeats, replica fetches).  They run on the
broker's event loop, so they cannot use ``samsa.client`` (thread based, built
for applications); this package is the small asyncio counterpart: one
pipelined connection per peer, requests matched to responses by correlation
id.  It depends only on ``samsa.protocol``.
"""

from samsa.net.channel import ChannelError, NodeChannel, Traffic
from samsa.net.channels import ChannelPool

__all__ = ["ChannelError", "ChannelPool", "NodeChannel", "Traffic"]
