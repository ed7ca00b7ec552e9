"""Regenerate the README's generated blocks from the code (like cog).

    python scripts/update_readme.py          # rewrite README.md in place
    python scripts/update_readme.py --check  # exit 1 if README.md is stale

Blocks sit between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` markers:
``schema`` (a freshly migrated store), ``events`` (events.TYPES) and ``config``
(config.OPTIONS). tests/test_docs.py runs the check so the README stays true.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ctxmode import config, events  # noqa: E402
from ctxmode.store import Store  # noqa: E402

README = REPO / "README.md"
PRIORITY_NAMES = {1: "1 critical", 2: "2 high", 3: "3 normal", 4: "4 low", 5: "5 minor"}


def schema_block() -> str:
    with tempfile.TemporaryDirectory() as folder:
        store = Store.open(os.path.join(folder, "schema.db"))
        try:
            rows = store.conn.execute(
                "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                "AND name NOT LIKE 'events_fts_%' ORDER BY rowid"
            ).fetchall()
            version = store.schema_version()
        finally:
            store.close()
    statements = []
    for (sql,) in rows:
        lines = sql.splitlines()
        # Re-indent bodies uniformly: SQLite keeps the source's indentation.
        body = [lines[0]] + ["    " + line.strip() for line in lines[1:-1]]
        if len(lines) > 1:
            body.append(lines[-1].strip())
        statements.append("\n".join(body) + ";")
    return (
        f"Schema version {version} (`PRAGMA user_version`), as created by the migrations:\n\n"
        "```sql\n" + "\n".join(statements) + "\n```"
    )


def events_block() -> str:
    lines = ["| type | category | priority | `data` holds |", "|---|---|---|---|"]
    for name, (category, priority, data) in events.TYPES.items():
        text = data.replace("|", "\\|")
        lines.append(f"| `{name}` | `{category}` | {PRIORITY_NAMES[priority]} | {text} |")
    return "\n".join(lines)


def config_block() -> str:
    lines = ["| option | default | meaning |", "|---|---|---|"]
    for name, (default, meaning) in config.OPTIONS.items():
        shown = str(default).lower() if isinstance(default, bool) else repr(default)
        if isinstance(default, list):
            shown = "[]" if not default else ", ".join(default)
        lines.append(f"| `{name}` | `{shown}` | {meaning} |")
    return "\n".join(lines)


BLOCKS = {"schema": schema_block, "events": events_block, "config": config_block}


def render(text: str) -> str:
    for name, build in BLOCKS.items():
        start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        if start not in text or end not in text:
            raise SystemExit(f"README.md lacks the {start} … {end} markers")
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{start}\n{build()}\n{end}{tail}"
    return text


def main() -> int:
    current = README.read_text(encoding="utf-8")
    wanted = render(current)
    if "--check" in sys.argv[1:]:
        if wanted != current:
            print("README.md is stale: run python scripts/update_readme.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
