"""Install the real Codex CLI from npm into a cache folder and run it offline against a mock.

The sibling of ``claude_cli.py``. The package (``@openai/codex``) is pinned to the version the
fixtures were recorded with (``DEFAULT_VERSION``; ``CTXMODE_E2E_CODEX_VERSION`` picks another,
or ``latest``); its platform binary comes as an optional npm dependency, nothing is downloaded
outside the npm registry. Installs land in the e2e cache (``npm_cache.py``), one folder per
version, made atomically (installed into a temporary folder, renamed once ``codex --version``
answers).

``run_codex`` runs ``codex exec`` hermetically: a throwaway HOME, no OpenAI/Codex variables,
the model provider pointed at the local mock (``-c`` overrides, so config.toml holds only the
hooks' trust), sandbox and approvals off (the mock's commands run as written).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.e2e import npm_cache

# Re-exported: callers may catch codex_cli.Unavailable (the same class as claude_cli's).
from tests.e2e.npm_cache import Unavailable as Unavailable

PACKAGE = "@openai/codex"
DEFAULT_VERSION = "0.169.0"
VERSION_ENV = "CTXMODE_E2E_CODEX_VERSION"
NPM_TIMEOUT = 600
MODEL = "gpt-5.5"  # a model Codex knows: it offers apply_patch to it


@dataclass(frozen=True)
class CodexInstall:
    executable: Path
    version: str


def requested_version() -> str:
    return os.environ.get(VERSION_ENV, "").strip() or DEFAULT_VERSION


def _version_of(exe: Path) -> str | None:
    # A throwaway HOME: even `--version` makes ~/.codex/tmp.
    with tempfile.TemporaryDirectory(prefix="ctxmode-codex-version-") as home:
        env = hermetic_env(Path(home), {"CODEX_HOME": str(Path(home) / ".codex")})
        try:
            out = subprocess.run(
                [str(exe), "--version"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                env=env,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    # "codex-cli 0.169.0"
    words = out.stdout.split()
    return words[-1] if out.returncode == 0 and words else None


def _find_executable(prefix: Path, version: str) -> Path | None:
    exe = prefix / "node_modules" / ".bin" / "codex"
    return exe if _version_of(exe) == version else None


def ensure_codex(version: str | None = None) -> CodexInstall:
    """The cached install of ``version`` (pinned by default), installing it first if needed."""
    version = npm_cache.resolve_version(PACKAGE, version or requested_version())
    exe = npm_cache.ensure_installed(
        PACKAGE,
        version,
        folder=f"codex-{version}",
        find=lambda prefix: _find_executable(prefix, version),
        broken="`codex --version` does not answer (no binary for this platform?)",
        timeout=NPM_TIMEOUT,
    )
    return CodexInstall(exe, version)


_DROP_PREFIXES = ("OPENAI", "CODEX", "CLAUDE", "ANTHROPIC", "CTXMODE_", "GIT_", "NODE_OPTIONS")


def hermetic_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The parent environment minus anything OpenAI/Codex/Claude/ctxmode/git, HOME=home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        MOCK_KEY="offline",
        NO_PROXY="127.0.0.1,localhost",
        GIT_AUTHOR_NAME="E2E Tester",
        GIT_AUTHOR_EMAIL="e2e@example.invalid",
        GIT_COMMITTER_NAME="E2E Tester",
        GIT_COMMITTER_EMAIL="e2e@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
    )
    env.update(extra or {})
    return env


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def session_id(self) -> str:
        for line in self.stderr.splitlines():
            if line.startswith("session id:"):
                return line.split(":", 1)[1].strip()
        raise AssertionError(
            f"no session id in the output of codex {self.args}:\n{self.describe()}"
        )

    def hook_lines(self) -> list[str]:
        """Codex's lines about hook runs (``hook: <Event>`` / ``hook: <Event> Completed``)."""
        return [line for line in self.stderr.splitlines() if line.startswith("hook: ")]

    def hook_problems(self) -> list[str]:
        return [
            line
            for line in self.stderr.splitlines()
            if line.startswith("hook: ")
            and not line.endswith(("Completed",))
            and len(line.split()) > 2
        ]

    def describe(self) -> str:
        return (
            f"$ codex {' '.join(self.args)}\nexit={self.returncode} in {self.seconds:.1f}s\n"
            f"stderr: {self.stderr[-3000:]}\nstdout (tail): {self.stdout[-1500:]}"
        )


def run_codex(
    install: CodexInstall,
    base_url: str,
    prompt: str,
    *,
    cwd: Path,
    env: dict[str, str],
    resume: str | None = None,
    config: tuple[str, ...] = (),
    flags: tuple[str, ...] = (),
    timeout: float = 180,
    bypass: bool = True,
) -> Run:
    """``codex exec [FLAGS] [resume ID] PROMPT`` against the mock at ``base_url`` (``flags``:
    more options of exec, e.g. ``--trust``); never raises on exit. ``bypass``: approvals
    and sandbox off (the set-up steps); without it, ``flags`` choose them (``-s …``)."""
    args = [
        "exec",
        *flags,
        *(["--dangerously-bypass-approvals-and-sandbox"] if bypass else []),
        "--color",
        "never",
        "--skip-git-repo-check",
        "-C",
        str(cwd),
        "-c",
        "model_provider=mock",
        "-c",
        f'model_providers.mock={{name="mock", base_url="{base_url}", wire_api="responses", '
        'env_key="MOCK_KEY"}',
        "-c",
        f"model={MODEL}",
    ]
    for item in config:
        args += ["-c", item]
    if resume:
        args += ["resume", resume]
    args.append(prompt)
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [str(install.executable), *args],
            cwd=cwd,
            env=env,
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
