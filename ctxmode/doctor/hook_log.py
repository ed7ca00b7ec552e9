"""Hook log check: errors and warnings the hooks logged in the last 24 hours."""

from __future__ import annotations

import os

from ctxmode import hooklog, paths
from ctxmode.doctor.core import FAIL, OK, WARN, Check, Context, age
from ctxmode.wording import plural

LOG_WINDOW_SECONDS = 24 * 3600
# An error this recent is a live problem (fail); older ones within the window warn.
LOG_FRESH_SECONDS = 3600


def check_log(ctx: Context) -> list[Check]:
    from ctxmode.store import parse_iso

    log_dir = paths.log_dir(ctx.env)
    log_path = os.path.join(log_dir, hooklog.LOG_NAME)
    records = [
        record
        for record in hooklog.read_records(log_dir, limit=100_000)
        if record["level"] in ("ERROR", "WARN")
        and ctx.now - parse_iso(record["time"]) <= LOG_WINDOW_SECONDS
    ]
    if not records:
        return [Check("log", "hook log", OK, "no errors or warnings in the last 24 h")]
    errors = [r for r in records if r["level"] == "ERROR"]
    warnings = len(records) - len(errors)
    newest = records[-1]
    newest_age = ctx.now - parse_iso(newest["time"])
    status = WARN
    if errors and ctx.now - parse_iso(errors[-1]["time"]) <= LOG_FRESH_SECONDS:
        status = FAIL
    counts = []
    if errors:
        counts.append(plural(len(errors), "error"))
    if warnings:
        counts.append(plural(warnings, "warning"))
    return [
        Check(
            "log",
            "hook log",
            status,
            f"{' and '.join(counts)} in the last 24 h; newest {age(newest_age)} ago: "
            f"{newest['level']} {newest['event']}: {newest['message'][:160]}",
            f"read {log_path} (tracebacks are indented under each record)",
            tuple(
                f"{r['time']} {r['level']} {r['event']}: {r['message'][:200]}" for r in records[-5:]
            ),
        )
    ]
