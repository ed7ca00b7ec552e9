#!/usr/bin/env python3
"""Record the retrieval benchmark's bundled sessions through the real Claude Code CLI.

    python3 scripts/record_recall_sessions.py            # into ctxmode/data/recall_*.jsonl
    python3 scripts/record_recall_sessions.py --out /tmp/rec

The bundled corpus of ``ctxmode bench`` and ``benchmarks/recall_bench.py`` (see
docs/performance.md, "Finding things again"): three sessions of one small repository (a
shop's invoicing in Python, its dashboard server in Node, a SQLite migration), recorded the
way scripts/record_transcripts.py records its fixtures: the real ``claude`` CLI (from the
e2e cache) in print mode, offline against the e2e suite's mock of the Messages API, in a
temporary HOME and git repository. The mock only scripts *which* tool calls the "model"
makes and what it says; every command really runs and really prints (the tests fail,
``pip`` and ``npm`` install from their registries, a server answers on its port, git
commits), so the transcripts hold what such a session holds. No ctxmode hook is registered:
these are the transcripts of a user who never installed it, for ``ctxmode import``.

Written: ``recall_<scenario>.jsonl`` per session (HOME rewritten to ``/home/dev``, the
repository to ``/home/dev/shop``, temporary paths to ``/tmp/rec``; bulky bookkeeping records
cut as record_transcripts.slim does). The questions (``recall_questions.jsonl``) are written
by hand after reading the transcripts, never from what ctxmode stores: re-recording changes
commit hashes and timings, so re-check every answer (``benchmarks/recall_bench.py --check``)
and rewrite the ones that moved.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from record_fixtures import mangle  # noqa: E402
from record_transcripts import slim  # noqa: E402

from tests.e2e import claude_cli  # noqa: E402
from tests.e2e.mock_api import MockAPI, Reply, Steps, call, say  # noqa: E402

FAKE_HOME = "/home/dev"
FAKE_REPO = "/home/dev/shop"
FAKE_TMP = "/tmp/rec"
# What the mock reports as the context used: past the auto-compaction window below.
HUGE_USAGE = 150_000

# ----------------------------------------------------------------------------- the repository

INVOICE_PY = '''\
"""Invoice totals for the shop's order exports (orders.csv -> out/*.txt)."""

from __future__ import annotations

import argparse
import csv
import sys
from decimal import Decimal
from pathlib import Path

VAT_RATE = Decimal("0.19")
CENT = Decimal("0.01")


def line_total(qty: int, unit_price: str) -> Decimal:
    """Gross total of one order line, VAT included, to the cent."""
    return (Decimal(unit_price) * qty * (1 + VAT_RATE)).quantize(CENT)


def read_orders(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def export(path: str, out: str, dry_run: bool) -> int:
    orders = read_orders(path)
    totals = {row["order"]: Decimal(0) for row in orders}
    for row in orders:
        totals[row["order"]] += line_total(int(row["qty"]), row["unit_price"])
    grand = sum(totals.values(), Decimal(0))
    if dry_run:
        print(f"dry run: would write {len(totals)} invoices to {out}/ (grand total {grand} EUR)")
        return 0
    Path(out).mkdir(exist_ok=True)
    for order, total in totals.items():
        Path(out, f"{order}.txt").write_text(f"order {order}: {total} EUR\\n", encoding="utf-8")
    print(f"wrote {len(totals)} invoices to {out}/")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="invoice")
    sub = parser.add_subparsers(dest="command", required=True)
    exp = sub.add_parser("export")
    exp.add_argument("orders")
    exp.add_argument("--out", default="out")
    exp.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    return export(args.orders, args.out, args.dry_run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''

TEST_INVOICE_PY = """\
import unittest
from decimal import Decimal

from invoice import line_total


class LineTotal(unittest.TestCase):
    def test_whole_cents(self):
        self.assertEqual(line_total(2, "10.00"), Decimal("23.80"))

    def test_half_cent_rounds_up(self):
        # 1.50 * 1.19 = 1.785: the customer is charged 1.79, as on the paper price list
        self.assertEqual(line_total(1, "1.50"), Decimal("1.79"))

    def test_quantity_zero(self):
        self.assertEqual(line_total(0, "3.20"), Decimal("0.00"))


if __name__ == "__main__":
    unittest.main()
"""

ORDERS_CSV = """\
order,sku,qty,unit_price
A-1001,TEA-GREEN,2,4.20
A-1001,MUG-BLUE,1,1.50
A-1002,TEA-BLACK,3,3.95
A-1003,CUP-SET,1,12.90
A-1003,TEA-GREEN,1,4.20
"""

README_MD = """\
# shop

Invoicing (`invoice.py`), the order report (`report.py`), the dashboard server
(`dashboard/`) and the customer database migrations (`migrations/`, run by `migrate.py`).

`legacy/export_v1.py` is Anna's old exporter: she still runs it every month, do not change it.
"""

LEGACY_PY = '''\
"""Anna's monthly exporter (v1). Frozen: she runs it by hand at the end of each month."""

print("legacy export v1")
'''

POST_REVIEW = """\
#!/bin/sh
# Post a comment on a code review of the shop's review board (kept in .reviews/ here).
review="$1"; shift
mkdir -p .reviews
printf '%s\\n' "$*" >> ".reviews/$review.md"
echo "comment posted on review !$review ($(wc -l < ".reviews/$review.md") comments)"
"""

SERVER_JS = """\
// The shop dashboard: a tiny HTTP server over the order export.
const http = require("http");
const config = require("./config.json");

const port = config.server.port;
const server = http.createServer((req, res) => {
  if (req.url === "/health") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ok: true, port, orders: config.orders.length }));
    return;
  }
  res.writeHead(404);
  res.end("not found\\n");
});
server.listen(port, "127.0.0.1", () => console.log(`dashboard listening on 127.0.0.1:${port}`));
"""

CONFIG_JSON = """\
{
  "title": "Shop dashboard",
  "orders": ["A-1001", "A-1002", "A-1003"]
}
"""

PACKAGE_JSON = """\
{
  "name": "shop-dashboard",
  "version": "0.3.0",
  "private": false,
  "main": "server.js",
  "license": "MIT"
}
"""

MIGRATE_PY = '''\
"""Apply migrations/*.sql to the shop database, in order, once each."""

import os
import sqlite3
import sys
from pathlib import Path

db = os.environ.get("SHOP_DB", "shop.db")
conn = sqlite3.connect(db)
conn.execute("CREATE TABLE IF NOT EXISTS applied (name TEXT PRIMARY KEY)")
done = {name for (name,) in conn.execute("SELECT name FROM applied")}
for path in sorted(Path("migrations").glob("*.sql")):
    if path.name in done:
        continue
    statements = [s for s in path.read_text().split(";") if s.strip()]
    with conn:
        for statement in statements:
            conn.execute(statement)
        conn.execute("INSERT INTO applied VALUES (?)", (path.name,))
    print(f"applied {path.name} ({len(statements)} statement{'s' if len(statements) != 1 else ''})")
print(f"{db}: up to date")
'''

MIGRATION_001 = """\
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);
INSERT INTO customers (name, email) VALUES ('Hofmann Tee', 'einkauf@hofmann.example');
INSERT INTO customers (name, email) VALUES ('Kaffeehaus Lind', 'lind@kaffee.example')
"""


def make_repository(root: Path) -> None:
    files = {
        "invoice.py": INVOICE_PY,
        "test_invoice.py": TEST_INVOICE_PY,
        "orders.csv": ORDERS_CSV,
        "README.md": README_MD,
        "legacy/export_v1.py": LEGACY_PY,
        "scripts/post-review-comment": POST_REVIEW,
        "reports/index.html": "<h1>Order reports</h1>\n<p>March: 3 orders</p>\n",
        "dashboard/server.js": SERVER_JS,
        "dashboard/config.json": CONFIG_JSON,
        "dashboard/package.json": PACKAGE_JSON,
        "migrate.py": MIGRATE_PY,
        "migrations/001_customers.sql": MIGRATION_001,
        ".gitignore": "out/\nvendor/\n__pycache__/\n*.db\ndashboard/node_modules/\n*.tgz\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "scripts/post-review-comment").chmod(0o755)
    (root / "data").mkdir()


# ----------------------------------------------------------------------------- the sessions


def bash(command: str, description: str, text: str = "", input_tokens: int = 50) -> Reply:
    return call("Bash", text=text, input_tokens=input_tokens, command=command,
                description=description)  # fmt: skip


def invoices(repo: Path) -> list[list[Reply]]:
    """Session 1: a rounding bug, a vendored dependency, a dry run, a server, a review note."""
    invoice = str(repo / "invoice.py")
    report = str(repo / "report.py")
    fixed = "(Decimal(unit_price) * qty * (1 + VAT_RATE)).quantize(CENT, rounding=ROUND_HALF_UP)"
    return [
        [
            bash("git log --oneline | head -5 && ls", "Look at the repository"),
            bash("python3 -m unittest -v 2>&1 | tail -15", "Run the tests"),
            call(
                "Read",
                text="The half-cent case fails: 1.785 comes out as 1.78. Decimal.quantize "
                "rounds half to even by default (banker's rounding), the price list rounds "
                "half up.",
                file_path=invoice,
            ),
            call(
                "Edit",
                file_path=invoice,
                old_string="from decimal import Decimal",
                new_string="from decimal import ROUND_HALF_UP, Decimal",
            ),
            call(
                "Edit",
                file_path=invoice,
                old_string="(Decimal(unit_price) * qty * (1 + VAT_RATE)).quantize(CENT)",
                new_string=fixed,
            ),
            bash("python3 -m unittest 2>&1 | tail -3", "Run the tests again"),
            bash(
                'git commit -qam "Round invoice line totals half-up to the cent" && '
                "git log --oneline -1",
                "Commit the rounding fix",
            ),
            say(
                "Fixed: line totals now round half-up (ROUND_HALF_UP) instead of Decimal's "
                "default half-even, so 1.785 becomes 1.79 like on the paper price list. "
                "All tests pass; committed."
            ),
        ],
        [
            bash(
                "python3 -m pip install --disable-pip-version-check --target vendor "
                "tabulate==0.9.0 2>&1 | tail -2",
                "Vendor tabulate 0.9.0",
            ),
            call(
                "Write",
                file_path=report,
                content=(
                    '"""Print the orders as a table (tabulate is vendored in vendor/)."""\n\n'
                    "import sys\n\nsys.path.insert(0, 'vendor')\n\n"
                    "from tabulate import tabulate  # noqa: E402\n\n"
                    "from invoice import line_total, read_orders  # noqa: E402\n\n"
                    "rows = [(r['order'], r['sku'], r['qty'], line_total(int(r['qty']), "
                    "r['unit_price'])) for r in read_orders(sys.argv[1])]\n"
                    "print(tabulate(rows, headers=['order', 'sku', 'qty', 'gross EUR'], "
                    "tablefmt='github'))\n"
                ),
            ),
            bash("python3 report.py orders.csv", "Print the report"),
            bash(
                "git add report.py && git commit -qm 'Print the order report as a table "
                "(tabulate 0.9.0, vendored)' && git log --oneline -1",
                "Commit the report",
            ),
            say("The report prints a GitHub-style table now; tabulate 0.9.0 sits in vendor/."),
        ],
        [
            bash("python3 invoice.py export --dry-run orders.csv", "Dry run of the export"),
            bash(
                "timeout 4 python3 -m http.server 8765 --bind 127.0.0.1 --directory reports "
                ">/dev/null 2>&1 & sleep 1; curl -s http://127.0.0.1:8765/ | head -3; wait",
                "Serve the reports folder and fetch its index",
            ),
            say(
                "The dry run would write 3 invoices. The reports folder was served on "
                "http://127.0.0.1:8765/ (a 4-second server, already stopped)."
            ),
        ],
        [
            bash(
                "./scripts/post-review-comment 14 'Rounding fix is in invoice.py only "
                "(ROUND_HALF_UP); legacy/export_v1.py is untouched, Anna can run her "
                "monthly export as usual.'",
                "Post a note on review 14",
            ),
            say("Posted the note on review !14."),
        ],
    ]


def dashboard(repo: Path) -> list[list[Reply]]:
    """Session 2: a crash on start, a config fix, a dependency, node's tests, npm's dry run."""
    config = str(repo / "dashboard" / "config.json")
    test_file = str(repo / "dashboard" / "uptime.test.js")
    # The Bash tool keeps its working directory between calls: every command starts with
    # the same absolute cd, so each one runs where it says whatever ran before.
    cd = f"cd {repo / 'dashboard'} && "
    return [
        [
            bash(cd + "node --version && npm --version", "Node and npm versions"),
            bash(cd + "node server.js", "Start the dashboard server"),
            call(
                "Read",
                text="config.server is undefined: config.json has no server section.",
                file_path=config,
            ),
            call(
                "Edit",
                file_path=config,
                old_string='  "title": "Shop dashboard",\n',
                new_string='  "title": "Shop dashboard",\n  "server": { "port": 4317 },\n',
            ),
            bash(
                cd + "(timeout 4 node server.js &) ; sleep 1; curl -s http://127.0.0.1:4317/health",
                "Start the server and check its health endpoint",
            ),
            bash(
                cd + 'git commit -qam "dashboard: give the server its port in config.json" && '
                "git log --oneline -1",
                "Commit the config fix",
            ),
            say("It crashed because config.json had no server section; port 4317 now."),
        ],
        [
            bash(
                cd + "npm install --no-audit --no-fund --save-exact ms@2.1.3 2>&1 | tail -3",
                "Install ms",
            ),
            call(
                "Write",
                file_path=test_file,
                content=(
                    'const test = require("node:test");\n'
                    'const assert = require("node:assert");\n'
                    'const ms = require("ms");\n\n'
                    'test("uptime is shown in minutes", () => {\n'
                    '  assert.strictEqual(ms(90 * 60 * 1000), "90m");\n'
                    "});\n\n"
                    'test("one day", () => {\n'
                    '  assert.strictEqual(ms("1d"), 86400000);\n'
                    "});\n"
                ),
            ),
            bash(cd + "node --test 2>&1 | tail -40", "Run node's test runner"),
            call(
                "Edit",
                text='ms rounds 90 minutes to "2h", it never prints minutes past the hour; '
                "the test expectation is wrong, not ms.",
                file_path=test_file,
                old_string='test("uptime is shown in minutes", () => {\n'
                '  assert.strictEqual(ms(90 * 60 * 1000), "90m");',
                new_string='test("uptime is shown in whole hours", () => {\n'
                '  assert.strictEqual(ms(90 * 60 * 1000), "2h");',
            ),
            bash(cd + "node --test 2>&1 | grep -E '^# (tests|pass|fail)'", "Run the tests again"),
            bash(cd + "npm pack --dry-run 2>&1 | tail -9", "What npm would publish"),
            bash(
                cd + "git add package.json package-lock.json uptime.test.js && git commit -qm "
                "'dashboard: pin ms 2.1.3, test the uptime text' && git log --oneline -1",
                "Commit",
            ),
            say(
                "ms 2.1.3 is pinned; node --test passes. npm pack --dry-run shows what a "
                "publish would ship."
            ),
        ],
    ]


def migration(repo: Path) -> list[list[Reply]]:
    """Session 3: a migration that first meets the wrong database, then a compaction, an index."""
    mig = str(repo / "migrations" / "003_add_vat_id.sql")
    return [
        [
            bash("ls migrations && python3 migrate.py", "Apply the existing migrations"),
            call(
                "Write",
                file_path=str(repo / "migrations" / "002_orders.sql"),
                content="CREATE TABLE orders (id TEXT PRIMARY KEY, customer_id INTEGER "
                "REFERENCES customers(id), total TEXT)\n",
            ),
            call(
                "Write",
                file_path=mig,
                content="ALTER TABLE customers ADD COLUMN vat_id TEXT;\n"
                "UPDATE customers SET vat_id = 'DE811907980' WHERE name = 'Hofmann Tee'\n",
            ),
            bash("python3 migrate.py", "Apply the new migrations"),
            bash(
                "python3 -c \"import sqlite3; print(sqlite3.connect('data/shop.db')"
                ".execute('select name, vat_id from customers').fetchall())\"",
                "Check the customers in data/shop.db",
            ),
            bash(
                "SHOP_DB=data/shop.db python3 migrate.py",
                "Migrate data/shop.db",
                text="migrate.py defaults to ./shop.db when SHOP_DB is unset, so the "
                "migrations went to the wrong file and data/shop.db has no tables yet.",
            ),
            bash(
                "python3 -c \"import sqlite3; print(sqlite3.connect('data/shop.db')"
                ".execute('select name, vat_id from customers').fetchall())\"",
                "Check the customers again",
            ),
            bash(
                "git add migrations && git commit -qm 'Add orders and customers.vat_id "
                "migrations' && git log --oneline -1",
                "Commit the migrations",
                input_tokens=HUGE_USAGE,
            ),
            say("Migrations 002 and 003 are in; data/shop.db has the vat_id column."),
        ],
        [
            call(
                "Write",
                file_path=str(repo / "migrations" / "004_index_vat_id.sql"),
                content="CREATE INDEX idx_customers_vat_id ON customers(vat_id)\n",
            ),
            bash(
                'SHOP_DB=data/shop.db python3 migrate.py && python3 -c "import sqlite3; '
                "c = sqlite3.connect('data/shop.db'); print(c.execute('explain query plan "
                "select * from customers where vat_id = ?', ('DE811907980',)).fetchall())\"",
                "Add the index and show the query plan",
            ),
            say("The lookup by VAT id now uses idx_customers_vat_id."),
        ],
    ]


# ----------------------------------------------------------------------------- recording

PROMPTS: dict[str, list[str]] = {
    "invoices": [
        "customers say some invoice totals are a cent short. find out why and fix it, "
        "run the tests first",
        "can you also vendor tabulate so the report prints a table? pin the version",
        "before we ship: do a dry run of the export and serve the reports folder so I can "
        "look at it in the browser",
        "post a short note on review 14 so Anna knows her exporter wasn't touched",
    ],
    "dashboard": [
        "the dashboard server crashes on start, have a look. it's in dashboard/",
        "add the ms package (exact version) and a couple of node:test tests for the uptime "
        "text, then show me what npm would publish",
    ],
    "migration": [
        "add a vat_id column to customers (TEXT), with a migration; Hofmann Tee's VAT id is "
        "DE811907980. the db the app uses is data/shop.db",
        "/compact",
        "now index customers.vat_id and show me that the lookup uses it",
    ],
}


def record(install: claude_cli.ClaudeInstall, work: Path) -> tuple[Path, Path, dict[str, str]]:
    home, repo = work / "home", work / "home" / "shop"
    (home / ".claude").mkdir(parents=True)
    repo.mkdir()
    make_repository(repo)
    scripts = {
        "invoices": invoices(repo),
        "dashboard": dashboard(repo),
        "migration": migration(repo),
    }
    director = Steps()
    api = MockAPI(director, max_requests=400, max_seconds=1800).start()

    def env(extra: dict[str, str] | None = None) -> dict[str, str]:
        values = {
            "ANTHROPIC_BASE_URL": api.base_url,
            "ANTHROPIC_API_KEY": "dummy",
            # npm's "new version available" notice is not what a session is about
            "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        }
        return claude_cli.hermetic_env({**values, **(extra or {})}, home=home)

    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "Initial"]):
        subprocess.run(["git", *args], cwd=repo, env=env(), check=True, capture_output=True)

    sessions: dict[str, str] = {}
    try:
        for name, turns in scripts.items():
            sid = ""
            replies = iter(turns)
            for prompt in PROMPTS[name]:
                if prompt != "/compact":
                    director.then(*next(replies))
                args = ["-p", prompt] + (["--resume", sid] if sid else [])
                extra = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"} if name == "migration" else {}
                result = claude_cli.run_claude(install, args, cwd=repo, env=env(extra), timeout=300)
                if result.returncode != 0 or api.errors:
                    raise SystemExit(f"{name}: claude failed\n{result.describe()}\n{api.dump()}")
                sid = sid or result.session_id
                print(f"  {name}: {prompt[:40]!r} {result.seconds:.1f}s", file=sys.stderr)
            sessions[name] = sid
    finally:
        api.stop()
    return home, repo, sessions


def normalise(text: str, home: Path, tmp: Path) -> str:
    for real, fake in ((home / "shop", FAKE_REPO), (home, FAKE_HOME), (tmp, FAKE_TMP)):
        text = text.replace(mangle(str(real)), mangle(fake)).replace(str(real), fake)
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default=claude_cli.DEFAULT_VERSION, help="client version")
    parser.add_argument("--out", type=Path, default=REPO / "ctxmode" / "data")
    args = parser.parse_args()
    try:
        install = claude_cli.ensure_claude(args.version)
    except claude_cli.Unavailable as exc:
        print(f"record_recall_sessions: Claude Code unavailable: {exc}", file=sys.stderr)
        return 2
    print(f"recording Claude Code {install.version} sessions into {args.out}", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ctxmode-recall-") as tmp:
        work = Path(tmp).resolve()
        home, _repo, sessions = record(install, work)
        folder = home / ".claude" / "projects" / mangle(str(home / "shop"))
        meta: dict[str, Any] = {"client": f"claude-code {install.version}", "sessions": {}}
        for name, sid in sessions.items():
            text = normalise((folder / f"{sid}.jsonl").read_text(encoding="utf-8"), home, work)
            lines = [slim(line) for line in text.splitlines() if line.strip()]
            target = args.out / f"recall_{name}.jsonl"
            target.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            meta["sessions"][name] = sid
            print(f"  {target.name}: {target.stat().st_size // 1024} KB", file=sys.stderr)
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(meta, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
