"""Samsa's PySpark data source: ``spark.read.format("samsa")`` and friends.

``register(spark)`` makes the format available in a SparkSession (registration
is per session).  Schema and options are those of Spark's Kafka connector
(``kafka.bootstrap.servers``, ``subscribe``, ``startingOffsets``, ...), and it
talks to Samsa or any Kafka-compatible broker through ``samsa.client``, with no
JVM jars to fetch.  Executors import this package, so ``samsa[spark]`` must be
installed where they run, and their Python must be the one that has it
(``PYSPARK_PYTHON``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["register"]


def register(spark: Any) -> None:
    """Register the ``samsa`` format with ``spark`` (a SparkSession)."""
    from samsa.spark.source import SamsaDataSource

    spark.dataSource.register(SamsaDataSource)
