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
from pathlib import Path
from typing import Any

from tests.e2e import npm_client

# Re-exported: callers may catch gemini_cli.Unavailable (the same class as claude_cli's).
from tests.e2e.npm_cache import Unavailable as Unavailable

PACKAGE = "@google/gemini-cli"
DEFAULT_VERSION = "0.61.0"
VERSION_ENV = "CTXMODE_E2E_GEMINI_VERSION"

# What the hermetic HOME's settings hold besides the hooks (gemini-hooks.md, "Recipe").
BASE_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}

GeminiInstall = npm_client.Install


def requested_version() -> str:
    return npm_client.requested_version(VERSION_ENV, DEFAULT_VERSION)


def _version_of(exe: Path) -> str | None:
    return npm_client.last_word(npm_client.version_output(exe, "gemini", hermetic_env))


def ensure_gemini(version: str | None = None) -> GeminiInstall:
    """The cached install of ``version`` (pinned by default), installing it first if needed."""
    return npm_client.ensure(
        PACKAGE,
        version or requested_version(),
        folder="gemini-cli",
        command="gemini",
        version_of=_version_of,
    )


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
    return npm_client.hermetic_env(home, _DROP_PREFIXES, extra)


def prepare_home(home: Path, settings: dict[str, Any] | None = None) -> Path:
    """Write ``home/.gemini/settings.json`` (BASE_SETTINGS merged with ``settings``),
    keeping what is there; ``ctxmode install --host gemini`` adds its hooks to the same file."""
    return npm_client.prepare_home(home, ".gemini", BASE_SETTINGS, settings)


class Run(npm_client.Run):
    PROGRAM = "gemini"

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
    run_env = dict(env, GOOGLE_GEMINI_BASE_URL=base_url, GEMINI_API_KEY="offline-dummy-key")
    return npm_client.run(Run, install, args, cwd=cwd, env=run_env, timeout=timeout)
