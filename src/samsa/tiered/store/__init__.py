"""Remote stores: where tiered segments live (an S3 bucket, or a directory)."""

from samsa.tiered.store.base import (
    ObjectInfo,
    RemoteObjectNotFoundError,
    RemoteStorageError,
    RemoteStore,
    RetriableRemoteStorageError,
)
from samsa.tiered.store.filesystem import FileSystemRemoteStore
from samsa.tiered.store.s3 import S3RemoteStore, S3Settings
from samsa.tiered.store.settings import (
    RSM_PREFIX,
    SECRET_SETTINGS,
    FileSystemSettings,
    default_filesystem_root,
    open_remote_store,
    remote_store_settings,
)

__all__ = [
    "RSM_PREFIX",
    "SECRET_SETTINGS",
    "FileSystemRemoteStore",
    "FileSystemSettings",
    "ObjectInfo",
    "RemoteObjectNotFoundError",
    "RemoteStorageError",
    "RemoteStore",
    "RetriableRemoteStorageError",
    "S3RemoteStore",
    "S3Settings",
    "default_filesystem_root",
    "open_remote_store",
    "remote_store_settings",
]
