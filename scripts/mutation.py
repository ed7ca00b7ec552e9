#!/usr/bin/env python3
"""Mutation testing of ctxmode's hook logic: do the tests notice when the code is wrong?

    python3 scripts/mutation.py                       # every target, one job
    python3 scripts/mutation.py handlers claim --jobs 2
    python3 scripts/mutation.py snapshot --sample 150 --seed 1
    python3 scripts/mutation.py handlers --list       # the mutants, without running them

Each *mutant* is the source with one small change (a comparison flipped, ``and`` for
``or``, a ``not`` dropped, a constant changed, a return value replaced by ``None``, a call
statement deleted). The target's tests run against it (``pytest -x``, in a copy of the
repository, so the hook processes the tests start run the mutant too); a failing run
*kills* it, a passing one lets it *survive*. The kill rate is killed / (killed + survived);
mutants that do not compile are not counted. Survivors are listed with file, line and
change: each is either a behaviour no test pins (add a test) or an equivalent mutant
(the change makes no observable difference; say why in the report).

Why not mutmut: its mutants switch on an environment variable through trampolines it
imports into the package, which hook processes started with ``python -I -S`` never see.
Writing each mutant to disk in a private copy keeps every process honest.

Targets (module, the functions mutated, the tests that must notice):
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TARGETS: dict[str, tuple[str, tuple[str, ...] | None, tuple[str, ...]]] = {
    "handlers": (
        "ctxmode/handlers.py",
        None,
        (
            "tests/test_handlers_behaviour.py",
            "tests/test_reliability_claims.py",
            "tests/test_hooks_subprocess.py",
            "tests/test_reliability_contention.py",
            "tests/test_cli_config.py",
        ),
    ),
    "claim": (
        "ctxmode/store",
        (
            "claim_resume",
            "has_unclaimed",
            "discard_unclaimed",
            "latest_resume",
            "save_resume",
            "next_compact_seq",
            "next_seq",
            "open_error_keys",
            "session_flag",
            "set_session_flag",
        ),  # in store/resumes.py, sessions.py, events.py; SQL text is mutated too
        (
            "tests/test_handlers_behaviour.py",
            "tests/test_reliability_claims.py",
            "tests/test_store.py",
            "tests/test_hooks_subprocess.py",
        ),
    ),
    "snapshot": (
        "ctxmode/snapshot",
        None,
        (
            "tests/test_snapshot_rules.py",
            "tests/test_snapshot_coverage.py",
            "tests/test_snapshot.py",
            "tests/test_snapshot_provenance.py",
            "tests/test_compaction_summary.py",
            "tests/test_handlers_behaviour.py",
        ),  # each module's tests (handover, repeat, coverage too); the quick ones first
    ),
    "redact": (
        "ctxmode/redact.py",
        None,
        (
            "tests/test_redact.py",
            "tests/test_redact_rules.py",
            "tests/test_privacy_structure.py",
            "tests/test_handlers_behaviour.py",
            "tests/test_privacy.py",
            "tests/test_privacy_corpus.py",
        ),
    ),
    "coverage": (
        "ctxmode/snapshot/coverage.py",
        None,
        ("tests/test_snapshot_coverage.py", "tests/test_compaction_summary.py"),
    ),
    "search": (
        "ctxmode/store",
        (
            "analyze",
            "synonyms",
            "fold",
            "_unaccented",
            "stand_in_needed",
            "words_range",
            "like_range",
            "_word_char",
            "is_unspaced",
        ),  # in store/query.py and store/search.py: the query's terms, stand-ins, folding
        ("tests/test_search_ranking.py", "tests/test_cli_search.py"),
    ),
    "history": (
        "ctxmode/hosts/claude_code/history.py",
        (
            "read",
            "head_cwd",
            "_local_command",
            "_client_output",
            "_user_shell_call",
            "_command_line",
            "_starts",
            "_plain",
            "kept_notes",
        ),  # what a transcript is read as: the person's ! commands, the client's outputs, notes
        ("tests/test_user_commands.py", "tests/test_turn_notes.py", "tests/test_import.py"),
    ),
    "outputs": (
        "ctxmode/extract",
        (
            "command_keys",
            "is_output_file",
            "_reads_output",
            "output_read",
            "mcp_output",
            "report_excerpt",
            "subagent",
            "notification",
        ),  # what a call printed, kept: a log read, an MCP answer, a report, a notice
        (
            "tests/test_recall_outputs.py",
            "tests/test_extract_agents.py",
            "tests/test_extract_jobs.py",
        ),
    ),
    "verdict": (
        "ctxmode/cli",
        ("_why", "verdict_line", "compact_field", "block_lines"),
        ("tests/test_cli_search.py",),
    ),  # the compact output: the lines a hit shows, how a command ended among them
    "identity": (
        "ctxmode/paths.py",
        ("identify", "identify_dir", "_linked", "_repository", "_core_config", "head_branch"),
        ("tests/test_identity.py", "tests/test_paths.py"),
    ),
}
__doc__ += "".join(
    f"\n    {name:9} {module} ({', '.join(funcs) if funcs else 'all'}): {' '.join(tests)}"
    for name, (module, funcs, tests) in TARGETS.items()
)

_SWAP_CMP = {
    ast.Eq: "!=",
    ast.NotEq: "==",
    ast.Lt: ">=",
    ast.LtE: ">",
    ast.Gt: "<=",
    ast.GtE: "<",
    ast.In: "not in",
    ast.NotIn: "in",
    ast.Is: "is not",
    ast.IsNot: "is",
}
_CMP_TEXT = re.compile(rb"==|!=|<=|>=|<|>|\bnot\s+in\b|\bin\b|\bis\s+not\b|\bis\b")
_IDENT = re.compile(r"[a-z_][a-z0-9_]{0,29}")
# Inside SQL text (the claim code's logic is mostly there): pattern -> replacement.
_SQL_SWAPS = [
    (rb"\bAND\b", b"OR"),
    (rb"\bOR\b", b"AND"),
    (rb"\bDESC\b", b"ASC"),
    (rb"\bASC\b", b"DESC"),
    (rb"(?<![<>!])= 0\b", b"= 1"),
    (rb"(?<![<>!])= 1\b", b"= 0"),
    (rb"(?<![<>!])= \?", b"!= ?"),
    (rb"!= \?", b"= ?"),
    (rb">= \?", b"< ?"),
    (rb"<= \?", b"> ?"),
    (rb"\bIS NULL\b", b"IS NOT NULL"),
    (rb"\bIS NOT NULL\b", b"IS NULL"),
    (rb"\bMAX\(", b"MIN("),
    (rb"\+ 1\b", b"+ 0"),
]
_SQL_WORDS = re.compile(rb"\b(SELECT|UPDATE|DELETE|INSERT|WHERE|AND|ORDER BY)\b|= \?|= 0|= 1")


@dataclass(frozen=True)
class Mutant:
    module: str
    line: int
    start: int  # byte offsets in the source
    end: int
    replacement: bytes
    what: str

    def apply(self, source: bytes) -> bytes:
        return source[: self.start] + self.replacement + source[self.end :]

    def describe(self) -> str:
        return f"{self.module}:{self.line}: {self.what}"


class _Finder(ast.NodeVisitor):
    """Collects mutation points, skipping docstrings, annotations and TYPE_CHECKING."""

    def __init__(
        self, module: str, source: bytes, functions: tuple[str, ...] | None, sql: bool = False
    ) -> None:
        self.module = module
        self.sql = sql
        self.source = source
        self.functions = functions
        starts = [0]
        for line in source.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        self.line_starts = starts
        self.mutants: list[Mutant] = []
        self.skip: set[int] = set()  # ids of nodes not to mutate
        self.inside = 0 if functions else 1

    # -- positions

    def at(self, line: int, col: int) -> int:
        return self.line_starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.at(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.at(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def add(self, node: ast.AST, start: int, end: int, new: bytes, what: str) -> None:
        if self.inside and id(node) not in self.skip:
            line = node.lineno  # type: ignore[attr-defined]
            self.mutants.append(Mutant(self.module, line, start, end, new, what))

    # -- what not to touch

    def _skip_tree(self, node: ast.AST | None) -> None:
        if node is not None:
            self.skip.update(id(n) for n in ast.walk(node))

    def _skip_docstring(self, body: list[ast.stmt]) -> None:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self._skip_tree(body[0])

    def visit_Module(self, node: ast.Module) -> None:
        self._skip_docstring(node.body)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._skip_docstring(node.body)
        self.generic_visit(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._skip_docstring(node.body)
        self._skip_tree(node.returns)
        for arg in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]:
            self._skip_tree(arg.annotation)
        chosen = self.functions is not None and node.name.lstrip("_") in self.functions
        self.inside += chosen
        self.generic_visit(node)
        self.inside -= chosen

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._skip_tree(node.annotation)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, ast.Name) and t.id == "TYPE_CHECKING" for t in node.targets):
            self._skip_tree(node)  # ``TYPE_CHECKING = False``: flipping it only imports more
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            self._skip_tree(node)
        self.generic_visit(node)

    # -- mutation points

    def visit_Compare(self, node: ast.Compare) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            gap_start, gap_end = self.span(left)[1], self.span(right)[0]
            gap = self.source[gap_start:gap_end]
            found = _CMP_TEXT.search(gap)
            new = _SWAP_CMP.get(type(op))
            if found and new:
                start, end = gap_start + found.start(), gap_start + found.end()
                old = found.group().decode()
                self.add(node, start, end, new.encode(), f"{old!r} -> {new!r}")
            left = right
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        for a, b in zip(node.values, node.values[1:], strict=False):
            gap_start, gap_end = self.span(a)[1], self.span(b)[0]
            found = re.search(rb"\b" + old.encode() + rb"\b", self.source[gap_start:gap_end])
            if found:
                start, end = gap_start + found.start(), gap_start + found.end()
                self.add(node, start, end, new.encode(), f"{old!r} -> {new!r}")
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            start, end = self.span(node)
            inner = self.source[slice(*self.span(node.operand))]
            self.add(node, start, end, b"(" + inner + b")", "'not' dropped")
        self.generic_visit(node)

    def _sql(self, node: ast.AST) -> bool:
        """SQL text mutants in a string literal (or f-string); True if it held SQL."""
        start, end = self.span(node)
        text = self.source[start:end]
        if not (self.sql and _SQL_WORDS.search(text)):
            return False
        for pattern, new in _SQL_SWAPS:
            for found in re.finditer(pattern, text):
                what = f"SQL {found.group().decode()!r} -> {new.decode()!r}"
                self.add(node, start + found.start(), start + found.end(), new, what)
        return True

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        if self._sql(node):
            self._skip_tree(node)  # its parts: no second mutant of the same text
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and self._sql(node):
            return
        start, end = self.span(node)
        value = node.value
        if isinstance(value, bool):
            self.add(node, start, end, str(not value).encode(), f"{value} -> {not value}")
        elif isinstance(value, int):
            self.add(node, start, end, str(value + 1).encode(), f"{value} -> {value + 1}")
        elif isinstance(value, float):
            self.add(node, start, end, repr(value * 2 + 1).encode(), f"{value} -> {value * 2 + 1}")
        elif isinstance(value, str) and _IDENT.fullmatch(value):
            self.add(
                node, start, end, repr(value + "_x").encode(), f"{value!r} -> {value + '_x'!r}"
            )

    def visit_Return(self, node: ast.Return) -> None:
        value = node.value
        if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
            start, end = self.span(value)
            self.add(node, start, end, b"None", "return value -> None")
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Call):
            start, end = self.span(node)
            self.add(node, start, end, b"pass", "call statement deleted")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        swap = {ast.Add: ("+", "-"), ast.Sub: ("-", "+")}.get(type(node.op))
        if swap:
            gap_start, gap_end = self.span(node.left)[1], self.span(node.right)[0]
            found = self.source.find(swap[0].encode(), gap_start, gap_end)
            if found >= 0:
                self.add(node, found, found + 1, swap[1].encode(), f"{swap[0]!r} -> {swap[1]!r}")
        self.generic_visit(node)


def find_mutants(root: Path, module: str, functions: tuple[str, ...] | None) -> list[Mutant]:
    if (root / module).is_dir():  # a package: the mutants of each of its modules
        return [
            m
            for path in sorted((root / module).glob("*.py"))
            for m in find_mutants(root, str(path.relative_to(root)), functions)
        ]
    source = (root / module).read_bytes()
    finder = _Finder(module, source, functions, sql=functions is not None)
    finder.visit(ast.parse(source))
    seen: set[tuple[int, int, bytes]] = set()
    out = []
    for m in sorted(finder.mutants, key=lambda m: (m.start, m.end, m.replacement)):
        key = (m.start, m.end, m.replacement)
        if key in seen:
            continue
        seen.add(key)
        try:
            compile(m.apply(source), module, "exec")
        except SyntaxError:
            continue
        out.append(m)
    return out


# -- running ----------------------------------------------------------------------------


def _copy(root: Path, into: Path) -> Path:
    ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", ".ruff_cache",
                                    ".mypy_cache", ".pytest_cache", ".hypothesis")  # fmt: skip
    shutil.copytree(root, into, ignore=ignore)
    return into


def _pytest(copy: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, float]:
    started = time.monotonic()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CTXMODE_"))}
    env["CI"] = "1"  # the hypothesis profile: the same examples every run
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
             "-m", "not slow and not e2e", *tests],
            cwd=copy, env=env, capture_output=True, timeout=timeout, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - started
    return ("survived" if done.returncode == 0 else "killed"), time.monotonic() - started


def run(root: Path, name: str, mutants: list[Mutant], tests: tuple[str, ...], jobs: int,
        log: Path) -> dict[str, list[Mutant]]:  # fmt: skip
    results: dict[str, list[Mutant]] = {"killed": [], "survived": [], "timeout": []}
    with tempfile.TemporaryDirectory(prefix=f"ctxmode-mutation-{name}-") as tmp:
        copies = [_copy(root, Path(tmp) / f"copy{j}") for j in range(jobs)]
        status, baseline = _pytest(copies[0], tests, timeout=900)
        if status != "survived":
            raise SystemExit(f"{name}: the tests fail without any mutant: {' '.join(tests)}")
        timeout = baseline * 3 + 30
        print(f"{name}: {len(mutants)} mutants, tests take {baseline:.0f}s", file=sys.stderr)
        free = list(copies)

        def one(m: Mutant) -> tuple[Mutant, str]:
            copy = free.pop()
            path = copy / m.module
            original = path.read_bytes()
            try:
                path.write_bytes(m.apply(original))
                status, _ = _pytest(copy, tests, timeout)
            finally:
                path.write_bytes(original)
                free.append(copy)
            return m, status

        with ThreadPoolExecutor(jobs) as pool, log.open("a") as out:
            for k, (m, status) in enumerate(pool.map(one, mutants), 1):
                results[status].append(m)
                out.write(f"{status}\t{m.describe()}\n")
                out.flush()
                if status == "survived":
                    print(f"  [{k}/{len(mutants)}] survived: {m.describe()}", file=sys.stderr)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", choices=list(TARGETS), help="default: all")
    parser.add_argument("--root", type=Path, default=REPO, help="the tree to mutate (a copy)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--sample", type=int, help="at most this many mutants per target")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--retest", type=Path, help="only the survivors of this earlier log")
    parser.add_argument("--log", type=Path, default=Path("mutation-report.tsv"))
    args = parser.parse_args(argv)
    summary = []
    for name in args.targets or list(TARGETS):
        module, functions, tests = TARGETS[name]
        mutants = find_mutants(args.root, module, functions)
        if args.sample and len(mutants) > args.sample:
            mutants = sorted(random.Random(args.seed).sample(mutants, args.sample),
                             key=lambda m: (m.module, m.start))  # fmt: skip
        if args.retest:
            survived = {
                line.split("\t", 1)[1]
                for line in args.retest.read_text().splitlines()
                if line.startswith("survived\t")
            }
            mutants = [m for m in mutants if m.describe() in survived]
        if args.list:
            for m in mutants:
                print(m.describe())
            continue
        results = run(args.root, name, mutants, tests, args.jobs, args.log)
        killed = len(results["killed"]) + len(results["timeout"])
        counted = killed + len(results["survived"])
        rate = 100.0 * killed / counted if counted else 100.0
        line = (
            f"{name}: {killed}/{counted} killed ({rate:.1f}%), {len(results['survived'])} survived"
        )
        summary.append(line)
        print(line, file=sys.stderr)
    for line in summary:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
