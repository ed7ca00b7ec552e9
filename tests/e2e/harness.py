"""The end-to-end harness: ctxmode installed by install.sh, and one scenario's world.

``Harness`` holds a scenario's temporary git projects, the mock API, the runs of the CLI,
and reads back what ctxmode recorded (``ctxmode dump --json``) and logged.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e import claude_cli
from tests.e2e.claude_cli import ClaudeInstall, Run
from tests.e2e.mock_api import MockAPI, Script

REPO = Path(__file__).resolve().parents[2]
# The hooks install.sh must register in ~/.claude/settings.json.
HOOK_EVENTS = (
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "PreCompact",
    "SessionStart",
    "SessionEnd",
    "Stop",
    # install.sh registers it because the client on PATH (claude --version) has it.
    "PostCompact",
)


@dataclass(frozen=True)
class CtxmodeInstall:
    home: Path  # the temporary HOME whose ~/.claude/settings.json install.sh wrote
    data_root: Path  # CTXMODE_HOME at install time (holds the venv)
    ctxmode: Path  # the CLI of the installed venv
    settings: dict[str, Any]


def install_ctxmode(base: Path, claude_bin: Path | None = None) -> tuple[CtxmodeInstall, float]:
    """``./install.sh`` as a user runs it, with HOME and CTXMODE_HOME under ``base``, and
    the client's folder ``claude_bin`` on PATH, as a user has it (install asks
    ``claude --version`` which events the client knows)."""
    script = REPO / "install.sh"
    assert script.exists(), f"{script} does not exist: ctxmode cannot be installed the user's way"
    home = base / "home"
    data_root = base / "ctxmode-home"
    home.mkdir()
    env = claude_cli.hermetic_env({"CTXMODE_HOME": str(data_root)}, home=home)
    if claude_bin is not None:
        env["PATH"] = os.pathsep.join([str(claude_bin), env.get("PATH", "")])
    started = time.monotonic()
    proc = subprocess.run(
        ["bash", str(script)],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = time.monotonic() - started
    assert proc.returncode == 0, (
        f"install.sh failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    settings_path = home / ".claude" / "settings.json"
    assert settings_path.exists(), f"install.sh wrote no {settings_path}:\n{proc.stdout[-2000:]}"
    settings = json.loads(settings_path.read_text())
    missing = [e for e in HOOK_EVENTS if e not in settings.get("hooks", {})]
    assert not missing, f"install.sh did not register {missing} in {settings_path}: {settings}"
    exe = data_root / "venv" / "bin" / "ctxmode"
    if not exe.exists():
        found = shutil.which("ctxmode", path=str(data_root / "venv" / "bin"))
        assert found, f"no ctxmode CLI in {data_root / 'venv' / 'bin'}"
        exe = Path(found)
    return CtxmodeInstall(home, data_root, exe, settings), seconds


# -- the per-test harness --------------------------------------------------------------------


@dataclass
class Harness:
    """One scenario's world: projects, the mock, runs of the CLI, the store and the log."""

    claude: ClaudeInstall
    ctx: CtxmodeInstall
    root: Path
    data_root: Path
    api: MockAPI | None = None
    runs: list[Run] = field(default_factory=list)

    # -- projects --

    def project(self, name: str) -> Path:
        """A fresh git repository with one commit."""
        path = self.root / name
        path.mkdir(parents=True)
        self.git(path, "init", "-q", "-b", "main")
        (path / "README.md").write_text(f"# {name}\n")
        self.git(path, "add", "README.md")
        self.git(path, "commit", "-q", "-m", "Initial commit")
        return path

    def git(self, cwd: Path, *args: str) -> str:
        out = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, f"git {' '.join(args)} failed: {out.stderr}"
        return out.stdout

    def use_broken_copy(self, module: str, appended: str) -> None:
        """Run the hooks from a copy of the installed package with ``appended`` to ``module``.

        A separate HOME gets install.sh's settings.json with the shim paths pointed into
        the copy (the shims put their own package root first on sys.path). The CLI for
        ``dump`` stays the intact one.
        """
        text = (self.ctx.home / ".claude" / "settings.json").read_text()
        roots = set(re.findall(r"([^'\"\s]*)/ctxmode/hooks/", text))
        assert len(roots) == 1, f"cannot find the package root in the hook commands: {roots}"
        source = Path(roots.pop()) / "ctxmode"
        broken = self.root / "broken-package"
        shutil.copytree(source, broken / "ctxmode", ignore=shutil.ignore_patterns("__pycache__"))
        with (broken / "ctxmode" / module).open("a") as fh:
            fh.write(appended)
        home = self.root / "broken-home"
        (home / ".claude").mkdir(parents=True)
        (home / ".claude" / "settings.json").write_text(
            text.replace(f"{source}/hooks/", f"{broken}/ctxmode/hooks/")
        )
        self.ctx = dataclasses.replace(self.ctx, home=home)

    # -- the mock API and the client --

    def serve(
        self, script: Script, *, max_requests: int = 200, max_seconds: float = 240
    ) -> MockAPI:
        if self.api is not None:
            self.api.stop()
        self.api = MockAPI(
            script,
            log_path=self.root / "requests.jsonl",
            max_requests=max_requests,
            max_seconds=max_seconds,
        ).start()
        return self.api

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        values = {"CTXMODE_HOME": str(self.data_root)}
        if self.api is not None:
            values.update(ANTHROPIC_BASE_URL=self.api.base_url, ANTHROPIC_API_KEY="dummy")
        values.update(extra or {})
        return claude_cli.hermetic_env(values, home=self.ctx.home)

    def claude_p(
        self,
        prompt: str,
        cwd: Path,
        *,
        resume: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120,
        check: bool = True,
        permission_mode: str = "bypassPermissions",
        settings: dict[str, Any] | None = None,
    ) -> Run:
        """``claude -p PROMPT [--resume SID]`` in ``cwd``; asserts a clean exit by default.
        ``settings``: more settings for this run (``--settings``, e.g. the sandbox on)."""
        args = ["-p", prompt]
        if resume:
            args += ["--resume", resume]
        if settings is not None:
            args += ["--settings", json.dumps(settings)]
        run = claude_cli.run_claude(
            self.claude,
            args,
            cwd=cwd,
            env=self.env(env),
            timeout=timeout,
            permission_mode=permission_mode,
        )
        self.runs.append(run)
        if check:
            result = run.result
            assert run.returncode == 0 and result is not None and not result.get("is_error"), (
                f"claude -p failed:\n{run.describe()}\n\nmock saw:\n{self.mock_digest()}"
            )
        return run

    def mock_digest(self) -> str:
        return self.api.dump() if self.api is not None else "(no mock)"

    # -- what ctxmode recorded --

    def dump(self, project: Path) -> dict[str, Any]:
        out = subprocess.run(
            [str(self.ctx.ctxmode), "dump", "--json", "--project", str(project)],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, f"ctxmode dump --json failed: {out.stderr[-2000:]}"
        return json.loads(out.stdout)

    def session(self, project: Path, session_id: str) -> dict[str, Any]:
        doc = self.dump(project)
        for session in doc["sessions"]:
            if session["session_id"] == session_id:
                return session
        raise AssertionError(
            f"session {session_id} is not in the store of {project}; sessions there: "
            f"{[s['session_id'] for s in doc['sessions']]}"
        )

    def stats(self, project: Path, session_id: str) -> dict[str, Any]:
        """``ctxmode stats --json`` of one session: its counters and per compaction what the
        client's summary kept of the snapshot's key items."""
        command = [str(self.ctx.ctxmode), "stats", "--json", "--project", str(project)]
        out = subprocess.run(
            [*command, "--session", session_id],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, f"ctxmode stats --json failed: {out.stderr[-2000:]}"
        (session,) = json.loads(out.stdout)["sessions"]
        return dict(session)

    @property
    def log_path(self) -> Path:
        return self.data_root / "logs" / "ctxmode.log"

    def log_problems(self, levels: tuple[str, ...] = ("ERROR",)) -> list[str]:
        """Log records at ``levels``, each with its indented traceback lines."""
        records: list[tuple[bool, list[str]]] = []
        for path in sorted(self.log_path.parent.glob("ctxmode.log*"), reverse=True):
            for line in path.read_text(errors="replace").splitlines():
                if line.startswith("    ") and records:
                    records[-1][1].append(line)
                    continue
                parts = line.split("\t")
                records.append((len(parts) >= 3 and parts[1] in levels, [line]))
        return ["\n".join(lines) for keep, lines in records if keep]

    def assert_clean(self) -> None:
        """No ERROR in ctxmode's log, no hook problem reported by any CLI run."""
        errors = self.log_problems()
        assert not errors, "ctxmode's log has errors:\n" + "\n".join(errors[:10])
        for run in self.runs:
            problems = run.hook_problems() + claude_cli.transcript_hook_problems(
                self.ctx.home, run.session_ids()
            )
            assert not problems, f"hooks misbehaved in `claude {' '.join(run.args)}`:\n" + (
                "\n".join(problems[:10])
            )
