"""Freeze a store made by the current schema version, for the upgrade tests of later ones.

    python tests/fixtures_old_schemas/make_fixture.py

Replays the captured Claude Code session (stream.print-mode.jsonl: startup, resume,
/compact, /clear, auto-compaction ...) through the real hook scripts into a fresh data
root, and writes ``v<N>.db`` (N = migrations.SCHEMA_VERSION) and ``v<N>.json``: per
table, the column names, the row count and a SHA-256 of every row in order. Run it once
when a schema version is released, commit both files, and never regenerate an old one:
the point is a store made by *that* version's code. tests/test_migrations_upgrade.py
upgrades every ``v*.db`` here with the current code and checks the manifest still holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from ctxmode import paths  # noqa: E402
from ctxmode.migrations import SCHEMA_VERSION  # noqa: E402
from tests.hooktools import FIXTURES, SHIMS, hook_command, hook_env  # noqa: E402

STREAM = FIXTURES / "stream.print-mode.jsonl"
PROJECT = "/home/dev/proj"
# Tables whose rows are the user's data; FTS shadow tables are rebuilt from them.
# (compaction and import_progress came with version 3; a table a store lacks is left out.)
TABLES = (
    "session_events",
    "session_meta",
    "session_resume",
    "store_meta",
    "compaction",
    "import_progress",
)
ORDER = {"store_meta": "key", "session_meta": "session_id", "import_progress": "path"}


def table_digest(conn: sqlite3.Connection, table: str, columns: list[str]) -> dict[str, object]:
    """Row count and SHA-256 of the rows (``columns`` only, in primary-key order)."""
    order = ORDER.get(table, "id")
    rows = conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}").fetchall()
    digest = hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()
    return {"columns": columns, "rows": len(rows), "sha256": digest}


def manifest(path: Path) -> dict[str, object]:
    conn = sqlite3.connect(path)
    try:
        tables = {}
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for table in (t for t in TABLES if t in present):
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            tables[table] = table_digest(conn, table, columns)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()
    return {"schema_version": version, "tables": tables}


def main() -> None:
    target = HERE / f"v{SCHEMA_VERSION}.db"
    if target.exists():
        sys.exit(f"{target} exists: a released version's store is never regenerated")
    with tempfile.TemporaryDirectory() as tmp:
        env = hook_env(CTXMODE_HOME=tmp, CLAUDE_PROJECT_DIR=PROJECT)
        for line in STREAM.read_text().splitlines():
            record = json.loads(line)
            if record["event"] in SHIMS:
                subprocess.run(hook_command(record["event"]), input=json.dumps(record["payload"]).encode(),
                               env=env, check=True, capture_output=True)  # fmt: skip
        store = Path(paths.store_path(PROJECT, {"CTXMODE_HOME": tmp}))
        conn = sqlite3.connect(store)
        conn.execute("PRAGMA incremental_vacuum")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        shutil.copyfile(store, target)
        os.chmod(target, 0o644)
    (HERE / f"v{SCHEMA_VERSION}.json").write_text(json.dumps(manifest(target), indent=1) + "\n")
    print(f"wrote {target} ({target.stat().st_size} bytes) and its manifest")


if __name__ == "__main__":
    main()
