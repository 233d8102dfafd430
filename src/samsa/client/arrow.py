"""Columnar reads: fetched records as ``pyarrow.RecordBatch`` es, no Python object per record.

Needs the ``arrow`` extra (``pip install 'samsa[arrow]'``); importing this
module without pyarrow raises an ImportError that says so.  ``samsa.client``
itself never imports pyarrow.

* :class:`PartitionRangeReader` -- one partition's ``[start, end)`` offset
  range through an assigned (non-group) consumer, e.g. a Spark task's share;
* :func:`arrow_schema` -- the batches' schema (``spark=True``: the variant a
  PySpark data source yields);
* ``Consumer.poll_arrow()`` -- the group consumer's ``poll()`` as one batch;
* :func:`fetched_to_arrow` -- the conversion itself, for fetched bytes.
"""

from __future__ import annotations

from samsa.client.consumer.arrow.schema import require_pyarrow

require_pyarrow()

from samsa.client.consumer.arrow.batch import fetched_to_arrow  # noqa: E402
from samsa.client.consumer.arrow.range_reader import PartitionRangeReader  # noqa: E402
from samsa.client.consumer.arrow.schema import arrow_schema  # noqa: E402
from samsa.client.errors import DataLossError  # noqa: E402

__all__ = ["DataLossError", "PartitionRangeReader", "arrow_schema", "fetched_to_arrow"]
