"""What the broker does when a log dir fails (Kafka's ReplicaManager.handleLogDirFailure).

The storage layer takes a dir offline on its first I/O error
(``samsa.storage.log_dir_failure``); from then on its partitions answer
KAFKA_STORAGE_ERROR to producers, consumers and followers.  This handler does
the broker's part, on the event loop whatever thread the error came from:

* the controller hears of the dir in every heartbeat (``offline_log_dirs``,
  BrokerHeartbeat v1), as Kafka's brokers tell it since KIP-858;
* the dir shows in ``/metrics`` (``samsa_offline_log_dirs``) and in
  DescribeLogDirs (KAFKA_STORAGE_ERROR for that dir);
* while other log dirs work (JBOD), the broker keeps serving their
  partitions;
* when no log dir is left (with a single dir, at its first failure), the
  broker stops, as Kafka's does ("all log dirs have failed"):
  a controlled shutdown moves its leaderships to the other in-sync replicas,
  nothing more is written to the failed dir (no checkpoints, no clean-shutdown
  marker), and the process exits with status 1.  Once the disk works again a
  restart recovers every log from its recovery point, truncates a torn tail,
  and the replicas catch up from the new leaders and rejoin the ISR.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from samsa.server.metadata.broker_lifecycle import BrokerLifecycle
from samsa.storage.log_dir_failure import LogDirFailureChannel

log = logging.getLogger("samsa.server")

EXIT_LOG_DIRS_FAILED = 1
"""Exit status of a broker that stopped because every log dir failed."""


class LogDirFailureHandler:
    """Reacts to failed log dirs of one broker; created on the broker's event loop."""

    def __init__(
        self,
        channel: LogDirFailureChannel,
        directory_ids: dict[str, bytes],
        lifecycle: Callable[[], BrokerLifecycle | None],
        request_stop: Callable[[str, int], None],
    ) -> None:
        self.channel = channel
        self.log_dirs = list(directory_ids)
        self._directory_ids = directory_ids
        self._lifecycle = lifecycle
        self._request_stop = request_stop
        self._loop = asyncio.get_running_loop()
        channel.add_listener(self._on_offline)

    def offline_dirs(self) -> dict[str, str]:
        """Failed log dir -> the error that took it offline."""
        return self.channel.offline_dirs()

    def _on_offline(self, log_dir: str, reason: str) -> None:
        # Any thread: appends fail on the loop, fsyncs and checkpoints in workers.
        self._loop.call_soon_threadsafe(self._handle, log_dir, reason)

    def _handle(self, log_dir: str, reason: str) -> None:
        lifecycle = self._lifecycle()
        if lifecycle is not None:
            lifecycle.report_offline_log_dir(self._directory_ids[log_dir])
        offline = self.channel.offline_dirs()
        if any(d not in offline for d in self.log_dirs):
            return
        why = f"all log dirs have failed ({', '.join(self.log_dirs)}: {reason})"
        log.error("shutting down the broker: %s", why)
        self._request_stop(why, EXIT_LOG_DIRS_FAILED)
