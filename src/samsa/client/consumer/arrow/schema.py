"""The Arrow schema of fetched records, and the one place pyarrow is imported from.

pyarrow is an optional dependency (the ``arrow`` extra): importing
``samsa.client`` never imports it, and only the columnar API asks for it,
through :func:`require_pyarrow`, so a missing install fails with the command
that fixes it rather than a bare ModuleNotFoundError.

Two variants of one schema.  The plain one carries Kafka's facts:
``timestamp[ms]`` (Kafka timestamps are milliseconds, no zone) and non-null
columns where a record always has a value.  The Spark one is what a PySpark
Python data source must yield to match Spark's Kafka source schema
(``to_arrow_schema(..., timezone="UTC")``): ``timestamp[us, UTC]`` and every
field nullable.  Both have the same buffers apart from the timestamps, so a
reader builds its arrays once and attaches either schema.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

__all__ = ["arrow_schema", "require_pyarrow"]

INSTALL_HINT = "the columnar (Arrow) API needs pyarrow: pip install 'samsa[arrow]'"


def require_pyarrow() -> ModuleType:
    """The pyarrow module, or an ImportError that says how to install it."""
    try:
        import pyarrow
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return pyarrow


_SCHEMAS: dict[tuple[bool, bool], Any] = {}


def arrow_schema(include_headers: bool = False, spark: bool = False) -> Any:
    """The ``pyarrow.Schema`` of record batches from the columnar readers.

    Columns: ``key binary, value binary, topic string, partition int32,
    offset int64, timestamp timestamp[ms], timestampType int32`` and, with
    ``include_headers``, ``headers list<struct<key string, value binary>>``.
    ``spark=True`` gives Spark's variant (microsecond UTC timestamps, all
    fields nullable).
    """
    cached = _SCHEMAS.get((include_headers, spark))
    if cached is not None:
        return cached
    pa = require_pyarrow()
    always = spark  # Spark declares every column nullable
    header_type = pa.list_(
        pa.struct([pa.field("key", pa.string(), always), pa.field("value", pa.binary())])
    )
    fields = [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string(), always),
        pa.field("partition", pa.int32(), always),
        pa.field("offset", pa.int64(), always),
        pa.field(
            "timestamp", pa.timestamp("us", tz="UTC") if spark else pa.timestamp("ms"), always
        ),
        pa.field("timestampType", pa.int32(), always),
    ]
    if include_headers:
        fields.append(pa.field("headers", header_type, always))
    schema = pa.schema(fields)
    _SCHEMAS[(include_headers, spark)] = schema
    return schema
