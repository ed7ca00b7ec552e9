"""Install the real OpenCode CLI from npm into a cache folder and run it offline against a mock.

The sibling of ``gemini_cli.py``. The package (``opencode-ai``, whose binary comes from its
platform package ``opencode-linux-x64``) is pinned to the version the fixtures were recorded
with (``DEFAULT_VERSION``; ``CTXMODE_E2E_OPENCODE_VERSION`` picks another, or ``latest``).

Offline recipe (next-hosts.md, "OpenCode"): a provider ``mock`` in ``opencode.json`` with
``"npm": "@ai-sdk/openai-compatible"`` and ``options.baseURL`` on the local chat mock,
``OPENCODE_DISABLE_MODELS_FETCH=1``, a throwaway HOME. On start OpenCode npm-installs
``@opencode-ai/plugin`` into every config folder with plugins (``~/.config/opencode``); with
no registry that attempt holds the start-up for over a minute (seen on 1.18.33). So the
package and its dependencies are put once into an npm cache of the e2e cache's own
(:func:`ensure_plugin_cache`), and OpenCode's npm is pointed at it, offline
(``npm_config_cache``, ``npm_config_offline``): the install then needs no network.
(ctxmode's plugin itself imports nothing from it.)
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

PACKAGE = "opencode-ai"
DEFAULT_VERSION = "1.18.33"
VERSION_ENV = "CTXMODE_E2E_OPENCODE_VERSION"
NPM_TIMEOUT = 900


@dataclass(frozen=True)
class OpencodeInstall:
    executable: Path
    version: str


def requested_version() -> str:
    return os.environ.get(VERSION_ENV, "").strip() or DEFAULT_VERSION


def _version_of(exe: Path) -> str | None:
    with tempfile.TemporaryDirectory(prefix="ctxmode-opencode-version-") as home:
        env = hermetic_env(Path(home))
        try:
            out = subprocess.run(
                [str(exe), "--version"],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    words = out.stdout.split()
    return words[-1] if out.returncode == 0 and words else None


def _find_executable(prefix: Path, version: str) -> Path | None:
    exe = prefix / "node_modules" / ".bin" / "opencode"
    return exe if _version_of(exe) == version else None


PLUGIN_PACKAGE = "@opencode-ai/plugin"


def plugin_cache() -> Path:
    """The npm cache OpenCode's own start-up install reads, offline."""
    return npm_cache.cache_root() / "opencode-npm-cache"


def ensure_plugin_cache(version: str) -> Path:
    """``@opencode-ai/plugin@version`` and its dependencies in :func:`plugin_cache`, fetched
    once from the registry (an install into a throwaway folder fills the cache)."""
    cache = plugin_cache()
    done = cache / f".has-{version}"
    if done.exists():
        return cache
    npm_cache.ensure_installed(
        PLUGIN_PACKAGE,
        version,
        folder=f"opencode-plugin-{version}",
        find=lambda prefix: (
            prefix if (prefix / "node_modules" / "@opencode-ai" / "plugin").is_dir() else None
        ),
        broken="it has no node_modules/@opencode-ai/plugin",
        timeout=NPM_TIMEOUT,
    )
    with tempfile.TemporaryDirectory(prefix="ctxmode-opencode-plugin-") as prefix:
        out = subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                prefix,
                "--cache",
                str(cache),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                f"{PLUGIN_PACKAGE}@{version}",
            ],
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
            check=False,
        )
    if out.returncode != 0:
        raise Unavailable(f"npm could not cache {PLUGIN_PACKAGE}@{version}: {out.stderr[-400:]}")
    done.write_text("")
    return cache


def ensure_opencode(version: str | None = None) -> OpencodeInstall:
    """The cached install of ``version`` (pinned by default), installing it first if needed;
    the package OpenCode installs on start is cached too (:func:`ensure_plugin_cache`)."""
    version = npm_cache.resolve_version(PACKAGE, version or requested_version())
    ensure_plugin_cache(version)
    exe = npm_cache.ensure_installed(
        PACKAGE,
        version,
        folder=f"opencode-{version}",
        find=lambda prefix: _find_executable(prefix, version),
        broken="`opencode --version` does not answer",
        timeout=NPM_TIMEOUT,
    )
    return OpencodeInstall(exe, version)


_DROP_PREFIXES = (
    "OPENCODE",
    "OPENAI",
    "ANTHROPIC",
    "GEMINI",
    "GOOGLE",
    "CODEX",
    "CLAUDE",
    "CTXMODE_",
    "GIT_",
    "NODE_OPTIONS",
    "npm_config_",
    "NPM_CONFIG_",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
)


def hermetic_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The parent environment minus anything of the clients, ctxmode or git; HOME=home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        NO_PROXY="127.0.0.1,localhost",
        # Anything that would leave the machine fails at once (the mock is on 127.0.0.1).
        HTTP_PROXY="http://127.0.0.1:9",
        HTTPS_PROXY="http://127.0.0.1:9",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_AUTOUPDATE="1",
        # Its start-up install of @opencode-ai/plugin, from the cache alone.
        npm_config_cache=str(plugin_cache()),
        npm_config_offline="true",
        GIT_AUTHOR_NAME="E2E Tester",
        GIT_AUTHOR_EMAIL="e2e@example.invalid",
        GIT_COMMITTER_NAME="E2E Tester",
        GIT_COMMITTER_EMAIL="e2e@example.invalid",
        GIT_CONFIG_NOSYSTEM="1",
    )
    env.update(extra or {})
    return env


MODEL = "mock/mock-model"
# The model's window as the config declares it: the mock reports usage near it to make
# OpenCode compact on its own (``COMPACT_TOKENS``).
CONTEXT_LIMIT = 200_000
COMPACT_TOKENS = 199_000


def prepare_home(home: Path, base_url: str) -> Path:
    """Write ``home/.config/opencode/opencode.json``: the mock as the only provider (the
    ``@ai-sdk/openai-compatible`` package OpenCode bundles), its model the default, no
    sharing or updates. The user's config, so the project's git tree stays clean."""
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "$schema": "https://opencode.ai/config.json",
        "model": MODEL,
        "small_model": MODEL,
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            "mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Mock",
                "options": {"baseURL": base_url, "apiKey": "offline-dummy-key"},
                "models": {
                    "mock-model": {
                        "name": "Mock Model",
                        "limit": {"context": CONTEXT_LIMIT, "output": 8000},
                    }
                },
            }
        },
    }
    path = folder / "opencode.json"
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def events(self) -> list[dict[str, Any]]:
        """``--format json``'s events, one JSON object a line."""
        found = []
        for line in self.stdout.splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
        return found

    @property
    def session_id(self) -> str:
        for event in self.events:
            sid = event.get("sessionID")
            if isinstance(sid, str) and sid:
                return sid
        raise AssertionError(f"no session id in opencode's output:\n{self.describe()}")

    def describe(self) -> str:
        return (
            f"$ opencode {' '.join(self.args)}\nexit={self.returncode} in {self.seconds:.1f}s\n"
            f"stderr: {self.stderr[-3000:]}\nstdout (tail): {self.stdout[-1500:]}"
        )


def run_opencode(
    install: OpencodeInstall,
    prompt: str,
    *,
    cwd: Path,
    env: dict[str, str],
    session: str | None = None,
    timeout: float = 180,
) -> Run:
    """``opencode run --format json [--session ID] PROMPT`` in ``cwd``, with OpenCode's
    default permissions (no ``--auto``); never raises on exit."""
    args = ["run", "--format", "json"]
    if session:
        args += ["--session", session]
    args.append(prompt)
    run_env = dict(env)
    run_env["PWD"] = str(cwd)  # OpenCode takes its folder from $PWD
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
