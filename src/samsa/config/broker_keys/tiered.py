"""Broker keys of tiered storage (KIP-405; ``samsa.tiered``, docs/tiered-storage.md):
the remote log manager's tasks, quotas and local retention, the metadata topic,
and the remote store's ``rsm.config.*`` settings."""

from __future__ import annotations

from samsa.config.values import ConfigKey, int_between, parse_bool

TIERED_KEYS: list[ConfigKey] = [
    ConfigKey(
        "log.local.retention.ms",
        int,
        -2,
        "Tiered storage: how long a segment stays on local disk (-2 = log.retention.ms).",
    ),
    ConfigKey(
        "log.local.retention.bytes",
        int,
        -2,
        "Tiered storage: local bytes per partition kept (-2 = log.retention.bytes).",
    ),
    # The remote log manager's settings, the __remote_log_metadata topic's
    # (rlmm.config.) and the built-in remote store's (rsm.config., the names of
    # Aiven's S3 plugin for Kafka, see samsa.tiered.store.settings; an empty
    # value there means unset: the store's own default).
    ConfigKey(
        "remote.log.storage.system.enable",
        parse_bool,
        False,
        "Tiered storage on this broker: topics with remote.storage.enable=true copy closed "
        "segments to the remote store (a directory beside the first log dir unless "
        "rsm.config.storage.backend.class=s3).",
    ),
    ConfigKey(
        "remote.log.storage.manager.impl.prefix",
        str,
        "rsm.config.",
        "Prefix of the remote store's settings (Samsa reads rsm.config.*).",
    ),
    ConfigKey(
        "remote.log.metadata.manager.impl.prefix",
        str,
        "rlmm.config.",
        "Prefix of the remote log metadata topic's settings (Samsa reads rlmm.config.*).",
    ),
    ConfigKey(
        "remote.log.manager.task.interval.ms",
        int_between(1, 2**63 - 1),
        30000,
        "How often each led partition copies rolled segments and applies remote retention.",
    ),
    ConfigKey(
        "remote.log.reader.threads",
        int_between(1, 2**63 - 1),
        10,
        "Remote reads (fetches below the local log start) run at once at most.",
    ),
    ConfigKey(
        "remote.log.reader.max.pending.tasks",
        int_between(1, 2**63 - 1),
        100,
        "Remote reads waiting for a reader at most; more answer a retriable error.",
    ),
    ConfigKey(
        "remote.fetch.max.wait.ms",
        int_between(1, 2**63 - 1),
        500,
        "Longest a fetch of tiered data waits for the remote store.",
    ),
    ConfigKey(
        "remote.list.offsets.request.timeout.ms",
        int_between(1, 2**63 - 1),
        30000,
        "Longest a ListOffsets by timestamp waits for the remote tier's indexes.",
    ),
    ConfigKey(
        "remote.log.manager.copy.max.bytes.per.second",
        int_between(1, 2**63 - 1),
        2**63 - 1,
        "Bytes per second this broker copies to the remote store at most.",
    ),
    ConfigKey(
        "remote.log.manager.copy.quota.window.num",
        int_between(1, 2**63 - 1),
        11,
        "Samples the copy rate is measured over.",
    ),
    ConfigKey(
        "remote.log.manager.copy.quota.window.size.seconds",
        int_between(1, 2**63 - 1),
        1,
        "Length of each copy rate sample, in seconds.",
    ),
    ConfigKey(
        "remote.log.manager.fetch.max.bytes.per.second",
        int_between(1, 2**63 - 1),
        2**63 - 1,
        "Bytes per second this broker reads from the remote store for fetches at most.",
    ),
    ConfigKey(
        "remote.log.manager.fetch.quota.window.num",
        int_between(1, 2**63 - 1),
        11,
        "Samples the remote fetch rate is measured over.",
    ),
    ConfigKey(
        "remote.log.manager.fetch.quota.window.size.seconds",
        int_between(1, 2**63 - 1),
        1,
        "Length of each remote fetch rate sample, in seconds.",
    ),
    ConfigKey(
        "remote.log.index.file.cache.total.size.bytes",
        int_between(1, 2**63 - 1),
        1073741824,
        "Bytes of remote segments' indexes kept in <first log dir>/remote-log-index-cache.",
    ),
    ConfigKey(
        "remote.log.manager.orphan.grace.ms",
        int_between(0, 2**63 - 1),
        300000,
        "Samsa's: a copy left unfinished (COPY_SEGMENT_STARTED) and objects no remote "
        "metadata names are deleted by the partition's leader once this old.",
    ),
    ConfigKey(
        "rlmm.config.remote.log.metadata.consume.wait.ms",
        int_between(1, 2**63 - 1),
        120000,
        "Longest a publish to __remote_log_metadata waits to be replayed here.",
    ),
    ConfigKey(
        "rlmm.config.remote.log.metadata.initialization.retry.max.timeout.ms",
        int_between(1, 2**63 - 1),
        120000,
        "Longest a partition's remote metadata replay may take before it is reported "
        "stuck (and tried again).",
    ),
    ConfigKey(
        "rlmm.config.remote.log.metadata.initialization.retry.interval.ms",
        int_between(1, 2**63 - 1),
        100,
        "Pause before a failed replay of a partition's remote metadata is tried again.",
    ),
    ConfigKey(
        "rlmm.config.remote.log.metadata.topic.num.partitions",
        int_between(1, 2**63 - 1),
        50,
        "Partitions of __remote_log_metadata when this broker creates it.",
    ),
    ConfigKey(
        "rlmm.config.remote.log.metadata.topic.replication.factor",
        int_between(1, 2**63 - 1),
        3,
        "Replication factor of __remote_log_metadata (at most the live brokers).",
    ),
    ConfigKey(
        "rlmm.config.remote.log.metadata.topic.retention.ms",
        int,
        -1,
        "retention.ms of __remote_log_metadata (-1: kept forever, as it must be).",
    ),
    ConfigKey(
        "rsm.config.storage.backend.class",
        str,
        "",
        "Remote store: filesystem (the default) or s3.",
    ),
    ConfigKey(
        "rsm.config.storage.root",
        str,
        "",
        "Directory of the filesystem store (default: <first log dir>-remote beside it).",
    ),
    ConfigKey("rsm.config.storage.s3.bucket.name", str, "", "Bucket of the s3 store."),
    ConfigKey(
        "rsm.config.storage.s3.endpoint.url",
        str,
        "",
        "Endpoint of an S3-compatible server (default: AWS, from the region).",
    ),
    ConfigKey("rsm.config.storage.s3.region", str, "", "Region of the bucket (default us-east-1)."),
    ConfigKey(
        "rsm.config.storage.s3.path.style.access.enabled",
        str,
        "",
        "true: bucket in the path, as most S3-compatible servers want (default false).",
    ),
    ConfigKey(
        "rsm.config.storage.aws.access.key.id",
        str,
        "",
        "Access key (secret; default: AWS's chain: environment, profile).",
    ),
    ConfigKey("rsm.config.storage.aws.secret.access.key", str, "", "Secret key (secret)."),
    ConfigKey("rsm.config.storage.aws.session.token", str, "", "Session token (secret, optional)."),
    ConfigKey("rsm.config.key.prefix", str, "", "Prefix of every object key."),
    ConfigKey(
        "rsm.config.storage.s3.api.call.timeout", str, "", "ms per S3 request (default 30000)."
    ),
    ConfigKey(
        "rsm.config.storage.s3.multipart.upload.part.size",
        str,
        "",
        "Bytes per part of a multipart upload (default 8 MiB).",
    ),
    ConfigKey(
        "rsm.config.storage.s3.bulk.delete.enabled",
        str,
        "",
        "false for servers without DeleteObjects (default true).",
    ),
    ConfigKey(
        "log.remote.copy.lag.bytes", int, -1, "Local bytes before a copy (accepted, not used)."
    ),
    ConfigKey("log.remote.copy.lag.ms", int, 0, "Age before a copy (accepted, not used)."),
]
