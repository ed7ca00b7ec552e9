"""./install.sh from this checkout, in a temp HOME and CTXMODE_HOME: a real venv, a real pip.

One install (about 10-30 s) shared by the module; each test reads what it left.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ctxmode
from ctxmode import settings
from ctxmode.hosts import claude_code
from ctxmode.hosts.claude_code import install as installer
from ctxmode.hosts.claude_code.install import HOOK_TABLE
from tests.hooktools import FIXTURES

REPO = Path(__file__).resolve().parents[1]
HOOK_EVENTS = {event for event, _, _ in HOOK_TABLE}


def _venv_works() -> bool:
    probe = subprocess.run(
        [sys.executable, "-c", "import venv, ensurepip"], capture_output=True, check=False
    )
    return probe.returncode == 0 and shutil.which("sh") is not None


pytestmark = pytest.mark.skipif(not _venv_works(), reason="python3 -m venv is not possible here")


MARK = "# upgraded in place by test_install_sh\n"
# A folder name that word splitting or globbing would break, and one the glob matches.
ODD_DIR = "team proj [1] ?*"
DECOY_DIR = "team proj 1 x-decoy"
COPY_IGNORE = shutil.ignore_patterns(
    ".git", "__pycache__", "*.egg-info", "build", ".venv", ".*_cache", ".hypothesis"
)


class Run:
    """The environment of one install and the output of each install.sh call."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.data = base / "data"
        self.home.mkdir()
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("CLAUDE_", "CLAUDECODE", "CTXMODE_", "VIRTUAL_ENV"))
        }
        self.env.update(
            HOME=str(self.home),
            CTXMODE_HOME=str(self.data),
            CTXMODE_PYTHON=sys.executable,
            TMPDIR=str(base / "tmp"),
            SHELL="/bin/bash",
            # No Claude Code version known: the gated events (PostCompact) stay out.
            CTXMODE_CLAUDE_VERSION="none",
        )
        (base / "tmp").mkdir()
        self.calls: dict[str, subprocess.CompletedProcess[str]] = {}
        self.texts: dict[str, str] = {}
        self.init_mtimes: dict[str, int] = {}

    def sh(self, name: str, *args: str, checkout: Path = REPO) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(checkout / "install.sh"), *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=str(self.home),
            timeout=300,
            check=False,
        )
        self.calls[name] = proc
        if self.settings_file.exists():
            self.texts[name] = self.settings_file.read_text()
        if self.installed_init().exists():
            self.init_mtimes[name] = self.installed_init().stat().st_mtime_ns
        return proc

    @property
    def settings_file(self) -> Path:
        return self.home / ".claude" / "settings.json"

    def installed_init(self) -> Path:
        found = list((self.data / "venv").glob("lib/python3*/site-packages/ctxmode/__init__.py"))
        return found[0] if found else self.data / "missing"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Install from the checkout, then upgrade from a changed copy, then re-run that."""
    base = tmp_path_factory.mktemp("install-sh")
    run = Run(base)
    first = run.sh("first")
    assert first.returncode == 0, first.stdout + first.stderr
    newer = base / "checkout-newer"
    shutil.copytree(REPO, newer, ignore=COPY_IGNORE)
    with open(newer / "ctxmode" / "__init__.py", "a") as handle:
        handle.write(MARK)
    run.sh("upgrade", checkout=newer)
    run.sh("again", checkout=newer)
    return run


PROOF = (
    r"verified: 11 hook calls of a sample session through them stored \d+ events, and its "
    r"\d+-byte snapshot was injected after compaction, claimed once"
)


def test_ends_with_one_line_of_proof(run: Run) -> None:
    out = run.calls["first"].stdout.splitlines()
    proof = [line for line in out if line.startswith(f"ctxmode {ctxmode.__version__} installed")]
    assert len(proof) == 1, out
    # The last line of stdout says what the install proved.
    assert out[-1] == proof[0]
    assert re.fullmatch(
        rf"ctxmode {re.escape(ctxmode.__version__)} installed: 7 hooks in ~/\.claude/settings\.json; "
        rf"the snapshot's lookups run without asking: Bash\({re.escape(str(run.data))}/venv/bin/"
        r"ctxmode search:\*\); " + PROOF,
        proof[0],
    ), proof[0]
    assert len(out) <= 5, out  # quiet on success
    assert run.calls["first"].stderr == ""


def test_settings_point_at_the_new_environment(run: Run) -> None:
    found = settings.registrations(run.texts["first"])
    assert [(r.event, r.timeout, r.matcher) for r in found] == [
        row for row in HOOK_TABLE if row[0] not in claude_code.MIN_VERSIONS
    ]
    venv = run.data / "venv"
    for registration in found:
        match = re.fullmatch(r"'([^']+)' -I -S '([^']+)'", registration.command)
        assert match, registration.command
        python, script = match.groups()
        assert python.startswith(f"{venv}/bin/python")
        assert Path(python).is_file()
        assert "/site-packages/ctxmode/hooks/" in script
        assert script.endswith(f"/{registration.shim}.py") and Path(script).is_file()
    first = json.loads(run.texts["first"])
    assert first.keys() == {"hooks", "permissions"}
    assert first["permissions"] == {"allow": [f"Bash({venv}/bin/ctxmode search:*)"]}


def test_data_root_is_private(run: Run) -> None:
    assert (run.data.stat().st_mode & 0o777) == 0o700
    assert (run.data / "venv" / "bin" / "ctxmode").is_file()


PATH_LINE = 'export PATH="$HOME/.local/bin:$PATH"'


def test_the_command_is_linked_and_the_path_line_puts_it_on_path(run: Run) -> None:
    """~/.local/bin is not on PATH: the command is linked there all the same, and the
    line printed for the user's shell, run as printed, makes `ctxmode` a command."""
    link = run.home / ".local" / "bin" / "ctxmode"
    assert link.is_symlink() and os.readlink(link) == f"{run.data}/venv/bin/ctxmode"
    out = run.calls["first"].stdout.splitlines()
    assert out[1:4] == [
        f"ctxmode: command: {link} (linked)",
        "ctxmode: ~/.local/bin is not on your PATH: to run ctxmode by its name, run this "
        "line, and add it to ~/.bashrc for new shells:",
        f"    {PATH_LINE}",
    ]
    assert f"{run.home}/.local/bin" not in run.env["PATH"].split(":")
    done = subprocess.run(
        ["sh", "-c", f"{out[3].strip()}; command -v ctxmode; ctxmode --version"],
        capture_output=True,
        text=True,
        env=run.env,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.splitlines()[0] == str(link)
    assert ctxmode.__version__ in done.stdout.splitlines()[1]


@pytest.mark.parametrize(
    ("shell", "on_path", "advice"),
    [
        (
            "/usr/bin/zsh",
            False,
            [
                "ctxmode: ~/.local/bin is not on your PATH: to run ctxmode by its name, run "
                "this line, and add it to ~/.zshrc for new shells:",
                f"    {PATH_LINE}",
            ],
        ),
        (
            "/usr/bin/fish",
            False,
            [
                "ctxmode: ~/.local/bin is not on your PATH: to run ctxmode by its name, run "
                "this once (fish keeps it):",
                '    fish_add_path "$HOME/.local/bin"',
            ],
        ),
        ("/bin/bash", True, []),
    ],
    ids=["zsh", "fish", "on-path"],
)
def test_each_shell_gets_its_own_line(
    run: Run, tmp_path: Path, shell: str, on_path: bool, advice: list[str]
) -> None:
    # Another user's HOME, the same environment (nothing to rebuild): a few seconds.
    home = tmp_path / "home"
    home.mkdir()
    env = dict(run.env, HOME=str(home), SHELL=shell)
    if on_path:
        env["PATH"] = f"{home}/.local/bin:{env['PATH']}"
    proc = subprocess.run(
        [str(run.base / "checkout-newer" / "install.sh")],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(home),
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout.splitlines()
    link = home / ".local" / "bin" / "ctxmode"
    linked = f"ctxmode (linked from {link})" if on_path else f"{link} (linked)"
    assert out[1:-1] == [f"ctxmode: command: {linked}", *advice]
    assert os.readlink(link) == f"{run.data}/venv/bin/ctxmode"


def test_rerun_from_a_newer_checkout_upgrades_in_place(run: Run) -> None:
    upgrade = run.calls["upgrade"]
    assert upgrade.returncode == 0, upgrade.stdout + upgrade.stderr
    assert run.installed_init().read_text().endswith(MARK)
    assert (
        f"ctxmode {ctxmode.__version__} already installed: 7 hooks in ~/.claude/settings.json; "
        in upgrade.stdout
    )
    assert run.texts["upgrade"] == run.texts["first"]
    assert sorted(os.listdir(run.settings_file.parent)) == ["settings.json"]


def test_rerun_of_the_same_checkout_changes_nothing(run: Run) -> None:
    again = run.calls["again"]
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already installed" in again.stdout
    assert run.texts["again"] == run.texts["first"]
    # Nothing was rebuilt: the installed files are the upgrade's, untouched.
    assert run.init_mtimes["again"] == run.init_mtimes["upgrade"]
    assert run.init_mtimes["upgrade"] != run.init_mtimes["first"]


def test_installed_commands_fill_the_store(run: Run, tmp_path: Path) -> None:
    """The settings' own commands, through sh -c, on the real client's startup stream."""
    stream = FIXTURES / "stream.print-mode.jsonl"
    commands = {r.event: r.command for r in settings.registrations(run.settings_file.read_text())}
    project = tmp_path / "proj"
    project.mkdir()
    env = dict(run.env, CLAUDE_PROJECT_DIR=str(project))
    calls = 0
    for line in stream.read_text().splitlines():
        record: dict[str, Any] = json.loads(line)
        if record["scenario"] != "startup" or record["event"] not in HOOK_EVENTS:
            continue
        proc = subprocess.run(
            ["sh", "-c", commands[record["event"]]],
            input=json.dumps(record["payload"]),
            capture_output=True,
            text=True,
            env=env,
            timeout=30,
            check=False,
        )
        assert (proc.returncode, proc.stderr) == (0, ""), record["event"]
        calls += 1
    assert calls >= 8
    dump = subprocess.run(
        [str(run.data / "venv" / "bin" / "ctxmode"), "dump", "--json", "--project", str(project)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert dump.returncode == 0, dump.stderr
    sessions = json.loads(dump.stdout)["sessions"]
    data = " ".join(
        json.dumps(event["data"]) for session in sessions for event in session["events"]
    )
    assert "hello.py" in data
    assert "nonexistent-mock-dir" in data  # the failed command's error


def tree(*roots: Path) -> dict[str, tuple[int, int] | None]:
    """Every path under the roots, with each file's size and mtime: what a dry run must
    not touch (a folder's own mtime only repeats which names it holds)."""
    found: dict[str, tuple[int, int] | None] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            found.update((os.path.join(folder, name), None) for name in dirs)
            for name in files:
                info = os.lstat(os.path.join(folder, name))
                found[os.path.join(folder, name)] = (info.st_size, info.st_mtime_ns)
    return found


def test_dry_run_after_install_writes_nothing(run: Run) -> None:
    before = tree(run.home, run.data, Path(run.env["TMPDIR"]))
    proc = run.sh("dry-run", "--dry-run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert tree(run.home, run.data, Path(run.env["TMPDIR"])) == before
    assert proc.stdout.splitlines()[0] == "ctxmode: dry run: nothing is written"
    assert "nothing to change: ctxmode is already installed in ~/.claude/settings.json\n" in (
        proc.stdout
    )


def test_odd_project_dir_through_install_and_uninstall(run: Run, tmp_path: Path) -> None:
    """A DIR with spaces and glob characters reaches ctxmode as one argument, never globbed;
    the shared file runs the launcher, and uninstall takes away what install made."""
    odd, decoy = tmp_path / ODD_DIR, tmp_path / DECOY_DIR
    odd.mkdir()
    decoy.mkdir()  # what the unquoted glob of ODD_DIR would have picked instead
    proc = subprocess.run(
        [str(REPO / "install.sh"), "--project", ODD_DIR],
        capture_output=True,
        text=True,
        env=run.env,
        cwd=str(tmp_path),  # a relative DIR, as typed
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout.splitlines()
    assert re.fullmatch(
        rf"ctxmode {re.escape(ctxmode.__version__)} installed: 7 hooks in "
        rf"{re.escape(str(odd))}/\.claude/settings\.json; " + PROOF,
        out[-1],
    ), out
    assert os.listdir(decoy) == []
    text = (odd / ".claude" / "settings.json").read_text()
    assert str(run.home) not in text and str(run.data) not in text
    assert {r.command for r in settings.registrations(text)} == {
        spec.command for spec in installer.team_specs(claude_code.events_for(None))
    }
    launcher = run.home / ".local" / "bin" / "ctxmode-hook"
    assert installer.launcher_target(launcher.read_text())[0] == f"{run.data}/venv/bin/python"

    proc = run.sh("uninstall-odd", "--uninstall", f"--project={odd}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert os.listdir(odd) == []  # .claude was install's: it is gone
    assert not launcher.exists()


def test_uninstall_removes_the_hooks_and_keeps_the_data(run: Run) -> None:
    proc = run.sh("uninstall", "--uninstall")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "ctxmode hooks removed: ~/.claude/settings.json deleted (ctxmode had created it); "
        "also removed what ctxmode install had made: ~/.claude"
    ) in proc.stdout
    assert not run.settings_file.exists()
    assert not run.settings_file.parent.exists()
    assert (run.data / "venv").is_dir()


@pytest.mark.parametrize(
    "scope", [(), ("--project", ODD_DIR), ("--local", ODD_DIR)], ids=["user", "project", "local"]
)
def test_dry_run_without_an_environment_writes_nothing_anywhere(
    tmp_path: Path, scope: tuple[str, ...]
) -> None:
    """No venv, no data root, no settings, no ~/.local/bin, no temp file, no bytecode."""
    fresh = Run(tmp_path)
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO, checkout, ignore=COPY_IGNORE)
    (tmp_path / ODD_DIR).mkdir()
    fresh.env["PATH"] = f"{fresh.home}/.local/bin:{fresh.env['PATH']}"
    (fresh.home / ".local" / "bin").mkdir(parents=True)
    before = tree(tmp_path)
    proc = subprocess.run(
        [str(checkout / "install.sh"), "--dry-run", *scope],
        capture_output=True,
        text=True,
        env=fresh.env,
        cwd=str(tmp_path),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = tree(tmp_path)
    # The data-root lookup (run before anything else) may leave the checkout's bytecode.
    assert {p: v for p, v in after.items() if "__pycache__" not in p} == before
    assert not fresh.data.exists()
    out = proc.stdout
    target = (
        "~/.claude/settings.json"
        if not scope
        else f"{tmp_path}/{ODD_DIR}/.claude/"
        + ("settings.json" if scope[0] == "--project" else "settings.local.json")
    )
    assert out.startswith(
        "ctxmode: dry run: nothing is written\n"
        f"ctxmode: would create the environment {fresh.data}/venv (Python "
    )
    assert (
        f"ctxmode: would link {fresh.home}/.local/bin/ctxmode to {fresh.data}/venv/bin/ctxmode\n"
        in out
    )
    # The settings as they would be written, as a diff: the commands this checkout writes.
    expected_path = target.replace("~", str(fresh.home), 1)
    assert f"--- {expected_path}\n+++ {expected_path}\n@@ -0,0 +1,84 @@\n" in out
    python = f"{fresh.data}/venv/bin/python"
    site = f"{fresh.data}/venv/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    if scope and scope[0] == "--project":
        assert f"+py='{python}'\n+hooks='{site}/ctxmode/hooks'\n" in out  # the launcher
    else:
        assert f"'{python}' -I -S '{site}/ctxmode/hooks/post_tool_use.py'" in out


def test_bad_option_is_refused(run: Run) -> None:
    proc = run.sh("bad", "--bogus")
    assert proc.returncode == 2
    assert "unknown option: --bogus" in proc.stderr


def test_an_unknown_host_is_refused_with_the_registry_names(run: Run) -> None:
    from ctxmode import hosts

    proc = run.sh("bad host", "--host", "nosuch", "--dry-run")
    assert proc.returncode == 1
    assert f"unknown host 'nosuch' (known: {', '.join(hosts.options())})" in proc.stderr


def test_the_usage_names_every_host_of_the_registry() -> None:
    """install.sh's help lists `--host NAME` for each registered host but the default one
    (whose install needs no --host), and no other name."""
    from ctxmode import hosts

    usage = (REPO / "install.sh").read_text().split("\nset -eu", 1)[0]
    named = set(re.findall(r"--host (\w+)", usage))
    assert named == set(hosts.options()) - {hosts.get().OPTION}
