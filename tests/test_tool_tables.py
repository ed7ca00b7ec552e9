"""Every tool a supported client offers is a decision: recorded as a kind, or not, with why.

The lists are recorded from the real CLIs by ``scripts/record_tools.py`` into
``tests/fixtures/<client>-<version>/tools.<mode>.json`` (print mode and the terminal UI,
deferred tools included). A new client release whose list names a tool the host's table
does not know fails here until someone decides what ctxmode records of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from ctxmode import extract, hosts
from ctxmode.hosts import claude_code, codex

FIXTURES = Path(__file__).parent / "fixtures"
HOSTS: dict[str, ModuleType] = {"claude-code": claude_code, "codex": codex}
# The versions the project supports: the pinned (CI) and the newest (scripts/e2e-newest.sh).
SUPPORTED = {"claude-code": ("2.1.197", "2.1.332"), "codex": ("0.169.0", "0.171.0")}
MODES = {
    "claude-code": ("print", "print.todo_tools", "interactive"),
    "codex": ("exec", "interactive"),
}


def _recorded() -> list[tuple[str, Path]]:
    return sorted(
        (client, path) for client in HOSTS for path in FIXTURES.glob(f"{client}-*/tools.*.json")
    )


RECORDED = _recorded()


def test_every_supported_version_has_its_tool_lists_recorded() -> None:
    found = {(client, path.parent.name, path.name) for client, path in RECORDED}
    missing = [
        f"{client}-{version}/tools.{mode}.json"
        for client, versions in SUPPORTED.items()
        for version in versions
        for mode in MODES[client]
        if (client, f"{client}-{version}", f"tools.{mode}.json") not in found
    ]
    assert not missing, f"record them with scripts/record_tools.py: {missing}"


@pytest.mark.parametrize(
    ("client", "path"), RECORDED, ids=[f"{p.parent.name}/{p.name}" for _c, p in RECORDED]
)
def test_every_recorded_tool_is_classified(client: str, path: Path) -> None:
    host = HOSTS[client]
    record = json.loads(path.read_text())
    names = list(record["tools"]) + list(record["deferred"])
    assert names, path
    unknown = [
        name
        for name in names
        if name not in host.TOOL_KINDS
        and name not in host.NOT_RECORDED
        and not name.startswith(host.MCP_PREFIX)
    ]
    assert not unknown, (
        f"{record['client']} ({record['mode']}) offers tools {host.__name__} does not classify: "
        f"{unknown}. Map each to a kind in TOOL_KINDS or say in NOT_RECORDED why nothing is kept."
    )


@pytest.mark.parametrize("host", list(HOSTS.values()), ids=list(HOSTS))
def test_the_tables_are_consistent(host: ModuleType) -> None:
    both = set(host.TOOL_KINDS) & set(host.NOT_RECORDED)
    assert not both, f"both recorded and not: {both}"
    for name, reason in host.NOT_RECORDED.items():
        assert reason.strip(), f"{name}: no reason given"
    for name, kind in host.TOOL_KINDS.items():
        assert kind in hosts.KINDS, (name, kind)
        assert kind in extract.KINDS or kind in ("shell", "mcp"), (name, kind)
        assert host.tool_kind(name) == kind


def test_the_tables_follow_each_tool_the_newest_claude_code_adds() -> None:
    """The tools 2.1.332 offers in print mode (deferred ones included) that 2.1.197's
    hooks never needed: each has a kind now, or a reason."""
    record = json.loads((FIXTURES / "claude-code-2.1.332" / "tools.print.json").read_text())
    offered = set(record["tools"]) | set(record["deferred"])
    for name in ("EnterWorktree", "ExitWorktree", "Workflow", "Monitor", "CronCreate",
                 "CronDelete", "ScheduleWakeup", "TaskStop", "SendMessage"):  # fmt: skip
        assert name in offered, name
        assert claude_code.tool_kind(name), name
    assert "TaskCreate" not in offered  # no task tools in print mode without the variable
