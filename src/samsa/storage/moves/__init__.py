"""Moving a partition's log between the log dirs of one broker (JBOD): future logs and the swap.

Kafka's ``AlterReplicaLogDirs`` moves a replica to another dir of the same
broker by copying it into a *future log* (``<topic>-<partition>.<uuid>-future``
in the target dir) while the current log keeps serving, then swapping the two
(see swap).  The copying itself is replication's (``replication.dir_moves``);
this package owns the files: the names, each dir's future logs, the swap and
the repair of a swap a crash cut short.
"""
