"""Moving hosted replicas between this broker's log dirs: Kafka's ReplicaAlterLogDirsManager.

AlterReplicaLogDirs (``kafka-reassign-partitions`` with ``log_dirs``) asks a
broker to move a replica it hosts to another of its log dirs.  As Kafka does:
a future log is made in the target dir (storage/moves), an "alter log dirs"
copier fills it from the current log -- read locally, in a worker thread, at
most ``replica.alter.log.dirs.io.max.bytes.per.second`` -- until it holds
everything the current log does; the controller is told the replica's new dir
(AssignReplicasToDirs, KIP-858) and, once it has recorded it, the future log
replaces the current one on the event loop, between two appends.

* promotion: the sans-I/O state of one move and the next step it takes;
* copier: one copy pass (blocking; a worker thread runs it);
* copy_task: the task that carries one move through its passes, the controller, the swap;
* mover: the moves of the broker, the API's checks and answers.
"""
