"""Fixtures of the tiered-storage tests: a real S3 server process and its stores."""

from __future__ import annotations

from samsa.testing.object_store import s3_bucket as s3_bucket
from samsa.testing.object_store import s3_server as s3_server
