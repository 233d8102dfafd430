"""Choosing the remote store from a broker's ``rsm.config.*`` settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from samsa.tiered.store import (
    SECRET_SETTINGS,
    FileSystemRemoteStore,
    FileSystemSettings,
    S3RemoteStore,
    S3Settings,
    open_remote_store,
    remote_store_settings,
)

LOG_DIR = Path("/data/samsa-data")


def test_the_default_is_a_directory_beside_the_first_log_dir() -> None:
    settings = remote_store_settings({}, LOG_DIR)
    assert settings == FileSystemSettings(Path("/data/samsa-data-remote"))
    assert isinstance(open_remote_store(settings), FileSystemRemoteStore)
    chosen = remote_store_settings(
        {"rsm.config.storage.backend.class": "filesystem", "rsm.config.storage.root": "/tier"},
        LOG_DIR,
    )
    assert chosen == FileSystemSettings(Path("/tier"))


def test_s3_settings_use_the_kafka_plugins_names() -> None:
    settings = remote_store_settings(
        {
            "rsm.config.storage.backend.class": "io.aiven.kafka.tieredstorage.storage.s3.S3Storage",
            "rsm.config.storage.s3.bucket.name": "tier",
            "rsm.config.storage.s3.endpoint.url": "http://127.0.0.1:9000",
            "rsm.config.storage.s3.region": "eu-west-1",
            "rsm.config.storage.s3.path.style.access.enabled": "true",
            "rsm.config.storage.aws.access.key.id": "AKIA-ID",
            "rsm.config.storage.aws.secret.access.key": "very-secret",
            "rsm.config.key.prefix": "cluster-a",
            "rsm.config.storage.s3.api.call.timeout": "5000",
            "rsm.config.storage.s3.multipart.upload.part.size": str(16 * 1024 * 1024),
            "rsm.config.storage.s3.bulk.delete.enabled": "false",
        },
        LOG_DIR,
    )
    assert isinstance(settings, S3Settings)
    assert (settings.bucket, settings.endpoint, settings.region) == (
        "tier",
        "http://127.0.0.1:9000",
        "eu-west-1",
    )
    assert settings.path_style and not settings.bulk_delete
    assert settings.prefix == "cluster-a/"
    assert (settings.request_timeout_ms, settings.upload_part_bytes) == (5000, 16 * 1024 * 1024)
    assert "very-secret" not in repr(settings) and "AKIA-ID" not in repr(settings)
    assert "very-secret" not in settings.describe()
    assert isinstance(open_remote_store(settings), S3RemoteStore)
    assert "rsm.config.storage.aws.secret.access.key" in SECRET_SETTINGS


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"rsm.config.storage.backend.class": "gcs"}, "must be s3 or filesystem"),
        ({"rsm.config.storage.backend.class": "s3"}, "bucket.name must be set"),
        (
            {
                "rsm.config.storage.backend.class": "s3",
                "rsm.config.storage.s3.bucket.name": "b",
                "rsm.config.storage.s3.path.style.access.enabled": "yes",
            },
            "true or false",
        ),
        (
            {
                "rsm.config.storage.backend.class": "s3",
                "rsm.config.storage.s3.bucket.name": "b",
                "rsm.config.storage.s3.multipart.upload.part.size": "1000",
            },
            "at least 5242880",
        ),
        (
            {
                "rsm.config.storage.backend.class": "s3",
                "rsm.config.storage.s3.bucket.name": "b",
                "rsm.config.storage.aws.secret.access.key": "hush-hush",
            },
            "both",
        ),
    ],
)
def test_bad_settings_name_the_setting(settings: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message) as failure:
        remote_store_settings(settings, LOG_DIR)
    assert "hush-hush" not in str(failure.value)
