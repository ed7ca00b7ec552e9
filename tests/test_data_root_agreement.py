"""One data root for the hooks, the CLI, doctor, purge, the config file and the log.

Each install variant runs the real ``./install.sh`` into a temp HOME; then, for every
run-time environment, the hooks run exactly as Claude Code runs them — the registered
command string through ``sh -c``, or the plugin's ``python3 -I -S
${CLAUDE_PLUGIN_ROOT}/hooks/…`` — with no ``CTXMODE_*`` variable unless the variant sets
one, and the installed ``ctxmode`` CLI runs in the same environment. Nothing here
patches interpreter state: what the installed commands do is what is checked.

The rule under test (README "Where the data lives"): ``CTXMODE_HOME`` at run time wins;
else the root recorded at install; else the platform default.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctxmode import settings

REPO = Path(__file__).resolve().parents[1]


def _venv_works() -> bool:
    probe = subprocess.run(
        [sys.executable, "-c", "import venv, ensurepip"], capture_output=True, check=False
    )
    return probe.returncode == 0 and shutil.which("sh") is not None


pytestmark = pytest.mark.skipif(not _venv_works(), reason="python3 -m venv is not possible here")

SHIMS = {
    "PostToolUse": "post_tool_use.py",
    "SessionStart": "session_start.py",
}


def _clean_env() -> dict[str, str]:
    """The machine's environment less anything that would choose a root or a client."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CLAUDE_", "CLAUDECODE", "CTXMODE_", "VIRTUAL_ENV", "XDG_"))
    }


@dataclass
class Install:
    name: str
    base: Path
    home: Path
    root: Path  # where install.sh put the data (and its venv)
    commands: dict[str, str]  # event -> the command registered in settings.json

    @property
    def cli(self) -> str:
        return str(self.root / "venv" / "bin" / "ctxmode")


# install-time environment -> (extra variables, where the root must end up)
INSTALL_VARIANTS = {
    "CTXMODE_HOME": lambda base, home: ({"CTXMODE_HOME": str(base / "chosen")}, base / "chosen"),
    "XDG_DATA_HOME": lambda base, home: (
        {"XDG_DATA_HOME": str(base / "xdg")},
        base / "xdg" / "ctxmode",
    ),
    "nothing": lambda base, home: ({}, home / ".local" / "share" / "ctxmode"),
}


@pytest.fixture(scope="module", params=sorted(INSTALL_VARIANTS))
def install(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Install:
    name: str = request.param
    base = tmp_path_factory.mktemp(f"root-{name.lower()}")
    home = base / "home"
    home.mkdir()
    extra, root = INSTALL_VARIANTS[name](base, home)
    env = dict(_clean_env(), HOME=str(home), CTXMODE_PYTHON=sys.executable, **extra)
    proc = subprocess.run(
        [str(REPO / "install.sh")],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(home),
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (root / "venv" / "bin" / "ctxmode").is_file(), (root, proc.stdout)
    text = (home / ".claude" / "settings.json").read_text()
    commands = {r.event: r.command for r in settings.registrations(text)}
    return Install(name, base, home, root, commands)


# run-time environment -> (extra variables, expected root given the install)
RUNTIME_VARIANTS = {
    "absent": lambda inst: ({}, inst.root),
    "same CTXMODE_HOME": lambda inst: ({"CTXMODE_HOME": str(inst.root)}, inst.root),
    "other CTXMODE_HOME": lambda inst: (
        {"CTXMODE_HOME": str(inst.base / "runtime-root")},
        inst.base / "runtime-root",
    ),
    "other XDG_DATA_HOME": lambda inst: (
        {"XDG_DATA_HOME": str(inst.base / "xdg-later")},
        inst.root,
    ),
}

ROUTES = ("registered command", "plugin")


def _hook(inst: Install, route: str, event: str, payload: object, env: dict[str, str]) -> None:
    if route == "registered command":
        command = inst.commands[event]
    else:
        # hooks/hooks.json's command form, verbatim but for the event's shim.
        command = f'python3 -I -S "${{CLAUDE_PLUGIN_ROOT}}/hooks/{SHIMS[event]}"'
        env = dict(env, CLAUDE_PLUGIN_ROOT=str(REPO))
    data = payload if isinstance(payload, str) else json.dumps(payload)
    proc = subprocess.run(
        ["sh", "-c", command],
        input=data,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), command


def _cli(inst: Install, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [inst.cli, *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def _write_call(project: Path, session: str, name: str) -> dict[str, object]:
    path = f"{project}/{name}"
    return {
        "session_id": session,
        "transcript_path": "/dev/null",
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": path, "content": "print(1)\n"},
        "tool_response": {
            "type": "create",
            "filePath": path,
            "content": "print(1)\n",
            "structuredPatch": [],
            "originalFile": None,
            "userModified": False,
        },
        "tool_use_id": "toolu_" + uuid.uuid4().hex[:20],
    }


def _read_call(project: Path, session: str, path: str) -> dict[str, object]:
    return {
        "session_id": session,
        "transcript_path": "/dev/null",
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": path},
        "tool_response": {"type": "text", "file": {"filePath": path, "content": "x\n"}},
        "tool_use_id": "toolu_" + uuid.uuid4().hex[:20],
    }


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("runtime", sorted(RUNTIME_VARIANTS))
def test_hooks_and_cli_agree_on_the_data_root(
    install: Install, runtime: str, route: str, tmp_path: Path
) -> None:
    extra, expected = RUNTIME_VARIANTS[runtime](install)
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    # Claude Code's environment: the user's, with the project variable and no CTXMODE_*
    # unless this variant sets one. The user's shell (for the CLI) is the same minus
    # CLAUDE_PROJECT_DIR.
    shell_env = dict(_clean_env(), HOME=str(install.home), **extra)
    hook_env = dict(shell_env, CLAUDE_PROJECT_DIR=str(project))
    session = str(uuid.uuid4())
    token = "probe" + uuid.uuid4().hex[:12]
    hidden = f"{project}/notes-{token}.txt"

    # The config file the CLI writes is the one the hooks read.
    proc = _cli(install, shell_env, "config", "set", "exclude_paths", '["**/notes-*.txt"]')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _hook(install, route, "PostToolUse", _write_call(project, session, f"{token}.py"), hook_env)
    _hook(install, route, "PostToolUse", _read_call(project, session, hidden), hook_env)
    _hook(install, route, "PostToolUse", "this is not json", hook_env)  # goes to the log

    # Where the hooks wrote: one store, under the expected root only.
    stores = sorted(expected.glob("sessions/*.db"))
    assert len(stores) == 1, (expected, list(install.base.rglob("*.db")))
    assert len(list(install.base.rglob("sessions/*.db"))) == 1
    assert (expected / "logs" / "ctxmode.log").is_file()
    assert "input skipped" in (expected / "logs" / "ctxmode.log").read_text()

    # What the CLI reads: the same store (search, dump), the same root (doctor).
    found = _cli(install, shell_env, "search", token, "--project", str(project), "--json")
    assert found.returncode == 0, found.stderr
    assert any(token in json.dumps(hit) for hit in json.loads(found.stdout))
    dump = _cli(install, shell_env, "dump", "--json", "--project", str(project))
    assert dump.returncode == 0, dump.stderr
    events = [e for s in json.loads(dump.stdout)["sessions"] for e in s["events"]]
    assert any(token in json.dumps(e["data"]) for e in events)
    assert not any("notes-" in json.dumps(e["data"]) for e in events), (
        "exclude_paths was not applied"
    )
    doctor = _cli(install, shell_env, "doctor", "--json", "--project", str(project))
    report = json.loads(doctor.stdout)
    root_line = next(c for c in report["checks"] if c["name"] == "root from")
    assert root_line["summary"].startswith(f"{expected}:"), root_line
    log_line = next(c for c in report["checks"] if c["name"] == "hook log")
    assert "input skipped" in json.dumps(log_line)

    # purge removes what the hooks wrote, where they wrote it.
    purge = _cli(install, shell_env, "purge", "--project", str(project), "--yes")
    assert purge.returncode == 0, purge.stdout + purge.stderr
    assert not list(expected.glob("sessions/*.db"))


def test_the_pointer_is_private_and_names_the_root(install: Install) -> None:
    pointer = install.home / ".local" / "share" / "ctxmode" / "ctxmode-data-root"
    assert pointer.read_text().strip() == str(install.root)
    assert pointer.stat().st_mode & 0o777 == 0o600
    assert pointer.parent.stat().st_mode & 0o777 == 0o700
    assert (install.root / "venv" / "ctxmode-data-root").read_text().strip() == str(install.root)
    # The environment itself is the user's alone (install.sh runs under umask 077).
    assert install.root.stat().st_mode & 0o777 == 0o700
    loose = [
        str(p)
        for p in (install.root / "venv").rglob("*")
        if not p.is_symlink() and p.stat().st_mode & 0o077
    ]
    assert loose == []


def test_a_pointer_others_can_write_is_ignored(install: Install, tmp_path: Path) -> None:
    """A pointer anyone could edit would redirect the data: it is not followed."""
    home = tmp_path / "home"
    folder = home / ".local" / "share" / "ctxmode"
    folder.mkdir(parents=True, mode=0o700)
    pointer = folder / "ctxmode-data-root"
    pointer.write_text(f"{install.root}\n")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    env = dict(_clean_env(), HOME=str(home), CLAUDE_PROJECT_DIR=str(project))
    pointer.chmod(0o600)
    _hook(install, "plugin", "PostToolUse", _write_call(project, "s-1", "one.py"), env)
    assert not list(folder.glob("sessions/*.db"))  # followed while it is private
    pointer.chmod(0o666)
    _hook(install, "plugin", "PostToolUse", _write_call(project, "s-1", "two.py"), env)
    assert len(list(folder.glob("sessions/*.db"))) == 1  # the default took it instead
    purge = _cli(install, dict(env, CTXMODE_HOME=str(install.root)), "purge", "--all", "--yes")
    assert purge.returncode == 0, purge.stderr


def test_registered_hooks_find_the_root_without_the_pointer(
    install: Install, tmp_path: Path
) -> None:
    """``-I -S`` never points sys.prefix at the venv: the hook finds it from its own
    interpreter's path, with no pointer and no variable to help."""
    home = tmp_path / "home"  # a HOME with no pointer in it
    home.mkdir()
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    env = dict(_clean_env(), HOME=str(home), CLAUDE_PROJECT_DIR=str(project))
    _hook(install, "registered command", "PostToolUse", _write_call(project, "s-2", "a.py"), env)
    stores = list(install.root.glob("sessions/*.db"))
    assert len(stores) == 1
    assert not (home / ".local").exists()
    purge = _cli(install, env, "purge", "--project", str(project), "--yes")
    assert purge.returncode == 0, purge.stderr
