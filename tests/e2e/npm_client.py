"""What the wrappers of the npm-installed clients share (``gemini_cli.py``, ``qwen_cli.py``,
``copilot_cli.py``): the pinned version and its cached install (``npm_cache.py``), the
hermetic environment, the HOME's settings file, one run of the client that never raises
on exit or time-out, and what a run says when it fails.

Each wrapper keeps what is its client's own: its package, version pin and variables, the
prefixes it drops from the environment, how it reads ``--version``, its flags and its
offline provider.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from tests.e2e import npm_cache

NPM_TIMEOUT = 900


@dataclass(frozen=True)
class Install:
    """A cached install: the client's executable and its version."""

    executable: Path
    version: str


def requested_version(variable: str, default: str) -> str:
    """The version ``$variable`` asks for (a version, ``latest``), else the pinned one."""
    return os.environ.get(variable, "").strip() or default


def version_output(
    exe: Path, name: str, env: Callable[[Path], dict[str, str]]
) -> subprocess.CompletedProcess[str] | None:
    """``exe --version`` in a throwaway HOME (``env``: the hermetic environment for it);
    None when it cannot run or hangs."""
    with tempfile.TemporaryDirectory(prefix=f"ctxmode-{name}-version-") as home:
        try:
            return subprocess.run(
                [str(exe), "--version"],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
                env=env(Path(home)),
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None


def last_word(out: subprocess.CompletedProcess[str] | None) -> str | None:
    """The version a ``--version`` that prints it last said (None: it failed)."""
    words = out.stdout.split() if out is not None else []
    return words[-1] if out is not None and out.returncode == 0 and words else None


def ensure(
    package: str,
    version: str,
    *,
    folder: str,
    command: str,
    version_of: Callable[[Path], str | None],
) -> Install:
    """The cached install of ``package`` at ``version`` (a version, ``latest``), made first
    if needed in ``<cache>/<folder>-<version>``; ``command``: its executable in
    ``node_modules/.bin``, which must report that version (``version_of``)."""
    version = npm_cache.resolve_version(package, version)

    def find(prefix: Path) -> Path | None:
        exe = prefix / "node_modules" / ".bin" / command
        return exe if version_of(exe) == version else None

    exe = npm_cache.ensure_installed(
        package,
        version,
        folder=f"{folder}-{version}",
        find=find,
        broken=f"`{command} --version` does not answer",
        timeout=NPM_TIMEOUT,
    )
    return Install(exe, version)


def hermetic_env(
    home: Path,
    drop: tuple[str, ...],
    extra: dict[str, str] | None = None,
    **more: str,
) -> dict[str, str]:
    """The parent environment minus the variables starting with ``drop`` (other clients',
    ctxmode's, git's), HOME=home with its XDG folders, a fixed git identity, then
    ``more`` and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        **more,
    )
    env.update(
        NO_PROXY="127.0.0.1,localhost",
        GIT_AUTHOR_NAME="E2E Tester",
        GIT_AUTHOR_EMAIL="e2e@example.invalid",
        GIT_COMMITTER_NAME="E2E Tester",
        GIT_COMMITTER_EMAIL="e2e@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
    )
    env.pop("GITHUB_SHA", None)  # it turns the Gemini CLI's environment redaction on
    env.update(extra or {})
    return env


def prepare_home(
    home: Path, folder: str, base: dict[str, Any], settings: dict[str, Any] | None = None
) -> Path:
    """Write ``home/FOLDER/settings.json``: what is there, then the keys of ``base`` merged
    with ``settings`` it lacks; ``ctxmode install --host NAME`` adds its hooks to the same
    file."""
    where = home / folder
    where.mkdir(parents=True, exist_ok=True)
    path = where / "settings.json"
    document = json.loads(path.read_text()) if path.exists() else {}
    for key, value in {**base, **(settings or {})}.items():
        document.setdefault(key, value)
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


@dataclass
class Run:
    """One run of a client: its arguments, exit code (-9: stopped at the time-out), output."""

    PROGRAM: ClassVar[str] = "client"  # the command, as ``describe`` shows it

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def describe(self) -> str:
        return (
            f"$ {self.PROGRAM} {' '.join(self.args)[:300]}\n"
            f"exit={self.returncode} in {self.seconds:.1f}s\n"
            f"stderr: {self.stderr[-3000:]}\nstdout (tail): {self.stdout[-1500:]}"
        )


R = TypeVar("R", bound=Run)


def run(
    kind: type[R],
    install: Install,
    args: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
) -> R:
    """The client with ``args``, stdin closed; never raises on exit or time-out."""
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
    return kind(args, code, out, err, time.monotonic() - started)
