"""The broker's logging: levelled, per component, as text or JSON lines.

Loggers are named after the component that logs (``samsa.server``,
``samsa.storage``, ``samsa.coordinator``, ``samsa.client``...), so an operator
can tell where a line comes from and raise one component's level.  ``json``
writes one object per line (``ts``, ``level``, ``logger``, ``message``, plus
``exc`` with the traceback when there is one, and any ``extra=`` fields) for
log shippers; ``text`` is for people.
"""

from __future__ import annotations

import json
import logging
import logging.config
import time
from typing import Any

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_STANDARD_ATTRS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record; extra fields given with ``extra=`` are kept."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                entry[key] = value if isinstance(value, (str, int, float, bool)) else repr(value)
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def configure(level: str, fmt: str) -> None:
    """Set up the root logger on stderr; ``level`` is a name such as INFO or DEBUG."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}: one of DEBUG, INFO, WARNING, ERROR")
    formatter: dict[str, Any] = {"()": JsonFormatter} if fmt == "json" else {"format": TEXT_FORMAT}
    logging.config.dictConfig(
        {
            "version": 1,
            "disable_existing_loggers": False,
            "formatters": {"main": formatter},
            "handlers": {
                "stderr": {
                    "class": "logging.StreamHandler",
                    "formatter": "main",
                    "stream": "ext://sys.stderr",
                }
            },
            "root": {"level": numeric, "handlers": ["stderr"]},
        }
    )
