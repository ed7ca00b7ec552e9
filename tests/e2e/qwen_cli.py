"""Install the real Qwen Code CLI from npm into a cache folder and run it offline against a mock.

The sibling of ``gemini_cli.py``. The package (``@qwen-code/qwen-code``) is pinned to the version
the fixtures were recorded with (``DEFAULT_VERSION``; ``CTXMODE_E2E_QWEN_VERSION`` picks another,
or ``latest``). Installs land in the e2e cache (``npm_cache.py``), one folder per version, made
atomically. Qwen Code declares Node >= 22 and runs on 20.

``run_qwen`` runs ``qwen PROMPT`` headless and hermetically (``/work/shared/next-hosts.md``): a
throwaway HOME whose ``~/.qwen/settings.json`` selects the OpenAI-compatible auth and turns
telemetry and updates off, ``OPENAI_BASE_URL`` the local Chat Completions mock, a dummy key,
stdin closed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e import npm_cache

# Re-exported: callers may catch qwen_cli.Unavailable (the same class as claude_cli's).
from tests.e2e.npm_cache import Unavailable as Unavailable

PACKAGE = "@qwen-code/qwen-code"
DEFAULT_VERSION = "0.24.4"
VERSION_ENV = "CTXMODE_E2E_QWEN_VERSION"
NPM_TIMEOUT = 900
MODEL = "mock-model"

# What the hermetic HOME's settings hold besides the hooks.
BASE_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "openai"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    # Background memory extraction sends requests of its own after each turn: off, so
    # the mock sees the agent's requests alone.
    "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
}


@dataclass(frozen=True)
class QwenInstall:
    executable: Path
    version: str


def requested_version() -> str:
    return os.environ.get(VERSION_ENV, "").strip() or DEFAULT_VERSION


def _version_of(exe: Path) -> str | None:
    with tempfile.TemporaryDirectory(prefix="ctxmode-qwen-version-") as home:
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
    exe = prefix / "node_modules" / ".bin" / "qwen"
    return exe if _version_of(exe) == version else None


def ensure_qwen(version: str | None = None) -> QwenInstall:
    """The cached install of ``version`` (pinned by default), installing it first if needed."""
    version = npm_cache.resolve_version(PACKAGE, version or requested_version())
    exe = npm_cache.ensure_installed(
        PACKAGE,
        version,
        folder=f"qwen-code-{version}",
        find=lambda prefix: _find_executable(prefix, version),
        broken="`qwen --version` does not answer",
        timeout=NPM_TIMEOUT,
    )
    return QwenInstall(exe, version)


_DROP_PREFIXES = (
    "QWEN",
    "DASHSCOPE",
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
    """The parent environment minus anything Qwen/OpenAI/Claude/ctxmode/git, HOME=home."""
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
    env.pop("GITHUB_SHA", None)
    env.update(extra or {})
    return env


def prepare_home(home: Path, settings: dict[str, Any] | None = None) -> Path:
    """Write ``home/.qwen/settings.json`` (BASE_SETTINGS merged with ``settings``), keeping
    what is there; ``ctxmode install --host qwen`` adds its hooks to the same file."""
    folder = home / ".qwen"
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

    def describe(self) -> str:
        return (
            f"$ qwen {' '.join(self.args)}\nexit={self.returncode} in {self.seconds:.1f}s\n"
            f"stderr: {self.stderr[-3000:]}\nstdout (tail): {self.stdout[-1500:]}"
        )


def run_qwen(
    install: QwenInstall,
    base_url: str,
    prompt: str,
    *,
    cwd: Path,
    env: dict[str, str],
    flags: tuple[str, ...] = ("--yolo",),
    timeout: float = 180,
) -> Run:
    """``qwen FLAGS PROMPT`` against the Chat Completions mock at ``base_url`` (its ``/v1``);
    never raises on exit."""
    args = [*flags, prompt]
    run_env = dict(env)
    run_env.update(
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY="offline-dummy-key",
        OPENAI_MODEL=MODEL,
        QWEN_CODE_SUPPRESS_YOLO_WARNING="1",
    )
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


@dataclass
class StreamRun:
    returncode: int
    lines: list[dict[str, Any]]
    stderr: str

    def describe(self) -> str:
        tail = "\n".join(json.dumps(line)[:300] for line in self.lines[-6:])
        return f"exit={self.returncode}\nstderr: {self.stderr[-2000:]}\n{tail}"


def run_qwen_stream(
    install: QwenInstall,
    base_url: str,
    prompt: str,
    *,
    cwd: Path,
    env: dict[str, str],
    flags: tuple[str, ...] = (),
    timeout: float = 120,
) -> StreamRun:
    """``qwen --input-format stream-json --output-format stream-json FLAGS`` with one user
    message: headless, but in the approval mode the flags give (the default one unless
    they name another) with the tools that mode offers interactively. A call no rule
    allows waits for an answer nobody gives: the run is then stopped at ``timeout``
    (its group killed; returncode -9)."""
    import threading

    args = ["--input-format", "stream-json", "--output-format", "stream-json", *flags]
    run_env = dict(env)
    run_env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="offline-dummy-key", OPENAI_MODEL=MODEL)
    with tempfile.TemporaryFile(mode="w+") as errors:
        proc = subprocess.Popen(
            [str(install.executable), *args],
            cwd=cwd,
            env=run_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            # Its own process group: the launcher relaunches the CLI as a child, which
            # holds stdout; stopping the run stops the group.
            start_new_session=True,
        )

        def stop() -> None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, stop)
        timer.start()
        lines: list[dict[str, Any]] = []
        try:
            assert proc.stdin is not None and proc.stdout is not None
            message = {"type": "user", "message": {"role": "user", "content": prompt}}
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.close()
            for raw in proc.stdout:
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(line, dict):
                    lines.append(line)
            proc.wait()
        finally:
            timer.cancel()
        errors.seek(0)
        err = errors.read()
    return StreamRun(proc.returncode, lines, err)
