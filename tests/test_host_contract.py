"""The host seam: every registered host holds to ``ctxmode.hosts.contract``, and a new host
is one folder and its name in the registry — nothing else changes for it.

The second half proves the latter with a host written here into a temporary folder on the
``ctxmode.hosts`` package path: the hook harness parses its payloads and records its
client, ``--client``/``--host`` know it, doctor runs its checks, import reads its
history, bench measures its cases and ``install --host`` runs its install.
"""

from __future__ import annotations

import inspect
import io
import json
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from ctxmode import hosts
from ctxmode.hosts import contract


def _functions(protocol: type) -> dict[str, inspect.Signature]:
    own = {
        name
        for klass in protocol.__mro__
        if klass.__module__ == contract.__name__
        for name in vars(klass)
    }
    return {
        name: inspect.signature(getattr(protocol, name))
        for name in sorted(own)
        if not name.startswith("_") and inspect.isfunction(getattr(protocol, name))
    }


def _problems(module: ModuleType, protocol: type) -> list[str]:
    """What ``module`` lacks of ``protocol``: names, and parameters its functions lack."""
    problems = []
    if not isinstance(module, protocol):
        missing = [n for n in protocol.__annotations__ if not hasattr(module, n)]
        missing += [n for n in _functions(protocol) if not hasattr(module, n)]
        problems.append(f"{module.__name__} lacks {missing}")
    for name, wanted in _functions(protocol).items():
        found = getattr(module, name, None)
        if not callable(found):
            continue
        have = inspect.signature(found).parameters
        for param in list(wanted.parameters.values())[1:]:  # self: the module
            if param.name not in have and not any(
                p.kind is inspect.Parameter.VAR_KEYWORD for p in have.values()
            ):
                problems.append(f"{module.__name__}.{name} takes no {param.name!r}")
    return problems


def _contract_problems(name: str) -> list[str]:
    problems = _problems(hosts.get(name), contract.Host)
    for role, (protocol, required) in contract.PARTS.items():
        if not required and name not in hosts.having(role):
            continue
        problems += _problems(hosts.part(name, role), protocol)
    return problems


@pytest.mark.parametrize("name", hosts.NAMES)
def test_every_registered_host_holds_to_the_contract(name: str) -> None:
    assert _contract_problems(name) == []
    host = hosts.get(name)
    assert name == host.NAME
    assert set(host.TOOL_KINDS.values()) <= set(hosts.KINDS)
    assert set(hosts.part(name, "install").SCOPES) <= {"user", "project", "local"}


def test_the_registry_names_each_host_once() -> None:
    assert hosts.DEFAULT in hosts.NAMES and len(set(hosts.NAMES)) == len(hosts.NAMES)
    options = hosts.options()
    assert sorted(options.values()) == sorted(hosts.NAMES)
    assert hosts.by_option(hosts.get().OPTION) == hosts.DEFAULT
    with pytest.raises(ValueError, match="unknown host 'nosuch'"):
        hosts.by_option("nosuch")
    with pytest.raises(ValueError, match="unknown part"):
        hosts.part(hosts.DEFAULT, "nosuch")


def test_the_check_finds_a_missing_name_and_a_missing_parameter() -> None:
    doctor = ModuleType("broken.doctor")
    assert _problems(doctor, contract.Doctor) == ["broken.doctor lacks ['GROUP', 'checks']"]
    doctor.GROUP = "broken"  # type: ignore[attr-defined]
    doctor.checks = lambda: []  # type: ignore[attr-defined]
    assert _problems(doctor, contract.Doctor) == ["broken.doctor.checks takes no 'ctx'"]


# -- a new host: one folder and its name ---------------------------------------------------

NEW = "fakehost"
FILES = {
    "__init__.py": '''
        """A client made up for the test: Claude Code's payloads, one tool, two hooks."""

        from __future__ import annotations

        from ctxmode import hosts, payload

        NAME = "fakehost"
        OPTION = "fake"
        LABEL = "Fake CLI"
        TOOL_KINDS = {"run": "shell"}
        NOT_RECORDED = {"look": "changes nothing"}
        HOOKS = (("PostToolUse", 10, None), ("SessionStart", 30, None))
        SETTINGS_FORMAT = "json"
        USER_DIR_ENV = "FAKE_HOME"
        USER_DIR_DEFAULT = "~/.fake"
        PROJECT_DIR_NAME = ".fake"
        SETTINGS_FILES = {"user": ("user", "hooks.json")}


        def tool_kind(tool_name):
            return TOOL_KINDS.get(tool_name, "")


        def parse(data, event=None):
            inp = payload.parse(data, event)
            inp.tool_kind = tool_kind(inp.tool_name)
            return inp


        def salvage(head, event=None):
            inp = payload.salvage(head, event)
            inp.tool_kind = tool_kind(inp.tool_name)
            return inp


        def output(event, text):
            if not text or event != "SessionStart":
                return b""
            return hosts.additional_context(event, text)
    ''',
    "install.py": """
        from ctxmode.settings import HookSpec

        SCOPES = ("user",)
        HELP = "the Fake CLI (~/.fake/hooks.json)"


        def hook_specs(python=None, package_dir=None):
            return [HookSpec("PostToolUse", "fake-hook", 10)]


        def install(scope="user", project_dir=None, dry_run=False, python=None, package_dir=None):
            return "installed"


        def uninstall(scope="user", project_dir=None, dry_run=False):
            return "removed"


        def cli_install(report, scope, project_dir, *, dry_run=False, verify=False, statusline=False):
            report.say(f"ctxmode {install(scope, project_dir)} for the Fake CLI ({scope})")


        def cli_uninstall(report, scope, project_dir, *, dry_run=False):
            report.say(f"ctxmode {uninstall(scope, project_dir)} for the Fake CLI")


        def dry_run_main(argv):
            return 0
    """,
    "proof.py": """
        from ctxmode import proof


        def verify(path):
            return proof.VerifyResult()
    """,
    "doctor.py": """
        from ctxmode.doctor.core import OK, Check

        GROUP = "fake"


        def checks(ctx):
            return [Check("fake", "hooks", OK, "the Fake CLI runs ctxmode")]
    """,
    "bench.py": """
        from ctxmode.bench.cases import Case, HostCommands

        CASES = (Case("Fake PostToolUse run", "fakehost:PostToolUse", "fake_run"),)
        PAYLOADS = {"fake_run": {"hook_event_name": "PostToolUse", "tool_name": "run"}}


        def commands(settings_path, python):
            return HostCommands({"fakehost:PostToolUse": "fake-hook"}, python)


        def prepare(project, scratch, session, wanted):
            return {}


        def check(case, sample):
            return []
    """,
    "history.py": '''
        """Its history is written as Claude Code's transcripts are, in a folder of its own."""

        import os

        from ctxmode.hosts.claude_code.history import (
            BOUNDARY_MARK,
            claims,
            compact_summary,
            count_boundaries,
            head_cwd,
            read,
            subagent_of,
            transcript_files,
        )

        CLIENT = "fakehost"


        def folder(env):
            return os.path.join(env["FAKE_HOME"], "history")


        def files(where):
            return transcript_files(where)


        def project_files(where, project_dir):
            return files(where)
    ''',
}


@pytest.fixture
def new_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The made-up host's folder, on the hosts package's path, and its name registered."""
    folder = tmp_path / "hosts" / NEW
    folder.mkdir(parents=True)
    for name, text in FILES.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip())
    # The CLI's options list the hosts when it loads: loaded first, it keeps the real ones
    # (a later test that renders the help must not see the made-up host).
    from ctxmode.cli import commands

    commands.all_commands()

    monkeypatch.setattr(hosts, "__path__", [*hosts.__path__, str(folder.parent)])
    monkeypatch.setattr(hosts, "NAMES", (*hosts.NAMES, NEW))
    fake_home = tmp_path / "fake-home"
    monkeypatch.setenv("FAKE_HOME", str(fake_home))
    yield fake_home
    for module in [m for m in sys.modules if m.startswith(f"ctxmode.hosts.{NEW}")]:
        del sys.modules[module]


def test_a_new_host_holds_to_the_contract(new_host: Path) -> None:
    assert _contract_problems(NEW) == []
    assert hosts.having("history")[-1] == NEW


def test_the_hook_harness_runs_a_new_host(new_host: Path, project: Path) -> None:
    from ctxmode import hookrun, paths
    from ctxmode.store import Store

    call = {
        "session_id": "fake-1",
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "run",
        "tool_input": {"command": "git commit -m 'Reconcile the ledger'"},
        "tool_response": {"stdout": "[main 1a2b3c4] Reconcile the ledger", "stderr": ""},
        "tool_use_id": "run_1",
    }
    stdin = io.BytesIO(json.dumps(call).encode())
    assert hookrun.run_hook("PostToolUse", stdin, dict(__import__("os").environ), host=NEW) == b""
    store = Store.open(paths.store_path(str(project), __import__("os").environ), readonly=True)
    try:
        (meta,) = [row for row in store.sessions() if row["session_id"] == "fake-1"]
        events = store.session_events("fake-1")
    finally:
        store.close()
    assert meta["client"] == NEW
    assert any("Reconcile the ledger" in event.data for event in events)


def test_the_commands_know_a_new_host(
    new_host: Path, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    from ctxmode import bench, doctor, importer
    from ctxmode.cli import install_cmd

    assert hosts.options()["fake"] == NEW and hosts.labels().endswith("or Fake CLI")
    # install --host fake (the click option's choices were made when the CLI loaded)
    install_cmd._run(
        "install", "fake", (False, None, None), dry_run=False, verify=False, statusline=False
    )
    assert capsys.readouterr().out == "ctxmode installed for the Fake CLI (user)\n"
    with pytest.raises(Exception, match="Fake CLI has no project scope: use --user"):
        install_cmd._run("uninstall", "fake", (False, str(project), None), dry_run=False)
    # doctor
    ctx = doctor.Context(env=dict(os.environ), project_dir=str(project), now=time.time())
    assert ("fake", "hooks") in {(check.group, check.name) for check in doctor.run_all(ctx)}
    # bench
    assert bench.CASES[-1].event == "fakehost:PostToolUse"
    assert "fake_run" in bench.load_payloads()["payloads"]
    # import: its history, recorded as its client's
    transcript = new_host / "history" / "proj" / "fake-2.jsonl"
    transcript.parent.mkdir(parents=True)
    record = {
        "type": "user",
        "sessionId": "fake-2",
        "cwd": str(project),
        "uuid": "u1",
        "timestamp": "2026-12-01T10:00:00.000Z",
        "message": {"role": "user", "content": "Reconcile the ledger totals"},
    }
    transcript.write_text(json.dumps(record) + "\n")
    found = importer.find(dict(os.environ))
    assert [(item.path, item.host) for item in found] == [(str(transcript), NEW)]
    totals = importer.run(found, dict(os.environ))
    assert totals.sessions == {"fake-2"}
    from ctxmode import paths
    from ctxmode.store import Store

    store = Store.open(paths.store_path(str(project), os.environ), readonly=True)
    try:
        clients = {row["session_id"]: row["client"] for row in store.sessions()}
    finally:
        store.close()
    assert clients["fake-2"] == NEW


def test_a_lookup_loads_no_host(project: Path) -> None:
    """`ctxmode search` (the snapshot's lookups, run by the model) starts without importing a
    host: --client's names are read from the registry only when it is given."""
    import os
    import subprocess

    code = (
        "import sys; from ctxmode.cli import main\n"
        f"try: main(['search', 'ledger', '--project', {str(project)!r}])\n"
        "except SystemExit: pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('ctxmode.hosts')))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ)
    )
    assert run.stdout.strip().splitlines()[-1] == "['ctxmode.hosts']", run.stdout + run.stderr
