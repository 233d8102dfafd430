"""Kept for callers written before ``make_record`` took a field called ``name``.

``samsa.protocol.metadata_records.make_record`` now takes the record name as a
positional-only parameter, so it builds TopicRecord, ConfigRecord and
FeatureLevelRecord too; use it directly.  ``build_record`` is the same function.
"""

from __future__ import annotations

from samsa.protocol.metadata_records import make_record

build_record = make_record

__all__ = ["build_record"]
