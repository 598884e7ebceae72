"""Logging for `lgembed serve`: journald-friendly lines under systemd, redacted secrets.

Why: under systemd, stderr goes to journald, which stamps every line with its own time
and reads a `<N>` prefix (sd-daemon(3) priorities) as the line's level, so
`journalctl -p warning` and colours work. A timestamped format there would show every
time twice. On a terminal, or redirected to a file by hand, the usual timestamped
format is more useful. And a service that holds an API token must never print it: a
filter on the handler replaces every known secret value with "[REDACTED]" in the
message, its arguments and any traceback, whatever logger the line comes from.

Only `lgembed serve` configures logging (`configure`); importing this module does not.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable
from typing import TextIO

__all__ = ("FORMATS", "JournalFormatter", "RedactFilter", "configure", "priority", "under_journald")

FORMATS = ("auto", "journal", "text")
"""Values of `--log-format`: "auto" picks "journal" under journald, else "text"."""

TEXT_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"
"""The line format outside journald."""

REDACTED = "[REDACTED]"
"""What a secret value is replaced with."""

MIN_SECRET_LENGTH = 4
# shorter values are not redacted: replacing "ab" everywhere would mangle every line


def priority(levelno: int) -> int:
    """The sd-daemon priority (0 emerg .. 7 debug) for a logging level number."""
    if levelno >= logging.CRITICAL:
        return 2
    if levelno >= logging.ERROR:
        return 3
    if levelno >= logging.WARNING:
        return 4
    if levelno >= logging.INFO:
        return 6
    return 7


def under_journald(stream: TextIO | None = None) -> bool:
    """Whether `stream` (default stderr) is connected to journald.

    $JOURNAL_STREAM ("device:inode", set by systemd for a journal-connected stdout or
    stderr) must name this stream; without it, a non-tty stream of a systemd service
    ($INVOCATION_ID set) counts too.
    """
    stream = sys.stderr if stream is None else stream
    try:
        st = os.fstat(stream.fileno())
        is_tty = stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False
    js = os.environ.get("JOURNAL_STREAM", "")
    if js:
        dev, _, ino = js.partition(":")
        try:
            return (int(dev), int(ino)) == (st.st_dev, st.st_ino)
        except ValueError:
            return False
    return bool(os.environ.get("INVOCATION_ID")) and not is_tty


class JournalFormatter(logging.Formatter):
    """`<N>logger: message` lines without a timestamp; every line of a multi-line record
    (a traceback) carries the prefix, since journald reads each line as an entry."""

    def __init__(self) -> None:
        super().__init__("%(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        prefix = f"<{priority(record.levelno)}>"
        return "\n".join(prefix + line for line in super().format(record).splitlines() or [""])


class RedactFilter(logging.Filter):
    """Replaces known secret values in records with "[REDACTED]".

    Args:
        secrets: the values (tokens, API keys); those shorter than 4 characters are ignored.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets: list[str] = []
        for s in secrets:
            self.add(s)

    def add(self, secret: str) -> None:
        """Adds a value to redact (longest first, so a secret containing another is whole)."""
        if secret and len(secret) >= MIN_SECRET_LENGTH and secret not in self.secrets:
            self.secrets.append(secret)
            self.secrets.sort(key=len, reverse=True)

    def redact(self, text: str) -> str:
        """`text` with every secret replaced."""
        for s in self.secrets:
            if s in text:
                text = text.replace(s, REDACTED)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string: the handler's error path reports it
            return True
        record.msg, record.args = self.redact(message), ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


_HANDLER_ATTR = "_lgembed_service_handler"


def configure(
    level: str | int = "info",
    fmt: str = "auto",
    secrets: Iterable[str] = (),
    stream: TextIO | None = None,
) -> logging.Handler:
    """Sends the root logger's records to `stream` (stderr) in the chosen format.

    Calling it again replaces the handler it installed before.

    Args:
        level: a logging level name ("debug", "info", ...) or number.
        fmt: "auto", "journal" or "text" (see FORMATS).
        secrets: values to redact from every line.
        stream: where lines go; default stderr.

    Returns:
        The handler (its RedactFilter is `handler.redactor`, to add secrets later).

    Raises:
        ValueError: an unknown `fmt` or level name.
    """
    if fmt not in FORMATS:
        msg = f"Configuring logging: the log format must be one of {', '.join(FORMATS)} (got {fmt!r})"
        raise ValueError(msg)
    if isinstance(level, str):
        number = logging.getLevelName(level.upper())
        if not isinstance(number, int):
            msg = f"Configuring logging: the log level must be one of debug, info, warning, error, critical (got {level!r})"
            raise ValueError(msg)  # noqa: TRY004 - a bad value of the right type
        level = number
    stream = sys.stderr if stream is None else stream
    journal = fmt == "journal" or (fmt == "auto" and under_journald(stream))
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JournalFormatter() if journal else logging.Formatter(TEXT_FORMAT))
    redactor = RedactFilter(secrets)
    handler.addFilter(redactor)
    handler.redactor = redactor  # type: ignore[attr-defined]
    setattr(handler, _HANDLER_ATTR, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _HANDLER_ATTR, False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return handler
