"""The hooks' bounded, rotating log: ``<data root>/logs/ctxmode.log``.

Hooks must never write to stderr, so every failure is recorded here instead and
shown later by ``ctxmode doctor``. It never holds payload content: callers pass a
message and at most a traceback (code locations, no data). Rotation keeps at most
``MAX_BYTES`` × (1 + ``BACKUPS``) on disk.

Line format (tab-separated, one record per line, tracebacks indented below):
``2026-12-02T14:51:20.123Z<TAB>ERROR<TAB>PostToolUse<TAB>message``
"""

from __future__ import annotations

import os
import time

LOG_NAME = "ctxmode.log"
MAX_BYTES = 256 * 1024
BACKUPS = 2


def utc_now_iso(now: float | None = None) -> str:
    """ISO-8601 UTC with milliseconds, e.g. ``2026-12-02T14:51:20.123Z``."""
    if now is None:
        now = time.time()
    millis = int(now * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{millis:03d}Z"


def _rotate(path: str) -> None:
    for index in range(BACKUPS, 0, -1):
        older = f"{path}.{index}"
        newer = path if index == 1 else f"{path}.{index - 1}"
        try:
            os.replace(newer, older)
        except OSError:  # a missing generation is fine; contextlib costs an import
            continue


def write(log_dir: str, level: str, event: str, message: str, detail: str = "") -> None:
    """Append one record; never raises (a hook must not fail because its log cannot)."""
    try:
        # Every missing folder 0700, the data root included: a log written first must
        # not leave the root open to others (os.makedirs applies the mode to the leaf).
        from ctxmode.paths import ensure_dir

        ensure_dir(log_dir)
        path = os.path.join(log_dir, LOG_NAME)
        try:
            if os.stat(path).st_size > MAX_BYTES:
                _rotate(path)
        except OSError:
            pass
        clean = message.replace("\n", " ").replace("\t", " ")[:2000]
        record = f"{utc_now_iso()}\t{level}\t{event}\t{clean}\n"
        if detail:
            record += "".join(f"    {line}\n" for line in detail.splitlines()[-40:])
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, record.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:
        pass


def read_records(log_dir: str, limit: int = 50) -> list[dict[str, str]]:
    """The newest ``limit`` records (oldest first), for ``ctxmode doctor``."""
    path = os.path.join(log_dir, LOG_NAME)
    records: list[dict[str, str]] = []
    for name in (f"{path}.1", path):
        try:
            with open(name, encoding="utf-8", errors="replace") as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith("    ") and records:
                records[-1]["detail"] += line[4:] + "\n"
                continue
            parts = line.split("\t", 3)
            if len(parts) == 4:
                records.append(
                    {
                        "time": parts[0],
                        "level": parts[1],
                        "event": parts[2],
                        "message": parts[3],
                        "detail": "",
                    }
                )
    return records[-limit:]
