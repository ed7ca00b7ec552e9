"""What install, uninstall and ``config`` leave behind, for every host (issue 30, 3.6/3.7).

The rule: ctxmode deletes a file only if it created it (an empty file the user had stays,
0 bytes), keeps its backups in its own data root (never an untracked file in the user's
repository), and takes away what it made once it is empty again. The ledger that says so
lives in the data root (``ctxmode.config_files.Ledger``).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from ctxmode import settings
from ctxmode.config_files import BACKUP_SUFFIX
from ctxmode.hosts.claude_code import install as claude_install
from tests.helpers import cli

# The clients with background hooks: their captures are registered with "async": true.
CLAUDE = "2.1.197"
USER_SETTINGS = '{\n  "model": "opus"\n}\n'


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's HOME (conftest's), Claude Code's version known, a neutral cwd."""
    monkeypatch.setenv(claude_install.CLIENT_VERSION_ENV, CLAUDE)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    home = Path(os.environ["HOME"])
    monkeypatch.chdir(home)
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A user's repository, with nothing of ctxmode's in it."""
    path = tmp_path / "repo"
    (path / ".git").mkdir(parents=True)
    return path


def user_file(host: str, home: Path) -> Path:
    if host == "claude":
        return home / ".claude" / "settings.json"
    if host == "gemini":
        return Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini" / "settings.json"
    return Path(os.environ["CODEX_HOME"]) / "hooks.json"


def project_file(host: str, repo: Path) -> Path:
    folder = {"claude": ".claude", "gemini": ".gemini", "codex": ".codex"}[host]
    name = "hooks.json" if host == "codex" else "settings.json"
    return repo / folder / name


def host_args(host: str) -> list[str]:
    return [] if host == "claude" else ["--host", host]


def tree(folder: Path) -> list[str]:
    """Every path under ``folder``, relative (``.git`` left out)."""
    return sorted(
        str(path.relative_to(folder)) for path in folder.rglob("*") if ".git" not in path.parts
    )


HOSTS = ["claude", "gemini", "codex"]


def ledger() -> Any:
    """The data root's ledger (imported here: the tests must fail, not break, without it)."""
    from ctxmode.config_files import Ledger

    return Ledger.load()


# --------------------------------------------------------------------------- 3.6


@pytest.mark.parametrize("host", HOSTS)
def test_an_empty_file_the_user_had_is_restored_to_0_bytes(home: Path, host: str) -> None:
    path = user_file(host, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    cli("install", *host_args(host))
    assert settings.registrations(path.read_text())
    result = cli("uninstall", *host_args(host))
    assert "deleted" not in result.output
    assert path.read_bytes() == b""
    assert os.listdir(path.parent) == [path.name]


@pytest.mark.parametrize("host", HOSTS)
def test_an_empty_file_the_user_had_stays_when_the_rest_cannot_be_restored(
    home: Path, host: str
) -> None:
    """The backup no longer matches (the file was reformatted since): ctxmode's entries are
    cut out one by one, and the file, now holding nothing, is still the user's."""
    path = user_file(host, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    cli("install", *host_args(host))
    path.write_text(json.dumps(json.loads(path.read_text())))
    result = cli("uninstall", *host_args(host))
    assert "deleted" not in result.output
    assert json.loads(path.read_text() or "{}") in ({}, {"hooks": {}})


def test_an_empty_claude_settings_file_survives_an_upgrade_and_uninstall(home: Path) -> None:
    path = user_file("claude", home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    claude_install.install("user", python="/opt/old/bin/python3")
    claude_install.install("user")  # an upgrade: ctxmode's entries replaced
    assert claude_install.uninstall("user").action == "removed"
    assert path.read_bytes() == b""


@pytest.mark.parametrize("host", HOSTS)
def test_a_file_ctxmode_created_goes_again_with_its_folder(
    home: Path, repo: Path, host: str
) -> None:
    cli("install", *host_args(host), "--project", str(repo))
    assert project_file(host, repo).exists()
    cli("uninstall", *host_args(host), "--project", str(repo))
    assert tree(repo) == []


# --------------------------------------------------------------------------- 3.7


@pytest.mark.parametrize("host", HOSTS)
def test_a_project_install_leaves_nothing_in_the_repository_but_its_entries(
    home: Path, repo: Path, host: str
) -> None:
    path = project_file(host, repo)
    path.parent.mkdir()
    path.write_text(USER_SETTINGS)
    cli("install", *host_args(host), "--project", str(repo))
    assert tree(repo) == sorted([path.parent.name, f"{path.parent.name}/{path.name}"])
    # The bytes before are kept in the data root, private, and the ledger says where.
    ((original, backup),) = ledger().backups()
    assert original == str(path.resolve())
    assert Path(backup).read_text() == USER_SETTINGS
    assert Path(backup).is_relative_to(os.environ["CTXMODE_HOME"])
    assert stat.S_IMODE(Path(backup).stat().st_mode) == 0o600
    cli("uninstall", *host_args(host), "--project", str(repo))
    assert path.read_text() == USER_SETTINGS
    assert tree(repo) == sorted([path.parent.name, f"{path.parent.name}/{path.name}"])
    # The backup has served: nothing of it is left, in the data root either.
    assert ledger().backups() == []
    assert not (Path(os.environ["CTXMODE_HOME"]) / "backups").exists()


def test_user_scope_uninstall_leaves_no_backup_beside_the_file(home: Path) -> None:
    """Changed since the install: only ctxmode's entries go, and the bytes before the
    uninstall are kept in the data root, where the message says."""
    path = user_file("claude", home)
    path.parent.mkdir()
    path.write_text(USER_SETTINGS)
    cli("install")
    path.write_text(path.read_text().replace('"opus"', '"sonnet"'))
    result = cli("uninstall")
    assert os.listdir(path.parent) == ["settings.json"]
    assert json.loads(path.read_text()) == {"model": "sonnet"}
    ((_, backup),) = ledger().backups()
    assert f"previous version in {backup}" in result.output


def test_a_backup_an_older_version_kept_beside_the_file_is_moved_in(home: Path, repo: Path) -> None:
    """0.4 kept ``settings.json.ctxmode-backup`` in the repository: the next install takes
    it into the data root, and uninstall still restores it."""
    path = project_file("claude", repo)
    path.parent.mkdir()
    path.write_text(USER_SETTINGS)
    cli("install", "--project", str(repo))
    legacy = Path(str(path) + BACKUP_SUFFIX)
    legacy.write_text(USER_SETTINGS)  # as 0.4 left it, with no ledger
    (Path(os.environ["CTXMODE_HOME"]) / "installed.json").unlink()
    cli("install", "--project", str(repo), "--dry-run")
    assert legacy.exists()  # a dry run moves nothing
    assert "already installed" in cli("install", "--project", str(repo)).output
    assert not legacy.exists()
    assert ledger().backup_text(str(path.resolve())) == USER_SETTINGS
    cli("uninstall", "--project", str(repo))
    assert path.read_text() == USER_SETTINGS
    assert tree(repo) == [".claude", ".claude/settings.json"]


@pytest.mark.parametrize(
    ("legacy", "deleted"),
    [
        (None, True),  # 0.4 kept a backup of every file it found: none, so it made this one
        ("", False),  # the user's empty file
        ("{}\n", False),
    ],
)
def test_uninstall_of_an_older_versions_install(
    home: Path, legacy: str | None, deleted: bool
) -> None:
    path = user_file("claude", home)
    claude_install.install("user")
    (Path(os.environ["CTXMODE_HOME"]) / "installed.json").unlink()  # 0.4 had no ledger
    if legacy is not None:
        Path(str(path) + BACKUP_SUFFIX).write_text(legacy)
    # Reformatted since (not the backup plus ctxmode's entries): the entries are cut out.
    path.write_text(json.dumps(json.loads(path.read_text())))
    claude_install.uninstall("user")
    assert path.exists() is not deleted
    assert os.listdir(path.parent) == ([] if deleted else ["settings.json"])


def test_codex_keeps_a_hooks_file_of_the_user_when_another_scope_was_created(
    home: Path, repo: Path
) -> None:
    """The block in config.toml is one per user: its old "made=hooks.json" flag could not
    say which scope's file install had made. The ledger does."""
    path = user_file("codex", home)
    path.write_text("{}\n")
    cli("install", "--host", "codex", "--project", str(repo))  # makes repo/.codex/hooks.json
    cli("install", "--host", "codex")
    cli("uninstall", "--host", "codex")
    assert path.read_text() == "{}\n"
    cli("uninstall", "--host", "codex", "--project", str(repo))
    assert tree(repo) == []


def test_install_stops_before_any_change_where_the_data_root_cannot_keep_the_record(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("CTXMODE_HOME", str(blocked / "root"))
    path = user_file("claude", home)
    path.parent.mkdir()
    path.write_text(USER_SETTINGS)
    result = cli("install")
    assert result.exit_code == 1
    assert result.output.startswith(
        f"Error: cannot keep ctxmode's record of your files in {blocked}"
    )
    assert path.read_text() == USER_SETTINGS
    assert os.listdir(path.parent) == ["settings.json"]


# --------------------------------------------------------------------------- config


def test_config_unset_removes_the_project_file_it_created(home: Path, repo: Path) -> None:
    cli("config", "set", "snapshot_budget", "3000", "--project", str(repo))
    assert tree(repo) == [".claude", ".claude/ctxmode.json"]
    cli("config", "set", "retention_days", "7", "--project", str(repo))
    cli("config", "unset", "snapshot_budget", "--project", str(repo))
    assert json.loads((repo / ".claude" / "ctxmode.json").read_text()) == {"retention_days": 7}
    cli("config", "unset", "retention_days", "--project", str(repo))
    assert tree(repo) == []


def test_config_unset_keeps_a_file_the_user_had(home: Path, repo: Path) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "ctxmode.json").write_text("{}\n")
    cli("config", "set", "snapshot_budget", "3000", "--project", str(repo))
    cli("config", "unset", "snapshot_budget", "--project", str(repo))
    assert tree(repo) == [".claude", ".claude/ctxmode.json"]
    assert json.loads((repo / ".claude" / "ctxmode.json").read_text()) == {}


def test_doctor_says_where_the_backups_are(home: Path, repo: Path) -> None:
    import time

    from ctxmode import doctor

    path = user_file("claude", home)
    path.parent.mkdir()
    path.write_text(USER_SETTINGS)
    cli("install")

    def backups() -> list[doctor.Check]:
        ctx = doctor.Context(env=dict(os.environ), project_dir=str(repo), now=time.time())
        return [check for check in doctor.check_data_root(ctx) if check.name == "backups"]

    ((found,),) = [backups()]
    root = Path(os.environ["CTXMODE_HOME"])
    (backup,) = (root / "backups").iterdir()
    assert (found.status, found.summary) == (
        "ok",
        f"1 file of yours as it was before ctxmode last changed it, kept in {root / 'backups'}",
    )
    assert found.details == (f"~/.claude/settings.json: {backup}",)
    assert backup.read_text() == USER_SETTINGS
    cli("uninstall")
    assert backups() == []


def test_every_host_leaves_a_repository_as_it_found_it(home: Path, repo: Path) -> None:
    """For any host of the registry (one added later too): what a project install makes
    goes again; files of those names the user had, even empty, come back byte for byte;
    nothing of ctxmode's is left beside them."""
    from ctxmode import hosts

    for option in hosts.options():
        cli("install", "--host", option, "--project", str(repo))
        made = [p for p in tree(repo) if (repo / p).is_file()]
        assert made, option
        cli("uninstall", "--host", option, "--project", str(repo))
        assert tree(repo) == [], option
        for name in made:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_bytes(b"")
        had = tree(repo)
        cli("install", "--host", option, "--project", str(repo))
        assert tree(repo) == had, option
        cli("uninstall", "--host", option, "--project", str(repo))
        assert tree(repo) == had, option
        assert all((repo / name).read_bytes() == b"" for name in made), option
        for name in made:  # the user's files go, and the folders made for them
            (repo / name).unlink()
            folder = (repo / name).parent
            while folder != repo and not any(folder.iterdir()):
                folder.rmdir()
                folder = folder.parent
