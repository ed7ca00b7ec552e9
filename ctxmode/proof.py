"""The proof run of ``ctxmode install --verify``, for any client: the ctxmode commands a
hooks file registers, fed a sample session the way that client runs them.

What is the same for Claude Code and Codex lives here: a throwaway data root and project,
each command run through the client's shell with the client's environment and a timeout,
the hook contract checked on every call (exit 0, nothing on stderr, stdout empty or the one
``hookSpecificOutput.additionalContext`` object of the event, where the client reads one),
the snapshot printed after the compaction (exactly one SessionStart after a PreCompact
hands it, a well-formed ``<session_resume>``), the events stored, the claims counted and
the hook log's errors. What differs is a :class:`Client`: its shell, its environment, its
sample session (shapes of its own payloads), the events whose stdout it reads. Each host's
proof part makes its own (``ctxmode/hosts/<name>/proof.py``: ``verify(path)``).

CLI-only: never imported by a hook.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ctxmode import settings

# A step's timeout when the file gives none (both clients' own default is larger).
DEFAULT_TIMEOUT = 30


@dataclass
class VerifyResult:
    """The proof run: the installed commands fed a sample session in a throwaway store."""

    calls: int = 0
    events: int = 0
    snapshot_ok: bool = False
    snapshot_bytes: int = 0  # the <session_resume> a SessionStart after the compaction printed
    claims: int = 0  # times that snapshot was claimed in the store (exactly once: 1)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and self.snapshot_ok and self.events > 0


@dataclass(frozen=True)
class Call:
    """One hook call of a sample session; ``before`` is what the client does first (Codex
    writes the earlier tool calls' outcomes to its rollout file between hooks)."""

    event: str
    payload: dict[str, object]
    before: Callable[[], None] | None = None


@dataclass(frozen=True)
class Client:
    """How one client runs its hooks, for the proof run."""

    name: str  # as the messages say it: "Claude Code", "Codex"
    shell: Sequence[str]  # the argv the command string is appended to
    # (throwaway data root, throwaway project, the scratch folder) → the hook's environment
    env: Callable[[str, str, str], dict[str, str]]
    # (throwaway project, scratch folder) → the sample session
    session: Callable[[str, str], list[Call]]
    speaks: tuple[str, ...]  # events whose stdout reaches the model
    expect: tuple[str, ...] = ()  # what the snapshot must name (the session's key facts)
    # The call that compacts (from it on, the snapshot is due), and the event whose stdout
    # hands the snapshot over (Gemini: every BeforeModel after the compression).
    compacts: Callable[[Call], bool] = lambda call: call.event == "PreCompact"
    delivers: str = "SessionStart"
    # stdout → the snapshot it carries (None: it breaks the contract); the default reads
    # the additionalContext object.
    snapshot_of: Callable[[bytes], str | None] | None = None
    # Whether the snapshot is handed over on every call after the compaction (the same
    # text each time) rather than by one call.
    repeats: bool = False
    # event → its own stdout check (instead of the additionalContext contract)
    contracts: Mapping[str, Callable[[bytes], str | None]] = field(default_factory=dict)
    # The snapshot's text as handed over → (what is wrong or None, its size in bytes); the
    # default wants one well-formed <session_resume> (Qwen Code's is an outline of it).
    checks_text: Callable[[str], tuple[str | None, int]] | None = None


def commands_in(
    path: str, text: str | None, required: Sequence[str]
) -> tuple[dict[str, tuple[str, object]], str | None]:
    """ctxmode's command and timeout per event in a hooks file's text, and what is wrong."""
    if text is None:
        return {}, f"{path} does not exist"
    commands = {r.event: (r.command, r.timeout) for r in settings.registrations(text)}
    missing = [event for event in required if event not in commands]
    if missing:
        return commands, f"no ctxmode handler for {', '.join(missing)} in {path}"
    return commands, None


def base_env(drop: Sequence[str]) -> dict[str, str]:
    """This process's environment without the variables starting with ``drop`` and
    without ctxmode's off switch (the proof must run the hooks)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(tuple(drop))}
    env.pop("CTXMODE_DISABLE", None)
    return env


def run(commands: Mapping[str, tuple[str, object]], client: Client) -> VerifyResult:
    """Run ``commands`` (event → command, timeout) on ``client``'s sample session.

    Each call runs in a throwaway data root (CTXMODE_HOME) and project, with the project as
    its cwd; the real store is never touched. An event of the session with no command is
    skipped (a client version that lacks it).
    """
    result = VerifyResult()
    with tempfile.TemporaryDirectory(prefix="ctxmode-verify-") as tmp:
        home = os.path.join(tmp, "home")
        project = os.path.join(tmp, "project")
        os.makedirs(project)
        env = client.env(home, project, tmp)
        compacted = False
        after: list[bytes] = []  # what the SessionStarts after the compaction printed
        for step in client.session(project, tmp):
            if step.event not in commands:
                continue
            if step.before is not None:
                step.before()
            command, timeout = commands[step.event]
            limit = timeout if isinstance(timeout, (int, float)) and timeout > 0 else None
            try:
                proc = subprocess.run(
                    [*client.shell, command],
                    input=json.dumps(step.payload).encode(),
                    capture_output=True,
                    cwd=project,
                    env=env,
                    timeout=limit or DEFAULT_TIMEOUT,
                    check=False,
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                result.problems.append(f"{step.event}: {type(exc).__name__}: {exc}")
                continue
            result.calls += 1
            if proc.returncode != 0:
                result.problems.append(f"{step.event} exited {proc.returncode}")
            if proc.stderr:
                result.problems.append(f"{step.event} wrote to stderr: {proc.stderr[:200]!r}")
            problem = contract_problem(step.event, proc.stdout, client)
            if problem:
                result.problems.append(problem)
            compacted = compacted or client.compacts(step)
            if compacted and step.event == client.delivers and proc.stdout.strip():
                after.append(proc.stdout)
        _check_snapshot(result, after, client)
        try:
            result.events = _count(home, "SELECT count(*) FROM session_events")
            result.claims = _count(
                home, "SELECT count(*) FROM session_resume WHERE kind = 'compact' AND consumed = 1"
            )
        except Exception as exc:  # reported, not raised: this is a check
            result.problems.append(f"cannot read the throwaway store: {exc}")
        if result.snapshot_ok and result.claims != 1:
            result.problems.append(
                f"the compaction snapshot was claimed {result.claims} times (expected once)"
            )
        result.problems.extend(_log_errors(os.path.join(home, "logs")))
        if result.events == 0 and not result.problems:
            result.problems.append("the hooks ran but stored no event")
    return result


def contract_problem(event: str, stdout: bytes, client: Client) -> str | None:
    """What in a hook's stdout breaks the client's contract: nothing at all, or (for an
    event whose output the client reads) one JSON object carrying ``additionalContext``
    for that event and nothing else (Codex refuses unknown keys)."""
    if not stdout.strip():
        return None
    if event in client.contracts:
        return client.contracts[event](stdout)
    if event not in client.speaks:
        return f"{event} printed to stdout: {stdout[:200]!r}"
    try:
        document = json.loads(stdout)
    except ValueError:
        return f"{event} printed something other than one JSON object: {stdout[:200]!r}"
    inner = document.get("hookSpecificOutput") if isinstance(document, dict) else None
    if (
        not isinstance(document, dict)
        or set(document) != {"hookSpecificOutput"}
        or not isinstance(inner, dict)
        or set(inner) != {"hookEventName", "additionalContext"}
        or inner["hookEventName"] != event
        or not isinstance(inner["additionalContext"], str)
    ):
        return f"{event} printed JSON that {client.name} does not accept: {stdout[:200]!r}"
    return None


def _check_snapshot(result: VerifyResult, printed: list[bytes], client: Client) -> None:
    if client.snapshot_of is not None:
        texts = [client.snapshot_of(out) for out in printed]
        if client.repeats and len(printed) > 1 and len(set(texts)) == 1:
            printed = printed[:1]  # the same snapshot, served again with each request
        elif client.repeats and len(set(texts)) > 1:
            result.problems.append(
                f"the {client.delivers} calls after the compaction handed over "
                f"{len(set(texts))} different snapshots (expected the same one each time)"
            )
            return
    if len(printed) != 1:
        result.problems.append(
            f"no {client.delivers} after the compaction printed the snapshot"
            if not printed
            else f"{len(printed)} {client.delivers}s after the compaction printed a snapshot "
            "(the model would get it more than once)"
        )
        return
    if client.snapshot_of is not None:
        context = client.snapshot_of(printed[0]) or ""
        problem, result.snapshot_bytes = (client.checks_text or check_snapshot_text)(context)
    else:
        problem, result.snapshot_bytes = check_resume(printed[0])
    result.snapshot_ok = problem is None
    if problem:
        result.problems.append(problem)
        return
    if client.snapshot_of is None:
        context = json.loads(printed[0])["hookSpecificOutput"]["additionalContext"]
    missing = [fact for fact in client.expect if fact not in context]
    if missing:
        result.problems.append(f"the snapshot does not name {', '.join(missing)}")


def check_snapshot_text(text: str) -> tuple[str | None, int]:
    """(None, its size in bytes) when ``text`` is one well-formed ``<session_resume>``;
    else (what is wrong, 0)."""
    import xml.etree.ElementTree as ElementTree

    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        return f"no valid snapshot was handed over ({exc})", 0
    if root.tag != "session_resume":
        return "something other than a <session_resume> snapshot was handed over", 0
    return None, len(text.encode("utf-8"))


def check_resume(stdout: bytes) -> tuple[str | None, int]:
    """(None, its size in bytes) when ``stdout`` is the SessionStart contract holding a
    parseable snapshot; else (what is wrong, 0)."""
    import xml.etree.ElementTree as ElementTree

    try:
        document = json.loads(stdout)
        context = document["hookSpecificOutput"]["additionalContext"]
        ElementTree.fromstring(context)
    except (ValueError, KeyError, TypeError, ElementTree.ParseError) as exc:
        return f"SessionStart printed no valid snapshot ({type(exc).__name__}: {exc})", 0
    if "<session_resume" not in context:
        return "SessionStart printed something other than a <session_resume> snapshot", 0
    return None, len(context.encode("utf-8"))


def _count(home: str, query: str) -> int:
    """The sum of ``query``'s count over the throwaway root's stores."""
    import glob
    import sqlite3

    total = 0
    for db in glob.glob(os.path.join(home, "sessions", "*.db")):
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            total += int(connection.execute(query).fetchone()[0])
        finally:
            connection.close()
    return total


def _log_errors(log_dir: str) -> list[str]:
    from ctxmode import hooklog

    return [
        f"hook log: {record['event']}: {record['message']}"
        for record in hooklog.read_records(log_dir)
        if record["level"] == "ERROR"
    ]


def verified(result: VerifyResult, sample: str = "a sample session") -> str:
    """The words `install --verify` adds to its line when the proof run passed."""
    return (
        f"; verified: {result.calls} hook calls of {sample} through them "
        f"stored {result.events} events, and its {result.snapshot_bytes}-byte snapshot was "
        "injected after compaction, claimed once"
    )


def failed(line: str, result: VerifyResult, client: str, remove: str) -> str:
    """The error `install --verify` raises when the proof run found problems."""
    problems = "\n  ".join(result.problems or ["no snapshot was produced"])
    return (
        f"{line}, but the sample session failed:\n  {problems}\n"
        f"(the hooks fail open, so {client} keeps working; `{remove}` removes them)"
    )
