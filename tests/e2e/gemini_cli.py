"""Install the real Gemini CLI from npm into a cache folder and run it offline against a mock.

The sibling of ``codex_cli.py``. The package (``@google/gemini-cli``) is pinned to the version
the fixtures were recorded with (``DEFAULT_VERSION``; ``CTXMODE_E2E_GEMINI_VERSION`` picks
another, or ``latest``). Installs land in the e2e cache (``npm_cache.py``), one folder per
version, made atomically.

``run_gemini`` runs ``gemini -p`` hermetically (``/work/shared/gemini-hooks.md``, "Recipe"): a
throwaway HOME whose ``~/.gemini/settings.json`` selects the API-key auth and turns telemetry
and updates off, no Google/Gemini variables but ``GOOGLE_GEMINI_BASE_URL`` (the local mock)
and a dummy ``GEMINI_API_KEY``, ``--skip-trust --approval-mode yolo`` (the mock's commands run
as written), stdin closed.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e import npm_cache

# Re-exported: callers may catch gemini_cli.Unavailable (the same class as claude_cli's).
from tests.e2e.npm_cache import Unavailable as Unavailable

PACKAGE = "@google/gemini-cli"
DEFAULT_VERSION = "0.61.0"
VERSION_ENV = "CTXMODE_E2E_GEMINI_VERSION"
NPM_TIMEOUT = 900

# What the hermetic HOME's settings hold besides the hooks (gemini-hooks.md, "Recipe").
BASE_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


@dataclass(frozen=True)
class GeminiInstall:
    executable: Path
    version: str


def requested_version() -> str:
    return os.environ.get(VERSION_ENV, "").strip() or DEFAULT_VERSION


def _version_of(exe: Path) -> str | None:
    with tempfile.TemporaryDirectory(prefix="ctxmode-gemini-version-") as home:
        try:
            out = subprocess.run(
                [str(exe), "--version"],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
                env=hermetic_env(Path(home)),
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    words = out.stdout.split()
    return words[-1] if out.returncode == 0 and words else None


def _find_executable(prefix: Path, version: str) -> Path | None:
    exe = prefix / "node_modules" / ".bin" / "gemini"
    return exe if _version_of(exe) == version else None


def ensure_gemini(version: str | None = None) -> GeminiInstall:
    """The cached install of ``version`` (pinned by default), installing it first if needed."""
    version = npm_cache.resolve_version(PACKAGE, version or requested_version())
    exe = npm_cache.ensure_installed(
        PACKAGE,
        version,
        folder=f"gemini-cli-{version}",
        find=lambda prefix: _find_executable(prefix, version),
        broken="`gemini --version` does not answer",
        timeout=NPM_TIMEOUT,
    )
    return GeminiInstall(exe, version)


_DROP_PREFIXES = (
    "GEMINI",
    "GOOGLE",
    "CLOUDSDK",
    "OPENAI",
    "CODEX",
    "CLAUDE",
    "ANTHROPIC",
    "CTXMODE_",
    "GIT_",
    "NODE_OPTIONS",
    "SURFACE",
)


def hermetic_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The parent environment minus anything Google/Gemini/Claude/Codex/ctxmode/git,
    HOME=home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        NO_PROXY="127.0.0.1,localhost",
        GIT_AUTHOR_NAME="E2E Tester",
        GIT_AUTHOR_EMAIL="e2e@example.invalid",
        GIT_COMMITTER_NAME="E2E Tester",
        GIT_COMMITTER_EMAIL="e2e@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
    )
    env.pop("GITHUB_SHA", None)  # it turns the CLI's environment redaction on
    env.update(extra or {})
    return env


def prepare_home(home: Path, settings: dict[str, Any] | None = None) -> Path:
    """Write ``home/.gemini/settings.json`` (BASE_SETTINGS merged with ``settings``) unless
    it exists; ``ctxmode install --host gemini`` adds its hooks to the same file."""
    folder = home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "settings.json"
    document = json.loads(path.read_text()) if path.exists() else {}
    for key, value in {**BASE_SETTINGS, **(settings or {})}.items():
        document.setdefault(key, value)
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def result(self) -> dict[str, Any]:
        """``-o json``'s document ({session_id, response, stats})."""
        start = self.stdout.find("{")
        try:
            value = json.loads(self.stdout[start:]) if start >= 0 else None
        except ValueError:
            value = None
        if not isinstance(value, dict):
            raise AssertionError(f"no JSON result from gemini:\n{self.describe()}")
        return value

    @property
    def session_id(self) -> str:
        return str(self.result["session_id"])

    def hook_problems(self) -> list[str]:
        """The CLI's lines about hooks that failed, warned or printed a system message."""
        return [
            line
            for line in self.stderr.splitlines()
            if "Hook" in line and ("failed" in line or "Warning" in line or "message" in line)
        ]

    def describe(self) -> str:
        return (
            f"$ gemini {' '.join(self.args)}\nexit={self.returncode} in {self.seconds:.1f}s\n"
            f"stderr: {self.stderr[-3000:]}\nstdout (tail): {self.stdout[-1500:]}"
        )


def run_gemini(
    install: GeminiInstall,
    base_url: str,
    prompt: str,
    *,
    cwd: Path,
    env: dict[str, str],
    resume: str | None = None,
    flags: tuple[str, ...] = ("--skip-trust",),
    timeout: float = 180,
) -> Run:
    """``gemini FLAGS --approval-mode yolo -o json [--resume ID] -p PROMPT`` against the mock
    at ``base_url``; never raises on exit."""
    args = [*flags, "--approval-mode", "yolo", "-o", "json"]
    if resume:
        args += ["--resume", resume]
    args += ["-p", prompt]
    run_env = dict(env)
    run_env.update(GOOGLE_GEMINI_BASE_URL=base_url, GEMINI_API_KEY="offline-dummy-key")
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [str(install.executable), *args],
            cwd=cwd,
            env=run_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        code = -9
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = (exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")) + (
            f"\n[timed out after {timeout}s]"
        )
    return Run(args, code, out, err, time.monotonic() - started)
