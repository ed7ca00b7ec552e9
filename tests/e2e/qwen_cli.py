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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e import npm_client

# Re-exported: callers may catch qwen_cli.Unavailable (the same class as claude_cli's).
from tests.e2e.npm_cache import Unavailable as Unavailable

PACKAGE = "@qwen-code/qwen-code"
DEFAULT_VERSION = "0.24.4"
VERSION_ENV = "CTXMODE_E2E_QWEN_VERSION"
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

QwenInstall = npm_client.Install


def requested_version() -> str:
    return npm_client.requested_version(VERSION_ENV, DEFAULT_VERSION)


def _version_of(exe: Path) -> str | None:
    return npm_client.last_word(npm_client.version_output(exe, "qwen", hermetic_env))


def ensure_qwen(version: str | None = None) -> QwenInstall:
    """The cached install of ``version`` (pinned by default), installing it first if needed."""
    return npm_client.ensure(
        PACKAGE,
        version or requested_version(),
        folder="qwen-code",
        command="qwen",
        version_of=_version_of,
    )


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
    return npm_client.hermetic_env(home, _DROP_PREFIXES, extra)


def prepare_home(home: Path, settings: dict[str, Any] | None = None) -> Path:
    """Write ``home/.qwen/settings.json`` (BASE_SETTINGS merged with ``settings``), keeping
    what is there; ``ctxmode install --host qwen`` adds its hooks to the same file."""
    return npm_client.prepare_home(home, ".qwen", BASE_SETTINGS, settings)


class Run(npm_client.Run):
    PROGRAM = "qwen"


def _offline_env(base_url: str) -> dict[str, str]:
    """The variables that run Qwen against the local Chat Completions mock."""
    return {
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "offline-dummy-key",
        "OPENAI_MODEL": MODEL,
    }


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
    run_env = dict(env, **_offline_env(base_url), QWEN_CODE_SUPPRESS_YOLO_WARNING="1")
    return npm_client.run(Run, install, [*flags, prompt], cwd=cwd, env=run_env, timeout=timeout)


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
    run_env = dict(env, **_offline_env(base_url))
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
