"""Install the real Claude Code CLI from npm into a cache folder and run it hermetically.

The package is pinned to a version verified with this suite (``DEFAULT_VERSION``);
``CTXMODE_E2E_CLAUDE_VERSION`` picks another one, or ``latest``. Installs land in the e2e
cache (``npm_cache.py``: ``$CTXMODE_E2E_CACHE``, default ``~/.cache/ctxmode-e2e``), one
folder per version, made atomically: npm installs into a temporary folder that is renamed
into place only once ``claude --version`` answers with the expected version.

Since 2.1.x the npm package ships the native binary through a per-platform optional
dependency, which its postinstall script links over ``bin/claude.exe``. Nothing is downloaded
outside the npm registry. If the postinstall did not run (an npm that refuses install
scripts), we run it ourselves, and fall back to the platform package's binary.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e import npm_cache

# Re-exported: the suite and the scripts catch claude_cli.Unavailable.
from tests.e2e.npm_cache import Unavailable as Unavailable
from tests.e2e.npm_cache import cache_root as cache_root

PACKAGE = "@anthropic-ai/claude-code"
# The version the scenarios were verified against (the fixtures in
# tests/fixtures/claude-code-2.1.197 were recorded with it, by scripts/record_fixtures.py).
DEFAULT_VERSION = "2.1.197"
VERSION_ENV = "CTXMODE_E2E_CLAUDE_VERSION"
NPM_TIMEOUT = 300


@dataclass(frozen=True)
class ClaudeInstall:
    executable: Path
    version: str


def requested_version() -> str:
    return os.environ.get(VERSION_ENV, "").strip() or DEFAULT_VERSION


def resolve_version(spec: str) -> str:
    """``latest`` (or any dist-tag / range) → a concrete version, asking the registry."""
    return npm_cache.resolve_version(PACKAGE, spec)


def _binary_version(exe: Path) -> str | None:
    try:
        out = subprocess.run(
            [str(exe), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            env=hermetic_env({}, home=tempfile.gettempdir()),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    # "2.1.197 (Claude Code)"
    return out.stdout.strip().split(" ", 1)[0] or None


def _find_executable(prefix: Path, version: str) -> Path | None:
    """The working ``claude`` of an install folder, repairing a skipped postinstall."""
    bin_link = prefix / "node_modules" / ".bin" / "claude"
    if _binary_version(bin_link) == version:
        return bin_link
    pkg = prefix / "node_modules" / "@anthropic-ai" / "claude-code"
    install_script = pkg / "install.cjs"
    if install_script.exists() and shutil.which("node"):
        subprocess.run(
            ["node", str(install_script)], cwd=pkg, capture_output=True, timeout=120, check=False
        )
        if _binary_version(bin_link) == version:
            return bin_link
    for native in sorted((prefix / "node_modules" / "@anthropic-ai").glob("claude-code-*/claude")):
        if _binary_version(native) == version:
            return native
    return None


def ensure_claude(spec: str | None = None) -> ClaudeInstall:
    """The cached install of the requested version, installing it first if needed."""
    version = resolve_version(spec or requested_version())
    exe = npm_cache.ensure_installed(
        PACKAGE,
        version,
        folder=f"claude-code-{version}",
        find=lambda prefix: _find_executable(prefix, version),
        broken="no working `claude` was found "
        "(postinstall skipped and no native binary for this platform?)",
        timeout=NPM_TIMEOUT,
    )
    return ClaudeInstall(exe, version)


# -- running ---------------------------------------------------------------------------------

# Prefixes of inherited variables that would make a run depend on the parent: a Claude Code
# session running these tests, a real API key, a user's ctxmode data root.
_DROP_PREFIXES = ("CLAUDE", "ANTHROPIC", "CTXMODE_", "OTEL_", "GIT_", "NODE_OPTIONS")
_DROP_NAMES = {"CLAUDECODE", "DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "IS_SANDBOX"}


def hermetic_env(extra: dict[str, str], *, home: str | os.PathLike[str]) -> dict[str, str]:
    """The parent environment minus anything Claude/ctxmode/git-specific, plus ``extra``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(_DROP_PREFIXES) and key not in _DROP_NAMES
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(Path(home) / ".config"),
        XDG_CACHE_HOME=str(Path(home) / ".cache"),
        XDG_DATA_HOME=str(Path(home) / ".local" / "share"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        IS_SANDBOX="1",
        # Newer clients (2.1.3xx) leave the task tools out in print mode unless asked; they
        # then come as deferred tools, loaded through ToolSearch (see mock_api.load_tools).
        CLAUDE_CODE_ENABLE_TODO_TOOLS="1",
        GIT_AUTHOR_NAME="E2E Tester",
        GIT_AUTHOR_EMAIL="e2e@example.invalid",
        GIT_COMMITTER_NAME="E2E Tester",
        GIT_COMMITTER_EMAIL="e2e@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
    )
    env.update(extra)
    return env


_HOOK_FAILED = re.compile(
    r"(?i)\b(?:hook\b[^\n]{0,400}?\b(?:failed|error|timed out)\b|"
    r"(?:PreToolUse|PostToolUse|PostToolUseFailure|UserPromptSubmit|PreCompact|PostCompact|"
    r"SessionStart|SessionEnd|Stop)\b[^\n]{0,400}?\b(?:failed|timed out)\b)"
)


def transcript_hook_problems(home: Path, session_ids: set[str]) -> list[str]:
    """Hook errors Claude Code recorded in the transcripts of these sessions.

    Failures of tool and prompt hooks are not printed in print mode; the client stores
    them as ``attachment`` entries (``hook_non_blocking_error`` and the like).
    """
    problems = []
    projects = home / ".claude" / "projects"
    for sid in sorted(session_ids):
        for path in sorted(projects.glob(f"*/{sid}.jsonl")) + sorted(
            projects.glob(f"*/{sid}/**/*.jsonl")
        ):
            for line in path.read_text(errors="replace").splitlines():
                if '"attachment"' not in line or "hook" not in line:
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                attachment = entry.get("attachment") or {}
                kind = str(attachment.get("type", ""))
                if "hook" in kind and any(w in kind for w in ("error", "cancel", "timeout")):
                    problems.append(
                        f"{path.name}: {kind} {attachment.get('hookName')}: "
                        f"{str(attachment.get('stderr'))[:300]!r}"
                    )
    return problems


@dataclass
class Run:
    """One finished ``claude -p`` invocation."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        for msg in self.messages:
            if msg.get("type") == "system" and msg.get("subtype") == "init":
                return str(msg["session_id"])
        for msg in self.messages:
            if msg.get("session_id"):
                return str(msg["session_id"])
        raise AssertionError(f"no session_id in the CLI output of {self.args}:\n{self.describe()}")

    @property
    def result(self) -> dict[str, Any] | None:
        for msg in reversed(self.messages):
            if msg.get("type") == "result":
                return msg
        return None

    def session_ids(self) -> set[str]:
        return {str(m["session_id"]) for m in self.messages if m.get("session_id")}

    def hook_problems(self) -> list[str]:
        """Hook failures the CLI showed: stream-json hook responses and printed notices.

        SessionStart runs are reported as ``hook_response`` messages; a failing PreCompact
        shows in the ``/compact`` output ("PreCompact [cmd] failed: ..."); a failing
        SessionEnd is printed on stderr. Failures of the other events only reach the
        transcript (see ``transcript_hook_problems``).
        """
        problems = []
        for msg in self.messages:
            if msg.get("type") != "system" or msg.get("subtype") != "hook_response":
                continue
            name = msg.get("hook_name")
            if msg.get("outcome") != "success" or msg.get("exit_code") not in (0, None):
                problems.append(
                    f"{name}: outcome={msg.get('outcome')} exit={msg.get('exit_code')} "
                    f"stderr={str(msg.get('stderr'))[:300]!r}"
                )
            elif msg.get("stderr"):
                problems.append(f"{name}: wrote to stderr: {str(msg.get('stderr'))[:300]!r}")
        for line in (self.stdout + "\n" + self.stderr).splitlines():
            if '"subtype":"hook_response"' in line:
                continue
            for match in _HOOK_FAILED.finditer(line):
                problems.append(f"CLI printed: {match.group(0)[:400]}")
        return problems

    def describe(self) -> str:
        return (
            f"$ claude {' '.join(self.args)}\nexit={self.returncode} in {self.seconds:.1f}s\n"
            f"stderr: {self.stderr[-1500:]}\nstdout (tail): {self.stdout[-2500:]}"
        )


def run_claude(
    install: ClaudeInstall,
    args: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float = 120,
    permission_mode: str = "bypassPermissions",
) -> Run:
    """``claude -p ...`` with stream-json output; never raises on a non-zero exit.

    ``permission_mode``: the set-up steps bypass permissions; the lookup steps run in the
    client's ``default`` mode, as a user has it (a command no rule allows is denied in
    print mode: "This command requires approval")."""
    argv = [
        str(install.executable),
        *args,
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        permission_mode,
    ]
    started = time.monotonic()
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        code = -9
        out = _text(exc.stdout)
        err = _text(exc.stderr) + f"\n[timed out after {timeout}s]"
    run = Run(args, code, out, err, time.monotonic() - started)
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                run.messages.append(json.loads(line))
    return run


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode("utf-8", "replace")
