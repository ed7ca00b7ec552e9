"""The retrieval benchmark: does one ``ctxmode search`` find what an agent asks for?

A corpus of Claude Code transcripts and questions about them, each written by reading the
transcripts only (never what ctxmode stores): a keyword query (what an agent types), the
same question as a sentence, and the answer, an exact substring of the session (an error
message, a command, a commit message, a path, a port, what a command printed ...).

The transcripts go into a throwaway data root through the installed ``ctxmode import``;
each question runs, in both forms, as ``ctxmode search QUERY --json --limit 5`` and as the
default compact ``ctxmode search QUERY`` (its bytes, and whether the answer shows in it),
scoped as an agent's lookup is: the project the session ran in (``--project`` its cwd),
all of that project's imported sessions. In the same run, the baseline: BM25 over the raw
transcript records of the same sessions (SQLite FTS5, porter stemming, the query's words
OR-ed, one document per record). A hit is the answer found, case-insensitively and with
runs of white space as one, in a returned result: for ctxmode in a hit's data as
``--json`` gives it (:func:`hit_texts`, the one place that reads that shape), for the
baseline in a record's text.

Measured per question kind and query form: hit@1, hit@5, MRR (over the top 5), the share
of empty results and the median output bytes. Everything runs as subprocesses of the
command given (default: this interpreter's ``-m ctxmode``), so any installed version can
be measured; the corpus bundled with ctxmode (``data/recall_*.jsonl``, three sessions
recorded through the real client, see scripts/record_recall_sessions.py) is what
``ctxmode bench`` runs. ``benchmarks/recall_bench.py`` is the command line for any corpus;
the figures, the table and the JSON are :mod:`ctxmode.bench.recall_report`'s.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ctxmode.bench.cases import BenchError

FORMS = ("keyword", "natural")
LIMIT = 5
SYSTEMS = ("ctxmode", "baseline")
BUNDLED_QUESTIONS = "recall_questions.jsonl"
BUNDLED_PREFIX = "recall_"
TIMEOUT = 120
# Record fields that identify or time a record rather than say anything: left out of the
# baseline's documents (an id would only add noise to BM25, never an answer).
META_KEYS = frozenset(
    {
        "uuid",
        "parentUuid",
        "leafUuid",
        "logicalParentUuid",
        "sessionId",
        "requestId",
        "promptId",
        "timestamp",
        "signature",
        "id",
        "tool_use_id",
        "sourceToolAssistantUUID",
        "version",
        "gitBranch",
        "cwd",
        "userType",
        "entrypoint",
        "type",
        "slug",
    }
)
WORD = re.compile(r"\w+")


# ---------------------------------------------------------------------------- corpus


@dataclass(frozen=True)
class Question:
    id: str
    session: str  # a session id (or its start), or the transcript file's stem
    kind: str
    keyword: str
    natural: str
    answer: str

    def query(self, form: str) -> str:
        return self.keyword if form == "keyword" else self.natural


def load_questions(path: str | os.PathLike[str]) -> list[Question]:
    questions = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                questions.append(
                    Question(
                        id=str(item["id"]),
                        session=str(item["session"]),
                        kind=str(item["kind"]),
                        keyword=str(item["keyword"]),
                        natural=str(item["natural"]),
                        answer=str(item["answer"]),
                    )
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise BenchError(f"{path}:{number}: not a question ({exc})") from exc
    return questions


@dataclass
class Transcript:
    """One transcript file: its session, the cwd it ran in and its records' texts."""

    path: str
    session: str
    cwd: str
    documents: list[str] = field(repr=False)


def record_text(record: Any, skip: frozenset[str] = META_KEYS) -> str:
    """What a transcript record says: its string values, those of the ``skip`` keys (ids
    and times) left out."""
    parts: list[str] = []

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, str):
            if key not in skip:
                parts.append(node)
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(v, str(k))
        elif isinstance(node, list):
            for v in node:
                walk(v, key)

    walk(record)
    return "\n".join(parts)


def read_transcript(path: str) -> Transcript:
    session = cwd = ""
    documents = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            session = session or str(record.get("sessionId") or "")
            cwd = cwd or str(record.get("cwd") or "")
            text = record_text(record)
            if text:
                documents.append(text)
    return Transcript(path, session or Path(path).stem, cwd, documents)


def session_of(question: Question, transcripts: Sequence[Transcript]) -> Transcript:
    for t in transcripts:
        if question.session in (t.session, Path(t.path).stem) or (
            len(question.session) >= 8 and t.session.startswith(question.session)
        ):
            return t
    raise BenchError(f"question {question.id}: no transcript of session {question.session}")


def normalised(text: str) -> str:
    """Case and runs of white space do not matter for a hit (the output wraps lines)."""
    return " ".join(text.split()).casefold()


def check(questions: Sequence[Question], transcripts: Sequence[Transcript]) -> list[str]:
    """The problems of a question set: answers missing from their session, or too long."""
    problems = []
    texts = {t.path: normalised("\n".join(t.documents)) for t in transcripts}
    for q in questions:
        try:
            t = session_of(q, transcripts)
        except BenchError as exc:
            problems.append(str(exc))
            continue
        if normalised(q.answer) not in texts[t.path]:
            problems.append(f"question {q.id}: the answer is not in {Path(t.path).name}")
        if len(q.answer) > 120:
            problems.append(f"question {q.id}: the answer is longer than 120 characters")
    return problems


# ---------------------------------------------------------------------------- ctxmode


def hit_texts(stdout: str, context: bool = True) -> list[str]:
    """The texts of the hits of ``ctxmode search --json``, best first.

    The one place that knows the shape of that output (a JSON list of hits, each an
    object whose ``data`` is the event's data, plain or JSON text, and whose ``context``
    lists the events beside it, each with its ``data``): every string value of a hit,
    with each ``data`` decoded when it is JSON, so that an answer is matched as a person
    reads it, not as JSON escapes it. ``context=False``: the hit's own event only."""
    document = json.loads(stdout) if stdout.strip() else []
    hits = document.get("hits", []) if isinstance(document, dict) else document
    texts = []
    for hit in hits:
        if isinstance(hit, dict):
            hit = _decoded(hit)
            beside = hit.pop("context", None)
            if context and isinstance(beside, list):
                hit["context"] = [_decoded(x) if isinstance(x, dict) else x for x in beside]
        texts.append(record_text(hit, skip=frozenset()))
    return texts


def _decoded(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with its ``data`` decoded when it is JSON text."""
    if isinstance(item.get("data"), str):
        with suppress(ValueError):
            return {**item, "data": json.loads(item["data"])}
    return dict(item)


class Ctxmode:
    """The ctxmode under test, as a command: its import and its search, in a throwaway
    data root and working directory (a transcript's cwd that is no folder here, a
    Windows one for instance, resolves under that directory, the same way for both)."""

    def __init__(self, command: Sequence[str], root: str) -> None:
        self.command = list(command)
        self.workdir = os.path.join(root, "work")
        os.makedirs(self.workdir, exist_ok=True)
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE", "CTXMODE", "CODEX", "GEMINI"))
        }
        self.env.update(
            CTXMODE_HOME=os.path.join(root, "ctxmode-home"),
            HOME=os.path.join(root, "home"),
            NO_COLOR="1",
        )

    def run(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [*self.command, *args],
                cwd=self.workdir,
                env=self.env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return subprocess.CompletedProcess(args, -1, "", str(exc))

    def import_files(self, paths: Sequence[str]) -> dict[str, Any]:
        done = self.run(["import", "--json", *paths])
        if done.returncode != 0:
            raise BenchError(f"ctxmode import failed: {(done.stderr or done.stdout).strip()}")
        try:
            result: dict[str, Any] = json.loads(done.stdout)
        except ValueError:
            result = {}
        return result

    def search(self, query: str, project: str, as_json: bool) -> subprocess.CompletedProcess[str]:
        options = ["--json", "--limit", str(LIMIT)] if as_json else []
        return self.run(["search", "--project", project, *options, "--", query])

    def search_batch(
        self, jobs: Sequence[tuple[str, str, bool]]
    ) -> list[subprocess.CompletedProcess[str]]:
        """Many searches in one interpreter (``BATCH_DRIVER``): the same command line
        parsed by the same click command, without an interpreter start per query. Only
        for a command that is a Python running ``-m ctxmode`` (``ctxmode bench``)."""
        args = [
            ["search", "--project", project, *(["--json", "--limit", str(LIMIT)] if as_json else []),
             "--", query]
            for query, project, as_json in jobs
        ]  # fmt: skip
        python = self.command[0]
        try:
            done = subprocess.run(
                [python, "-c", BATCH_DRIVER],
                cwd=self.workdir,
                env=self.env,
                input=json.dumps(args),
                capture_output=True,
                text=True,
                timeout=TIMEOUT * 10,
                check=False,
            )
            results = json.loads(done.stdout) if done.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
            raise BenchError(f"the batch of searches failed: {exc}") from exc
        if not isinstance(results, list) or len(results) != len(args):
            raise BenchError(f"the batch of searches failed: {done.stderr.strip()[-300:]}")
        return [
            subprocess.CompletedProcess(a, int(r["code"]), str(r["stdout"]), str(r["stderr"]))
            for a, r in zip(args, results, strict=True)
        ]

    def version(self) -> str:
        done = self.run(["--version"])
        return (done.stdout or done.stderr).strip().splitlines()[-1] if done.stdout else "?"


# The searches of a batch, run by the ctxmode under test in one interpreter: each one is
# ``ctxmode <args>`` as the console script runs it (click parses the same arguments), its
# stdout captured; a usage or runtime error is its exit code and message, as on a terminal.
# The streams are text over bytes, as a terminal's are: search writes its output as bytes
# (byte-safe, whatever the data holds) through the text stream's buffer.
BATCH_DRIVER = """
import contextlib, io, json, sys
import click
from ctxmode.cli import main
results = []
def text_stream():
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", write_through=True)
def read_back(stream):
    stream.flush()
    return stream.buffer.getvalue().decode("utf-8", "replace")
for args in json.load(sys.stdin):
    out, err, code = text_stream(), text_stream(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main.main(args=args, prog_name="ctxmode", standalone_mode=False)
        except click.exceptions.ClickException as exc:
            exc.show()
            code = exc.exit_code
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    results.append({"code": code, "stdout": read_back(out), "stderr": read_back(err)})
json.dump(results, sys.stdout)
"""


# ---------------------------------------------------------------------------- baseline


class Baseline:
    """BM25 over the raw transcripts: one FTS5 document per record, porter stemming, the
    query's words OR-ed, scoped to a project (the transcripts that share its cwd)."""

    def __init__(self, transcripts: Iterable[Transcript]) -> None:
        self.conn = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            self.conn.execute(
                "CREATE VIRTUAL TABLE docs USING fts5(text, project UNINDEXED, "
                "tokenize='porter unicode61')"
            )
        except sqlite3.OperationalError as exc:
            raise BenchError(f"this Python's SQLite has no FTS5: {exc}") from exc
        with self.conn:
            for t in transcripts:
                self.conn.executemany(
                    "INSERT INTO docs (text, project) VALUES (?, ?)",
                    ((text, t.cwd) for text in t.documents),
                )

    def search(self, query: str, project: str) -> list[str]:
        words = dict.fromkeys(w.casefold() for w in WORD.findall(query))
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.conn.execute(
            "SELECT text FROM docs WHERE docs MATCH ? AND project = ? ORDER BY rank LIMIT ?",
            (match, project, LIMIT),
        ).fetchall()
        return [str(text) for (text,) in rows]


# ---------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Outcome:
    """One question, one query form, one system."""

    question: Question
    form: str
    system: str
    rank: int  # 1..LIMIT, 0: not among the results
    results: int
    output_bytes: int
    shown: bool | None = None  # ctxmode: the answer visible in the compact output
    error: str = ""
    own_rank: int = 0  # ctxmode: the rank counting each hit's own event only, no context


def rank_of(answer: str, texts: Sequence[str]) -> int:
    wanted = normalised(answer)
    for number, text in enumerate(texts[:LIMIT], start=1):
        if wanted in normalised(text):
            return number
    return 0


def ctxmode_outcome(
    q: Question,
    form: str,
    found: subprocess.CompletedProcess[str],
    plain: subprocess.CompletedProcess[str] | None,
) -> Outcome:
    """A question's outcome from its ``--json`` search and, when run, its compact one."""
    error = "" if found.returncode == 0 else (found.stderr or found.stdout).strip()[:300]
    try:
        texts = hit_texts(found.stdout) if not error else []
        own = hit_texts(found.stdout, context=False) if not error else []
    except ValueError as exc:
        texts, own, error = [], [], f"unreadable --json output: {exc}"
    shown: bool | None = None
    size = len(found.stdout.encode("utf-8"))
    if plain is not None:
        size = len(plain.stdout.encode("utf-8"))
        shown = normalised(q.answer) in normalised(plain.stdout)
    rank = rank_of(q.answer, texts)
    return Outcome(q, form, "ctxmode", rank, len(texts), size, shown, error, rank_of(q.answer, own))


def ask_ctxmode(ctxmode: Ctxmode, q: Question, form: str, project: str, compact: bool) -> Outcome:
    query = q.query(form)
    found = ctxmode.search(query, project, as_json=True)
    plain = ctxmode.search(query, project, as_json=False) if compact else None
    return ctxmode_outcome(q, form, found, plain)


def ask_in_batch(
    ctxmode: Ctxmode,
    jobs: Sequence[tuple[Question, str, str]],
    compact: bool,
    progress: Callable[[str], None] | None,
) -> list[Outcome]:
    """Every (question, form, project) of ``jobs`` in one interpreter."""
    if progress:
        progress(f"asking {len(jobs)} queries")
    searches = [
        (q.query(form), project, as_json)
        for q, form, project in jobs
        for as_json in ((True, False) if compact else (True,))
    ]
    answers = iter(ctxmode.search_batch(searches))
    outcomes = []
    for q, form, _project in jobs:
        found = next(answers)
        plain = next(answers) if compact else None
        outcomes.append(ctxmode_outcome(q, form, found, plain))
    return outcomes


def ask_baseline(baseline: Baseline, q: Question, form: str, project: str) -> Outcome:
    texts = baseline.search(q.query(form), project)
    size = sum(len(t.encode("utf-8")) for t in texts)
    return Outcome(q, form, "baseline", rank_of(q.answer, texts), len(texts), size)


@dataclass
class RecallReport:
    corpus: str
    ctxmode: str
    sessions: int
    records: int
    questions: int
    outcomes: list[Outcome]
    import_summary: dict[str, Any]
    import_seconds: float
    seconds: float
    compact: bool


def run(
    files: Sequence[str],
    questions: Sequence[Question],
    *,
    command: Sequence[str] | None = None,
    corpus: str = "",
    compact: bool = True,
    workers: int | None = None,
    batch: bool = False,
    progress: Callable[[str], None] | None = None,
) -> RecallReport:
    """Import ``files`` with ``command`` (default: this interpreter's ctxmode), ask every
    question in both forms of ctxmode and of the baseline, and report. ``batch``: all
    searches in one interpreter (``Ctxmode.search_batch``), for a Python command only."""
    began = time.perf_counter()
    transcripts = [read_transcript(path) for path in files]
    problems = check(questions, transcripts)
    if problems:
        raise BenchError("the questions do not fit the corpus: " + "; ".join(problems[:5]))
    command = list(command or [sys.executable, "-m", "ctxmode"])
    with tempfile.TemporaryDirectory(prefix="ctxmode-recall-") as root:
        ctxmode = Ctxmode(command, root)
        if progress:
            progress(f"importing {len(files)} transcripts")
        started = time.perf_counter()
        summary = ctxmode.import_files([os.path.abspath(p) for p in files])
        import_seconds = time.perf_counter() - started
        baseline = Baseline(transcripts)
        jobs = [(q, form, session_of(q, transcripts).cwd) for q in questions for form in FORMS]
        outcomes = [ask_baseline(baseline, q, form, project) for q, form, project in jobs]
        if batch:
            outcomes += ask_in_batch(ctxmode, jobs, compact, progress)
        else:
            with ThreadPoolExecutor(max_workers=workers or min(4, os.cpu_count() or 1)) as pool:
                futures = [
                    pool.submit(ask_ctxmode, ctxmode, q, form, project, compact)
                    for q, form, project in jobs
                ]
                for done, future in enumerate(futures, start=1):
                    outcomes.append(future.result())
                    if progress and done % 10 == 0:
                        progress(f"asked {done} of {len(futures)} queries")
        version = ctxmode.version()
    return RecallReport(
        corpus=corpus,
        ctxmode=version,
        sessions=len(transcripts),
        records=sum(len(t.documents) for t in transcripts),
        questions=len(questions),
        outcomes=outcomes,
        import_summary=summary,
        import_seconds=import_seconds,
        seconds=time.perf_counter() - began,
        compact=compact,
    )


def bundled_files(stack: ExitStack) -> tuple[list[str], list[Question]]:
    """The corpus bundled with ctxmode: its transcripts' paths and its questions."""
    data = resources.files("ctxmode.data")
    files: list[str] = []
    questions: list[Question] = []
    for entry in sorted(data.iterdir(), key=lambda e: e.name):
        name = entry.name
        if name.startswith(BUNDLED_PREFIX) and name.endswith(".jsonl"):
            path = stack.enter_context(resources.as_file(entry))
            if name == BUNDLED_QUESTIONS:
                questions = load_questions(path)
            else:
                files.append(str(path))
    if not files or not questions:
        raise BenchError(f"the bundled corpus is missing ({BUNDLED_PREFIX}*.jsonl in ctxmode/data)")
    return files, questions


def run_bundled(
    *, compact: bool = True, progress: Callable[[str], None] | None = None
) -> RecallReport:
    """The bundled corpus through this interpreter's ctxmode (the ``ctxmode bench`` line)."""
    with ExitStack() as stack:
        files, questions = bundled_files(stack)
        return run(
            files, questions, corpus="bundled", compact=compact, batch=True, progress=progress
        )
