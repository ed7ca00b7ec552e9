"""``ctxmode.hosts.json_settings``: the one install/uninstall flow of the hosts whose hooks
live in a JSON settings file (Gemini CLI, Copilot CLI, Qwen Code).

The decisions are pure and tested as tables here; the file flow is tested once per host
(its ``Shape``): the file's mode and a symlink to it kept, the user's entries left alone,
idempotent, the bytes before put back. Each host's own install tests
(tests/test_install_{gemini,copilot,qwen}.py) keep what only that host does.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from types import ModuleType

import pytest

from ctxmode import settings
from ctxmode.config_files import InstallError
from ctxmode.hosts import json_settings
from ctxmode.hosts.copilot import install as copilot_install
from ctxmode.hosts.gemini import install as gemini_install
from ctxmode.hosts.json_settings import Shape
from ctxmode.hosts.qwen import install as qwen_install
from ctxmode.settings import HookSpec
from tests.helpers import cli

PY = "/opt/py/bin/python3"
PKG = "/opt/pkg/ctxmode"
SPECS = [
    HookSpec("SessionStart", f"'{PY}' -I -S '{PKG}/hooks/session_start.py' --host x", 30, None),
    HookSpec("PreCompact", f"'{PY}' -I -S '{PKG}/hooks/pre_compact.py' --host x", 30, None),
]
COPILOT = Shape(own_keys=frozenset({"hooks", "version"}), legacy_beside=False)
THEIRS = '{\n    "model": "m",\n    "hooks": {"AfterTool": [{"hooks": [{"type": "command", "command": "mine"}]}]}\n}\n'


def merge(text: str) -> str:
    return settings.merge(text, SPECS)


# --------------------------------------------------------------------------- decisions


@pytest.mark.parametrize(
    ("text", "shape", "nothing"),
    [
        (None, Shape(), True),  # no file at all
        ("", Shape(), True),
        ("  \n", Shape(), True),
        ('{"hooks": {}}', Shape(), True),
        ('{"hooks": {"AfterTool": []}}', Shape(), False),
        ('{"model": "m"}', Shape(), False),
        ('{"hooks": {}, "version": 1}', Shape(), False),  # Gemini's, Qwen's: a key of theirs
        ('{"hooks": {}, "version": 1}', COPILOT, True),  # Copilot's repository file: ours
        ("[]", Shape(), False),
        ("not json", Shape(), False),
    ],
)
def test_holds_nothing(text: str | None, shape: Shape, nothing: bool) -> None:
    assert json_settings.holds_nothing(text, shape.own_keys) is nothing


def test_ours_alone_is_ctxmodes_entries_and_nothing_else() -> None:
    assert json_settings.ours_alone(merge(""), Shape())
    assert not json_settings.ours_alone(merge(THEIRS), Shape())
    assert not json_settings.ours_alone(THEIRS, Shape())  # none of ours
    assert not json_settings.ours_alone("not json", Shape())
    seeded = merge('{\n  "version": 1\n}\n')
    assert json_settings.ours_alone(seeded, COPILOT) and not json_settings.ours_alone(
        seeded, Shape()
    )


def test_planned_install_of_a_new_file() -> None:
    change = json_settings.planned_install("/x/settings.json", None, merge)
    assert (change.action, change.changed, change.ours_before) == ("installed", True, False)
    assert change.new == merge("")
    assert change.diff.startswith("--- /dev/null\n+++ /x/settings.json\n")


def test_planned_install_starts_a_new_file_from_the_seed_only() -> None:
    seed = '{\n  "version": 1\n}\n'
    new = json_settings.planned_install("/x/h.json", None, merge, seed).new
    assert new is not None and json.loads(new)["version"] == 1
    # A file that is there, even empty, is the user's: no seed in it.
    assert json_settings.planned_install("/x/h.json", "", merge, seed).new == merge("")


def test_planned_install_is_idempotent_and_says_updated_for_older_entries() -> None:
    first = json_settings.planned_install("/x/s.json", THEIRS, merge)
    assert first.action == "installed" and first.new is not None
    again = json_settings.planned_install("/x/s.json", first.new, merge)
    assert (again.action, again.changed, again.diff, again.new) == (
        "unchanged",
        False,
        "",
        first.new,
    )
    older = first.new.replace("--host x", "--host y")
    update = json_settings.planned_install("/x/s.json", older, merge)
    assert (update.action, update.ours_before, update.new) == ("updated", True, first.new)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1]", "/x/s.json: the top level is not a JSON object; left untouched"),
        ('{"hooks": [}', "/x/s.json: line 1, column 12: invalid JSON"),
        ('{"hooks": []}', '/x/s.json: "hooks" is not a JSON object'),
    ],
)
def test_planned_install_refuses_a_file_it_cannot_edit(text: str, message: str) -> None:
    with pytest.raises(InstallError) as caught:
        json_settings.planned_install("/x/s.json", text, merge)
    assert str(caught.value).startswith(message)


def test_planned_removal_puts_the_backup_back_when_that_is_all_ctxmode_changed() -> None:
    installed = merge(THEIRS)
    change = json_settings.planned_removal(
        "/x/s.json", installed, THEIRS, Shape(), ours_made_it=False
    )
    assert (change.action, change.new) == ("removed", THEIRS)


def test_planned_removal_takes_out_only_ctxmodes_entries_after_a_change() -> None:
    changed = merge(THEIRS).replace('"model": "m"', '"model": "n"')
    change = json_settings.planned_removal("/x/s.json", changed, THEIRS, Shape(), ours_made_it=True)
    assert change.new is not None and change.action == "removed"
    assert not settings.registrations(change.new)
    assert json.loads(change.new)["model"] == "n" and "mine" in change.new


@pytest.mark.parametrize(("made_it", "action"), [(True, "deleted"), (False, "removed")])
def test_planned_removal_deletes_only_a_file_ctxmode_made(made_it: bool, action: str) -> None:
    change = json_settings.planned_removal(
        "/x/s.json", merge(""), None, Shape(), ours_made_it=made_it
    )
    assert change.action == action
    assert (change.new is None) is made_it
    assert ("+++ /dev/null\n" in change.diff) is made_it


def test_planned_removal_deletes_copilots_own_repository_file_with_its_version() -> None:
    seeded = merge('{\n  "version": 1\n}\n')
    assert (
        json_settings.planned_removal("/h.json", seeded, None, COPILOT, ours_made_it=True).new
        is None
    )
    kept = json_settings.planned_removal("/h.json", seeded, None, Shape(), ours_made_it=True)
    assert kept.new is not None and json.loads(kept.new) == {"version": 1}


def test_planned_removal_passes_the_hosts_unmerge() -> None:
    calls: list[str] = []

    def unmerge(text: str) -> str:
        calls.append(text)
        return settings.unmerge(text)

    old = merge(THEIRS)
    json_settings.planned_removal("/s.json", old, None, Shape(unmerge=unmerge), ours_made_it=False)
    assert calls == [old]


# --------------------------------------------------------------------------- paths, commands


def test_scoped_path(tmp_path: Path) -> None:
    files = {"user": ("user", "settings.json"), "project": ("project", ".h/settings.json")}
    user = str(tmp_path / "u")
    assert json_settings.scoped_path("user", None, user, files, "H") == f"{user}/settings.json"
    assert json_settings.scoped_path("project", str(tmp_path), user, files, "H") == str(
        tmp_path / ".h" / "settings.json"
    )
    for scope, project, message in [
        ("local", None, "unknown scope 'local' for H (expected user or project)"),
        ("project", None, "the project scope needs a project directory"),
        ("project", str(tmp_path / "no"), f"project directory not found: {tmp_path}/no"),
    ]:
        with pytest.raises(InstallError, match=message.replace("(", r"\(").replace(")", r"\)")):
            json_settings.scoped_path(scope, project, user, files, "H")


def test_user_folder_moves_with_its_variables(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home")}
    assert json_settings.user_folder(env, ".h") == str(tmp_path / "home" / ".h")
    moved = dict(env, H_HOME=str(tmp_path / "elsewhere"))
    assert json_settings.user_folder(moved, ".h", folder_var="H_HOME") == str(
        tmp_path / "elsewhere"
    )
    assert json_settings.user_folder(moved, ".h", home_var="H_HOME") == str(
        tmp_path / "elsewhere" / ".h"
    )


def test_shim_command_quotes_every_path() -> None:
    command = json_settings.shim_command("session_start", "/p y/it's", "/pkg", "--host x")
    assert command == "'/p y/it'\\''s' -I -S '/pkg/hooks/session_start.py' --host x"
    assert json_settings.shim_command("before_model", "/py", "/pkg").endswith("before_model.py'")


# --------------------------------------------------------------------------- the file, per host

HOSTS = [gemini_install, qwen_install, copilot_install]


@pytest.fixture(params=HOSTS, ids=lambda module: module.__name__.split(".")[-2])
def host(request: pytest.FixtureRequest) -> ModuleType:
    module: ModuleType = request.param
    return module


def _path(host: ModuleType) -> Path:
    return Path(host.settings_path("user"))


def test_install_and_uninstall_keep_the_files_mode_and_the_users_bytes(host: ModuleType) -> None:
    path = _path(host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(THEIRS)
    path.chmod(0o640)
    result = host.install("user", python=PY, package_dir=PKG)
    assert result.action == "installed" and result.hooks == len(
        settings.registrations(path.read_text())
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert "mine" in path.read_text()
    assert host.install("user", python=PY, package_dir=PKG).action == "unchanged"
    assert host.uninstall("user").action == "removed"
    assert path.read_text() == THEIRS
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert host.uninstall("user").action == "not installed"


def test_install_writes_through_a_symlink_never_over_it(host: ModuleType, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text(THEIRS)
    path = _path(host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(real)
    host.install("user", python=PY, package_dir=PKG)
    assert path.is_symlink() and settings.registrations(real.read_text())
    host.uninstall("user")
    assert path.is_symlink() and real.read_text() == THEIRS


def test_an_empty_file_of_the_users_stays_0_bytes(host: ModuleType) -> None:
    path = _path(host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    host.install("user", python=PY, package_dir=PKG)
    assert host.uninstall("user").action == "removed"
    assert path.exists() and path.read_text() == ""


def test_a_file_ctxmode_made_goes_with_the_folder_it_made(host: ModuleType) -> None:
    path = _path(host)
    folder_was_there = path.parent.exists()  # the test's COPILOT_HOME is
    host.install("user", python=PY, package_dir=PKG)
    assert path.exists()
    assert host.uninstall("user").action == "deleted"
    assert not path.exists() and path.parent.exists() is folder_was_there


def test_a_dry_run_writes_nothing(host: ModuleType) -> None:
    path = _path(host)
    result = host.install("user", dry_run=True, python=PY, package_dir=PKG)
    assert result.action == "installed" and result.diff
    assert not path.exists()
    assert not (Path(os.environ["CTXMODE_HOME"]) / "installed.json").exists()


@pytest.mark.parametrize("text", ['{"hooks": [}', "\x0c"])
def test_uninstall_of_a_file_that_is_no_json_is_a_clear_error(host: ModuleType, text: str) -> None:
    path = _path(host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    option = host.__name__.split(".")[-2]
    result = cli("uninstall", "--host", option)  # raised, not caught, before the fix
    assert result.exit_code == 1
    assert f"{path}: line 1, column" in result.output and "invalid JSON" in result.output
    assert path.read_text() == text


def test_uninstall_of_a_json_file_that_is_no_object_finds_nothing(host: ModuleType) -> None:
    path = _path(host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[1]")
    assert host.uninstall("user").action == "not installed"
    assert path.read_text() == "[1]"
