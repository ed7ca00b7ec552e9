"""``ctxmode install --host opencode``: ctxmode's plugin in ~/.config/opencode/plugin/ (or
DIR/.opencode/plugin/), uninstall, doctor, the proof run.

The plugin is the one the real OpenCode 1.18.33 ran (tests/e2e/test_opencode_e2e.py). Here:
the file is ctxmode's alone (a foreign file of its name refused), a dry run writes nothing,
a reinstall changes nothing and an upgrade rewrites it, uninstall leaves everything around
it byte for byte (the folders install made go once empty, never one the user had).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ctxmode.config_files import InstallError
from ctxmode.hosts.opencode import install as opencode_install
from ctxmode.hosts.opencode import proof as opencode_proof
from tests.helpers import cli
from tests.hooktools import REPO


@pytest.fixture
def config_dir() -> Path:
    return Path(os.environ["HOME"]) / ".config" / "opencode"


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``root``."""
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        found[str(path.relative_to(root))] = path.read_bytes() if path.is_file() else None
    return found


def test_install_writes_the_plugin_naming_this_interpreter(config_dir: Path) -> None:
    result = cli("install", "--host", "opencode")
    assert "installed for OpenCode: a plugin in ~/.config/opencode/plugin/ctxmode.js" in (
        result.output
    )
    text = (config_dir / "plugin" / "ctxmode.js").read_text()
    assert opencode_install.is_ours(text)
    python, hooks = opencode_install.installed_command(text) or ("", "")
    assert os.path.isabs(python) and os.path.exists(python)
    assert os.path.exists(os.path.join(hooks, "session_start.py"))
    assert "@PYTHON@" not in text and "@HOOKS@" not in text
    assert "import " not in text.replace('import { spawn } from "node:child_process";', "")


def test_a_path_with_quotes_is_a_valid_js_string(tmp_path: Path) -> None:
    odd = tmp_path / 'we"ird \\ dir'
    text = opencode_install.render(str(odd / "python"), str(odd / "pkg"))
    assert opencode_install.installed_command(text) == (
        str(odd / "python"),
        str(odd / "pkg" / "hooks"),
    )


def test_reinstall_changes_nothing_and_an_upgrade_rewrites(
    config_dir: Path, tmp_path: Path
) -> None:
    first = opencode_install.install()
    again = opencode_install.install()
    assert (first.action, again.action) == ("installed", "unchanged") and not again.changed
    other = opencode_install.install(python=str(tmp_path / "python3"))
    assert other.action == "updated" and str(tmp_path / "python3") in other.diff
    assert (
        json.dumps(str(tmp_path / "python3")) in (config_dir / "plugin" / "ctxmode.js").read_text()
    )


def test_dry_run_shows_the_file_and_writes_nothing(config_dir: Path) -> None:
    result = cli("install", "--host", "opencode", "--dry-run")
    assert "+// ctxmode for OpenCode:" in result.output
    assert not config_dir.exists()
    assert not (Path(os.environ["CTXMODE_HOME"]) / "installed.json").exists()


def test_uninstall_leaves_the_folder_as_it_was(config_dir: Path) -> None:
    """A config folder the user had (their config and another plugin) is byte for byte as
    before; the folder install made for the plugin goes, one they had stays."""
    config_dir.mkdir(parents=True)
    (config_dir / "opencode.json").write_text('{"model": "x/y"}\n')
    before = _tree(config_dir)
    cli("install", "--host", "opencode")
    assert (config_dir / "plugin" / "ctxmode.js").exists()
    result = cli("uninstall", "--host", "opencode")
    assert "removed: ~/.config/opencode/plugin/ctxmode.js deleted" in result.output
    assert _tree(config_dir) == before
    # A plugin folder of the user's stays, with their plugin in it.
    (config_dir / "plugin").mkdir()
    (config_dir / "plugin" / "mine.js").write_text("export const Mine = async () => ({});\n")
    before = _tree(config_dir)
    cli("install", "--host", "opencode")
    cli("uninstall", "--host", "opencode")
    assert _tree(config_dir) == before
    assert "nothing changed" in cli("uninstall", "--host", "opencode").output


def test_a_foreign_file_of_its_name_is_refused_and_left_alone(config_dir: Path) -> None:
    plugin = config_dir / "plugin" / "ctxmode.js"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("// someone else's\n")
    with pytest.raises(InstallError, match="not ctxmode's plugin"):
        opencode_install.install()
    assert opencode_install.uninstall().action == "not installed"
    assert plugin.read_text() == "// someone else's\n"


def test_the_project_scope_writes_dot_opencode_and_removes_it_again(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    result = cli("install", "--host", "opencode", "--project", str(project))
    assert (project / ".opencode" / "plugin" / "ctxmode.js").exists()
    assert "each user runs" in result.output
    cli("uninstall", "--host", "opencode", "--project", str(project))
    assert _tree(project) == {}


def test_verify_runs_the_sample_session_through_the_installed_plugin_s_commands() -> None:
    result = cli("install", "--host", "opencode", "--verify")
    assert "verified: 7 hook calls of a sample OpenCode session" in result.output
    assert "claimed once" in result.output


def test_the_proof_fails_on_a_plugin_that_runs_nothing(config_dir: Path, tmp_path: Path) -> None:
    opencode_install.install(python=str(tmp_path / "no-such-python"))
    outcome = opencode_proof.verify(str(config_dir / "plugin" / "ctxmode.js"))
    assert not outcome.ok and outcome.problems


def test_doctor_reports_the_plugin_and_a_broken_one(config_dir: Path, tmp_path: Path) -> None:
    cli("install", "--host", "opencode")
    out = cli("doctor").output
    assert "OpenCode hooks" in out and "OpenCode loads" in out
    opencode_install.install(python=str(tmp_path / "gone" / "python3"))
    out = cli("doctor").output
    assert "which does not exist" in out and "ctxmode install --host opencode" in out


def test_install_sh_dry_run_shows_the_plugin(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXMODE_PYTHON")}
    proc = subprocess.run(
        ["sh", str(REPO / "install.sh"), "--host", "opencode", "--dry-run"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "+// ctxmode for OpenCode:" in proc.stdout
    assert not (Path(os.environ["HOME"]) / ".config" / "opencode").exists()
