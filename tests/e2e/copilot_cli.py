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
from pathlib import Path
from typing import Any

from tests.e2e import npm_client
from tests.e2e.npm_cache import Unavailable as Unavailable

PACKAGE = "@github/copilot"
DEFAULT_VERSION = "1.0.102"
VERSION_ENV = "CTXMODE_E2E_COPILOT_VERSION"
MODEL = "gpt-4.1"

CopilotInstall = npm_client.Install


def requested_version() -> str:
    return npm_client.requested_version(VERSION_ENV, DEFAULT_VERSION)


def _version_of(exe: Path) -> str | None:
    out = npm_client.version_output(exe, "copilot", hermetic_env)
    for word in (out.stdout if out is not None else "").replace(",", " ").split():
        word = word.strip().rstrip(".")
        if word[:1].isdigit() and word.count(".") == 2:
            return word
    return None


def ensure_copilot(version: str | None = None) -> CopilotInstall:
    """The cached install of ``version`` (pinned by default), installing it first if needed."""
    return npm_client.ensure(
        PACKAGE,
        version or requested_version(),
        folder="copilot-cli",
        command="copilot",
        version_of=_version_of,
    )


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
    return npm_client.hermetic_env(
        home, _DROP_PREFIXES, extra, XDG_STATE_HOME=str(home / ".local" / "state")
    )


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


class Run(npm_client.Run):
    PROGRAM = "copilot"


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
    run_env = dict(env, **offline_env(base_url, max_prompt_tokens=max_prompt_tokens))
    return npm_client.run(Run, install, args, cwd=cwd, env=run_env, timeout=timeout)


def read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
