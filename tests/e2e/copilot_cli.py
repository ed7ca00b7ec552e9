"""Install the real GitHub Copilot CLI from npm into a cache folder and run it offline.

The sibling of ``gemini_cli.py``. The package (``@github/copilot``) is pinned to the version
the fixtures were recorded with (``DEFAULT_VERSION``; ``CTXMODE_E2E_COPILOT_VERSION`` picks
another, or ``latest``); its binary comes from the platform package npm installs beside it
(``@github/copilot-linux-x64``). Installs land in the e2e cache (``npm_cache.py``).

``run_copilot`` runs ``copilot -p`` hermetically (``/work/shared/next-hosts.md``): a throwaway
HOME (and ``COPILOT_HOME`` in it), no GitHub login, ``COPILOT_OFFLINE=true`` and a custom
provider: ``COPILOT_PROVIDER_BASE_URL`` (the local mock), ``COPILOT_PROVIDER_API_KEY`` and
``COPILOT_MODEL``, stdin closed.
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
from tests.e2e.npm_cache import Unavailable as Unavailable

PACKAGE = "@github/copilot"
DEFAULT_VERSION = "1.0.102"
VERSION_ENV = "CTXMODE_E2E_COPILOT_VERSION"
NPM_TIMEOUT = 900
MODEL = "gpt-4.1"


@dataclass(frozen=True)
class CopilotInstall:
    executable: Path
    version: str


def requested_version() -> str:
    return os.environ.get(VERSION_ENV, "").strip() or DEFAULT_VERSION


def _version_of(exe: Path) -> str | None:
    with tempfile.TemporaryDirectory(prefix="ctxmode-copilot-version-") as home:
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
    for word in out.stdout.replace(",", " ").split():
        word = word.strip().rstrip(".")
        if word[:1].isdigit() and word.count(".") == 2:
            return word
    return None


def _find_executable(prefix: Path, version: str) -> Path | None:
    exe = prefix / "node_modules" / ".bin" / "copilot"
    return exe if _version_of(exe) == version else None


def ensure_copilot(version: str | None = None) -> CopilotInstall:
    """The cached install of ``version`` (pinned by default), installing it first if needed."""
    version = npm_cache.resolve_version(PACKAGE, version or requested_version())
    exe = npm_cache.ensure_installed(
        PACKAGE,
        version,
        folder=f"copilot-cli-{version}",
        find=lambda prefix: _find_executable(prefix, version),
        broken="`copilot --version` does not answer",
        timeout=NPM_TIMEOUT,
    )
    return CopilotInstall(exe, version)


_DROP_PREFIXES = (
    "COPILOT",
    "GITHUB",
    "GH_",
    "GEMINI",
    "GOOGLE",
    "OPENAI",
    "CODEX",
    "CLAUDE",
    "ANTHROPIC",
    "CTXMODE_",
    "GIT_",
    "NODE_OPTIONS",
)


def hermetic_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The parent environment minus anything Copilot/GitHub/other clients/ctxmode/git,
    HOME=home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        NO_PROXY="127.0.0.1,localhost",
        GIT_AUTHOR_NAME="E2E Tester",
        GIT_AUTHOR_EMAIL="e2e@example.invalid",
        GIT_COMMITTER_NAME="E2E Tester",
        GIT_COMMITTER_EMAIL="e2e@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
    )
    env.update(extra or {})
    return env


def offline_env(base_url: str, *, max_prompt_tokens: int | None = None) -> dict[str, str]:
    """The variables that run Copilot against a local OpenAI-style mock, no login."""
    env = {
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": base_url,
        "COPILOT_PROVIDER_API_KEY": "offline-dummy-key",
        "COPILOT_MODEL": MODEL,
    }
    if max_prompt_tokens is not None:
        env["COPILOT_PROVIDER_MAX_PROMPT_TOKENS"] = str(max_prompt_tokens)
    return env


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def describe(self) -> str:
        return (
            f"$ copilot {' '.join(self.args)[:300]}\nexit={self.returncode} in {self.seconds:.1f}s\n"
            f"stderr: {self.stderr[-3000:]}\nstdout (tail): {self.stdout[-1500:]}"
        )


def session_ids(home: Path) -> list[str]:
    """The sessions Copilot kept under ``home/.copilot/session-state``, oldest first."""
    folder = home / ".copilot" / "session-state"
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if (p / "events.jsonl").exists()]
    return [p.name for p in sorted(found, key=lambda p: p.stat().st_mtime)]


def run_copilot(
    install: CopilotInstall,
    base_url: str,
    prompt: str,
    *,
    cwd: Path,
    env: dict[str, str],
    resume: str | None = None,
    flags: tuple[str, ...] = ("--allow-all-tools",),
    max_prompt_tokens: int | None = None,
    timeout: float = 180,
) -> Run:
    """``copilot FLAGS [--resume ID] -p PROMPT`` against the mock at ``base_url``; never
    raises on exit."""
    args = [*flags]
    if resume:
        args += [f"--resume={resume}"]
    args += ["-p", prompt]
    run_env = dict(env)
    run_env.update(offline_env(base_url, max_prompt_tokens=max_prompt_tokens))
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


def read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
