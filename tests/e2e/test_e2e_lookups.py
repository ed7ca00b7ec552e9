"""The lookups the snapshot hands the model work where the agent really runs (issue 22).

Every other scenario runs the model's commands with permissions bypassed. Here the set-up
does (a session that fails a command and compacts), and then the model runs the lookup
its snapshot printed, exactly as written, with the clients' safety settings as they ship:

- Claude Code in ``--permission-mode default``: the rule ``ctxmode install`` wrote lets the
  lookup run without asking, and nothing else (a negative control in the same session:
  the lookup with ``&& touch``, an ``rm``, a ``cat`` outside the project stay denied);
- Claude Code with ``"sandbox": {"enabled": true}`` (bubblewrap): the data root is
  readable, not writable, and the store is idle (no -wal/-shm);
- Codex in its ``workspace-write`` sandbox with on-request approvals (what
  ``--full-auto`` was; 0.169.0 has no such flag) and in ``read-only``: no escalation.

The data root is where a real install has it: outside /tmp, $TMPDIR and the project
(under /var/lib, else the e2e cache folder), made for the test and removed after it.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import codex_cli, npm_cache
from tests.e2e.codex_mock import MockResponses, shell
from tests.e2e.codex_mock import Steps as CodexSteps
from tests.e2e.harness import Harness
from tests.e2e.mock_api import Reply, Request, Steps, ToolCall, call, calls, say
from tests.e2e.test_codex_e2e import CodexWorld

pytestmark = pytest.mark.e2e

ERROR_DETAIL = "VAT_RATE_DE missing from rates.toml"
FAILING = "python3 -c \"raise KeyError('" + ERROR_DETAIL + "')\""
HUGE_USAGE = 150_000
RESUME = re.compile(r"<session_resume\b.*?</session_resume>", re.S)
AUTO_COMPACT_ENV = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}
DENIED = ("requires approval", "was blocked", "Read-only file system")


@pytest.fixture
def outside_root(e2e: Harness) -> Iterator[Path]:
    """A data root outside /tmp, $TMPDIR and the project, for this test only."""
    parents = [Path("/var/lib/ctxmode-e2e"), npm_cache.cache_root() / "data-roots"]
    for parent in parents:
        try:
            parent.mkdir(parents=True, exist_ok=True)
            base = Path(tempfile.mkdtemp(prefix="run-", dir=parent))
            break
        except OSError:
            continue
    else:
        pytest.skip("no writable folder outside /tmp for the data root")
    temp = Path(tempfile.gettempdir()).resolve()
    assert temp not in base.resolve().parents, base
    root = base / "ctxmode"
    root.mkdir(mode=0o700)
    e2e.data_root = root
    try:
        yield root
    finally:
        shutil.rmtree(base, ignore_errors=True)
        with contextlib.suppress(OSError):
            base.parent.rmdir()  # only when no other test's folder is in it


def _lookup_of(snapshot: str) -> str:
    """The command the preface says to run for <errors>: the search command, then the
    section's lookup."""
    root = ET.fromstring(snapshot)
    section = root.find("errors")
    lookup = section.find("lookup") if section is not None else None
    assert lookup is not None and lookup.text, f"no lookup in <errors>:\n{snapshot}"
    return f"{root.findtext('search')} {lookup.text}"


def _record_a_compacted_session(h: Harness, proj: Path) -> tuple[str, str]:
    """Set-up, permissions bypassed: a failing command, an automatic compaction; the
    lookup of the snapshot's <errors> as the model received it, and the session id."""
    seen: dict[str, str] = {}

    def take_lookup(req: Request) -> Reply:
        found = req.find_all(RESUME)
        assert found, "no snapshot in the first request after compaction"
        seen["lookup"] = _lookup_of(found[-1])
        return say("Noted.")

    h.serve(
        Steps(
            call("Bash", command=FAILING, description="Run the rate check"),
            call(
                "Bash", command="git log --oneline -1", description="Check", input_tokens=HUGE_USAGE
            ),
            take_lookup,
        )
    )
    run = h.claude_p("Find out why the German rate fails", proj, env=AUTO_COMPACT_ENV)
    assert "lookup" in seen, f"the model never received a snapshot:\n{h.mock_digest()}"
    return seen["lookup"], run.session_id


class _Bash:
    """Steps that run commands one per turn and keep what each returned."""

    def __init__(self, *commands: str) -> None:
        self.commands = list(commands)
        self.calls: list[tuple[str, ToolCall]] = []
        self.results: dict[str, tuple[str, bool]] = {}

    def steps(self) -> list[Any]:
        out: list[Any] = []
        for command in self.commands:
            out += [self._read, self._issue(command)]
        return [*out, self._read]

    def _issue(self, command: str) -> Any:
        def step(req: Request) -> Reply:
            # An id of its own: a resumed session's history holds the set-up's tool ids.
            tool = ToolCall(
                "Bash",
                {"command": command, "description": "Look it up"},
                id=f"toolu_lookup_{len(self.calls):04d}",
            )
            self.calls.append((command, tool))
            return calls(tool)

        return step

    def _read(self, req: Request) -> None:
        if self.calls:
            command, tool = self.calls[-1]
            text = req.tool_result_text(tool.id) or ""
            error = any(
                b.get("is_error") for b in req.tool_results() if b.get("tool_use_id") == tool.id
            )
            self.results[command] = (text, error)


def _reading_commands(lookup: str, proj: Path) -> list[str]:
    """The other reading commands, run by the lookup's own program."""
    program = lookup.split(" search ", 1)[0]
    where = f"--project {proj}"
    return [
        f"{program} dump --json {where}",
        f"{program} sessions {where}",
        f"{program} stats {where}",
        f"{program} show-snapshot {where}",
    ]


def _assert_read(results: dict[str, tuple[str, bool]], commands: list[str]) -> None:
    for command in commands:
        text, error = results.get(command, ("(no result)", True))
        assert not error and not _error_line(text), (command, text)


def _error_line(text: str) -> bool:
    """An error of ctxmode's own (its one line, or a traceback), not one it recorded."""
    return any(line.startswith(("Error:", "Traceback")) for line in text.splitlines())


def _store_is_idle(h: Harness, proj: Path) -> Path:
    stores = sorted((h.data_root / "sessions").glob("*.db"))
    assert len(stores) == 1, stores
    store = stores[0]
    for side in ("-wal", "-shm"):
        assert not Path(f"{store}{side}").exists(), f"{store}{side}: the store is not idle"
    return store


def _assert_found(results: dict[str, tuple[str, bool]], lookup: str, h: Harness) -> None:
    assert lookup in results, f"the lookup's result never reached the model:\n{h.mock_digest()}"
    text, error = results[lookup]
    assert not error, f"the lookup `{lookup}` failed:\n{text}"
    assert ERROR_DETAIL in text, f"the lookup `{lookup}` did not return the detail:\n{text}"


def test_claude_code_default_mode_runs_the_lookup_and_nothing_else(
    e2e: Harness, outside_root: Path
) -> None:
    h = e2e
    proj = h.project("rates-default")
    lookup, session = _record_a_compacted_session(h, proj)
    keep = proj / "keep.txt"
    keep.write_text("still here\n")
    pwned = proj / "pwned"
    secret = outside_root / "outside.txt"  # a file outside the project: never shown
    secret.write_text("SECRET_OUTSIDE\n")
    bash = _Bash(
        lookup,
        f"{lookup} && touch {pwned}",
        f"{lookup}; rm {keep}",
        f"rm {keep}",
        f"cat {secret}",
    )
    h.serve(Steps(*bash.steps()))
    h.claude_p("Look the failure up.", proj, resume=session, permission_mode="default")
    _assert_found(bash.results, lookup, h)
    # The negative controls: each is refused as a whole, nothing of it runs.
    for command in bash.commands[1:]:
        text, error = bash.results.get(command, ("(no result)", False))
        assert error and any(word in text for word in DENIED), (command, text)
        assert ERROR_DETAIL not in text and "SECRET_OUTSIDE" not in text, (command, text)
    assert not pwned.exists() and keep.read_text() == "still here\n"
    h.assert_clean()


def test_claude_code_sandbox_reads_an_idle_store_it_cannot_write(
    e2e: Harness, outside_root: Path
) -> None:
    if sys.platform.startswith("linux") and not (shutil.which("bwrap") and shutil.which("socat")):
        pytest.fail("Claude Code's sandbox needs bubblewrap and socat (test.sh installs them)")
    h = e2e
    proj = h.project("rates-sandbox")
    lookup, session = _record_a_compacted_session(h, proj)
    store = _store_is_idle(h, proj)
    probe = f"touch {store}-probe"  # the sandbox really denies writing the data root
    others = _reading_commands(lookup, proj)
    bash = _Bash(probe, lookup, *others)
    h.serve(Steps(*bash.steps()))
    h.claude_p(
        "Look the failure up.",
        proj,
        resume=session,
        permission_mode="default",
        settings={"sandbox": {"enabled": True}},
    )
    text, error = bash.results.get(probe, ("(no result)", False))
    assert error and "Read-only file system" in text, text
    assert not Path(f"{store}-probe").exists()
    _assert_found(bash.results, lookup, h)
    _assert_read(bash.results, others)
    h.assert_clean()


@pytest.mark.parametrize(
    ("mode", "flags"),
    [
        # On-request approvals in the workspace-write sandbox: Codex's Auto preset, what
        # `codex exec --full-auto` was.
        ("workspace-write", ("-s", "workspace-write", "-c", 'approval_policy="on-request"')),
        ("read-only", ("-s", "read-only", "-c", 'approval_policy="never"')),
    ],
)
def test_codex_sandbox_runs_the_lookup_on_an_idle_store(
    e2e: Harness,
    outside_root: Path,
    codex: codex_cli.CodexInstall,
    mode: str,
    flags: tuple[str, ...],
) -> None:
    h = e2e
    world = CodexWorld(h, codex, codex_home=outside_root.parent / "codex-home")
    try:
        proj = h.project(f"rates-codex-{mode}")
        # Set-up (bypassed): Claude Code records the failure and compacts; its lookup is
        # the same command a Codex session's snapshot prints (one store per repository).
        lookup, _session = _record_a_compacted_session(h, proj)
        store = _store_is_idle(h, proj)
        probe = f"touch {store}-probe"
        others = _reading_commands(lookup, proj)
        world.api = MockResponses(
            CodexSteps(shell(probe), shell(lookup), *map(shell, others), final="Found it."),
            h.root / f"codex-{mode}.jsonl",
        ).__enter__()
        run = codex_cli.run_codex(
            world.codex,
            world.api.base_url,
            "Look the failure up.",
            cwd=proj,
            env=world.env(),
            flags=flags,
            bypass=False,
        )
        assert run.returncode == 0, run.describe()
        outputs = [str(o.get("output")) for r in world.api.requests for o in r.outputs()]
        assert any("Read-only file system" in o or "Permission denied" in o for o in outputs), (
            "the sandbox let the data root be written:\n" + "\n".join(outputs)
        )
        assert not Path(f"{store}-probe").exists()
        assert any(ERROR_DETAIL in o for o in outputs), (
            f"the lookup `{lookup}` did not return the detail in Codex's {mode} sandbox:\n"
            + "\n".join(o[-600:] for o in outputs)
        )
        # One output per command (probe, lookup, the others); none failed to read.
        assert len(outputs) >= 2 + len(others), outputs
        for command, output in zip(others, outputs[-len(others) :], strict=True):
            assert "Process exited with code 0" in output and not _error_line(output), (
                command,
                output[-800:],
            )
        assert "escalat" not in run.stderr.lower(), run.describe()
        assert world.log_errors() == []
    finally:
        if world.api is not None:
            world.api.__exit__(None, None, None)
