"""``ctxmode config`` and the write side of ctxmode.config: parse, validate, round trip."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxmode import config
from ctxmode.cli import main
from tests.helpers import cli

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def global_file(data_root: Path) -> Path:
    # conftest sets CTXMODE_HOME, which is also the config dir.
    return data_root / "config.json"


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("inject_on_startup", "true", True),
        ("inject_on_startup", "YES", True),
        ("inject_on_startup", "on", True),
        ("inject_on_startup", "1", True),
        ("inject_on_clear", "false", False),
        ("inject_on_clear", "no", False),
        ("inject_on_clear", "Off", False),
        ("inject_on_clear", "0", False),
        ("snapshot_budget", "6000", 6000),
        ("snapshot_budget", " 8_000 ", 8000),
        ("snapshot_budget", "1024", 1024),
        ("snapshot_budget", "9000", 9000),
        ("retention_days", "7", 7),
        ("startup_max_age_hours", "0", 0),
        ("exclude_paths", "secrets/**, *.pem", ["secrets/**", "*.pem"]),
        ("exclude_paths", '["a, b", "c"]', ["a, b", "c"]),
        ("exclude_paths", "", []),
        ("exclude_paths", "[]", []),
        ("redact_patterns", r"ACME-[0-9]{6}", [r"ACME-[0-9]{6}"]),
        ("redact_patterns", r'["token=(?P<secret>\\w+)"]', [r"token=(?P<secret>\w+)"]),
    ],
)
def test_parse_value(name: str, text: str, expected: Any) -> None:
    assert config.parse_value(name, text) == expected


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "inject_on_startup",
            "maybe",
            "inject_on_startup takes true/false (or yes/no, on/off, 1/0), not 'maybe'",
        ),
        ("snapshot_budget", "4k", "snapshot_budget takes a whole number, not '4k'"),
        ("snapshot_budget", "500", "snapshot_budget must be 1024-9000, not 500"),
        ("snapshot_budget", "20000", "snapshot_budget must be 1024-9000, not 20000"),
        ("retention_days", "0", "retention_days must be at least 1, not 0"),
        ("max_events_per_session", "-5", "max_events_per_session must be at least 1, not -5"),
        ("exclude_paths", '["a", 3]', "exclude_paths: a JSON array must hold only strings"),
        ("exclude_paths", '["a"', "exclude_paths: not a JSON array of strings"),
        (
            "redact_patterns",
            "ACME-[0-9",
            "redact_patterns: 'ACME-[0-9' is not a valid regular expression",
        ),
        (
            "snapshot_budgt",
            "10",
            "unknown option 'snapshot_budgt' (did you mean snapshot_budget?); valid options: snapshot_budget, inject_on_startup, inject_on_clear, startup_max_age_hours, max_events_per_session, retention_days, exclude_paths, redact_patterns",
        ),
    ],
)
def test_parse_value_refuses(name: str, text: str, message: str) -> None:
    with pytest.raises(config.ConfigError) as caught:
        config.parse_value(name, text)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("value", "text"),
    [(True, "true"), (False, "false"), (4096, "4096"), ([], "[]"), (["a", "b c"], '["a","b c"]')],
)
def test_format_value_parses_back(value: Any, text: str) -> None:
    assert config.format_value(value) == text
    names = {bool: "inject_on_startup", int: "snapshot_budget", list: "exclude_paths"}
    assert config.parse_value(names[type(value)], text) == value


# --------------------------------------------------------------------------- files


def test_set_get_unset_round_trip(global_file: Path) -> None:
    assert not global_file.exists()
    result = cli("config", "set", "snapshot_budget", "6000")
    assert result.exit_code == 0
    assert result.output == f"snapshot_budget = 6000  ({global_file})\n"
    assert json.loads(global_file.read_text()) == {"snapshot_budget": 6000}
    assert cli("config", "get", "snapshot_budget").output == "6000\n"
    # The hooks' loader sees the same value.
    assert config.load(os.environ)["snapshot_budget"] == 6000

    cli("config", "set", "exclude_paths", "secrets/**,*.pem")
    assert cli("config", "get", "exclude_paths").output == '["secrets/**","*.pem"]\n'
    assert json.loads(global_file.read_text()) == {
        "snapshot_budget": 6000,
        "exclude_paths": ["secrets/**", "*.pem"],
    }

    result = cli("config", "unset", "snapshot_budget")
    assert result.output == f"snapshot_budget removed from {global_file} (now 4096 from default)\n"
    assert json.loads(global_file.read_text()) == {"exclude_paths": ["secrets/**", "*.pem"]}
    result = cli("config", "unset", "snapshot_budget")
    assert result.output == f"snapshot_budget is not set in {global_file} (now 4096 from default)\n"


def test_set_keeps_unknown_keys_and_makes_the_file_private(global_file: Path) -> None:
    global_file.write_text('{"future_option": {"x": 1}, "retention_days": 3}\n')
    global_file.chmod(0o640)
    cli("config", "set", "retention_days", "14")
    assert json.loads(global_file.read_text()) == {"future_option": {"x": 1}, "retention_days": 14}
    # The global file is the user's alone, whatever mode it had.
    assert stat.S_IMODE(global_file.stat().st_mode) == 0o600
    # No temp file left behind by the atomic write.
    assert sorted(p.name for p in global_file.parent.iterdir()) == ["config.json"]


def test_project_file_overrides_global(global_file: Path, project: Path) -> None:
    cli("config", "set", "snapshot_budget", "6000")
    result = cli("config", "set", "snapshot_budget", "2048", "--project", str(project))
    project_file = project / ".claude" / "ctxmode.json"
    assert result.output == f"snapshot_budget = 2048  ({project_file})\n"
    assert json.loads(project_file.read_text()) == {"snapshot_budget": 2048}
    assert cli("config", "get", "snapshot_budget").output == "6000\n"
    assert cli("config", "get", "snapshot_budget", "--project", str(project)).output == "2048\n"
    assert config.load(os.environ, str(project))["snapshot_budget"] == 2048
    # A subdirectory of the project resolves to the project (its git root), as in the hooks.
    sub = project / "src"
    sub.mkdir()
    assert cli("config", "get", "snapshot_budget", "--project", str(sub)).output == "2048\n"


def test_list_shows_value_default_and_source(global_file: Path, project: Path) -> None:
    cli("config", "set", "inject_on_startup", "yes")
    cli("config", "set", "exclude_paths", "secrets/**", "--project", str(project))
    result = cli("config", "list", "--project", str(project))
    assert result.exit_code == 0
    assert result.output == (
        f"global file:  {global_file}\n"
        f"project file: {project}/.claude/ctxmode.json\n"
        "NAME                    VALUE           DEFAULT  FROM\n"
        "snapshot_budget         4096            4096     default\n"
        "inject_on_startup       true            false    global\n"
        "inject_on_clear         false           false    default\n"
        "startup_max_age_hours   24              24       default\n"
        "max_events_per_session  1000            1000     default\n"
        "retention_days          30              30       default\n"
        'exclude_paths           ["secrets/**"]  []       project\n'
        "redact_patterns         []              []       default\n"
    )


def test_list_json_and_problems(global_file: Path) -> None:
    # Values the hooks ignore (wrong type) or that config set would refuse are reported.
    global_file.write_text(json.dumps({"snapshot_budget": "big", "retention_days": 0}))
    result = CliRunner().invoke(main, ["config", "list", "--json"], catch_exceptions=False)
    document = json.loads(result.output)
    rows = {row["name"]: row for row in document["options"]}
    assert document["global_file"] == str(global_file)
    assert document["project_file"] is None
    assert rows["snapshot_budget"]["value"] == 4096
    assert rows["snapshot_budget"]["source"] == "default"
    assert rows["snapshot_budget"]["problems"] == [
        f'global value "big" ignored: the hooks expect int ({global_file})'
    ]
    assert rows["retention_days"]["value"] == 0  # what load() really uses
    assert rows["retention_days"]["problems"] == [
        f"retention_days must be at least 1, not 0 ({global_file})"
    ]
    text = cli("config", "list")
    assert "warning: retention_days: retention_days must be at least 1, not 0" in text.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["set", "snapshot_budget", "lots"],
            "Error: snapshot_budget takes a whole number, not 'lots'\n",
        ),
        (
            ["set", "nope", "1"],
            "Error: unknown option 'nope'; valid options: snapshot_budget, inject_on_startup, inject_on_clear, startup_max_age_hours, max_events_per_session, retention_days, exclude_paths, redact_patterns\n",
        ),
        (
            ["get", "inject_on_start"],
            "Error: unknown option 'inject_on_start' (did you mean inject_on_startup?); valid options: snapshot_budget, inject_on_startup, inject_on_clear, startup_max_age_hours, max_events_per_session, retention_days, exclude_paths, redact_patterns\n",
        ),
        (
            ["unset", "x"],
            "Error: unknown option 'x'; valid options: snapshot_budget, inject_on_startup, inject_on_clear, startup_max_age_hours, max_events_per_session, retention_days, exclude_paths, redact_patterns\n",
        ),
    ],
)
def test_refused_with_a_helpful_message(global_file: Path, args: list[str], message: str) -> None:
    # A name or value the option cannot take is a usage error: exit 2, click's usage
    # lines, then the one Error line (a file that cannot be read is exit 1, below).
    result = CliRunner().invoke(main, ["config", *args])
    assert result.exit_code == 2
    assert result.output.startswith(f"Usage: main config {args[0]} ")
    assert result.output.endswith("\n\n" + message)
    assert not global_file.exists()


def test_malformed_file_is_reported_not_replaced(global_file: Path) -> None:
    global_file.write_text('{"snapshot_budget": 4096,,}')
    result = CliRunner().invoke(main, ["config", "set", "retention_days", "9"])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {global_file}: line 1, column 26: invalid JSON (Expecting property name "
        "enclosed in double quotes); fix or delete it\n"
    )
    assert global_file.read_text() == '{"snapshot_budget": 4096,,}'


PROC = Path("/proc/self")


@pytest.mark.skipif(not PROC.is_dir(), reason="no /proc here (Linux only)")
@pytest.mark.parametrize(
    ("root", "why"),
    [
        # mkdir of the root fails (FileNotFoundError from ensure_dir), even as root.
        (PROC / "ctxmode", "cannot create /proc/self/ctxmode (No such file or directory)"),
        # The folder exists but takes no new file: the temp file beside config.json fails.
        (PROC, "no new file can be made in /proc/self (No such file or directory)"),
    ],
)
def test_an_unwritable_root_is_one_error_line(
    monkeypatch: pytest.MonkeyPatch, root: Path, why: str
) -> None:
    monkeypatch.setenv("CTXMODE_HOME", str(root))
    result = CliRunner().invoke(main, ["config", "set", "retention_days", "9"])
    assert (result.exit_code, result.output) == (
        1,
        f"Error: cannot write {root / 'config.json'}: {why}\n",
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a 0500 folder anyway")
def test_a_read_only_root_is_one_error_line(global_file: Path) -> None:
    global_file.write_text('{"retention_days": 9}\n')
    folder = global_file.parent
    folder.chmod(0o500)
    try:
        for args in (["set", "retention_days", "7"], ["unset", "retention_days"]):
            result = CliRunner().invoke(main, ["config", *args])
            assert (result.exit_code, result.output) == (
                1,
                f"Error: cannot write {global_file}: no new file can be made in {folder} "
                "(Permission denied)\n",
            )
    finally:
        folder.chmod(0o700)
    assert global_file.read_text() == '{"retention_days": 9}\n'


def test_help_documents_every_option_with_its_default() -> None:
    text = cli("config", "--help").output
    for name, (default, help_text) in config.OPTIONS.items():
        assert f"  {name} = {config.format_value(default)}\n" in text
        assert help_text.split()[0] in text


def test_subprocess_round_trip(tmp_path: Path) -> None:
    env = {**os.environ, "CTXMODE_HOME": str(tmp_path / "home")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ctxmode", "config", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )

    done = cli("set", "redact_patterns", '["ACME-[0-9]{6}"]')
    assert done.returncode == 0, done.stderr
    assert cli("get", "redact_patterns").stdout == '["ACME-[0-9]{6}"]\n'
    bad = cli("set", "redact_patterns", "ACME-[0-9")
    assert bad.returncode == 2
    assert "\nError: redact_patterns: 'ACME-[0-9' is not a valid regular" in bad.stderr
    assert json.loads((tmp_path / "home" / "config.json").read_text()) == {
        "redact_patterns": ["ACME-[0-9]{6}"]
    }


@pytest.mark.parametrize(
    ("incomplete", "expected"),
    [
        ("snap", ["snapshot_budget"]),
        ("inject", ["inject_on_startup", "inject_on_clear"]),
        ("x", []),
    ],
)
def test_shell_completion_of_option_names(incomplete: str, expected: list[str]) -> None:
    env = {
        **os.environ,
        "_CTXMODE_COMPLETE": "bash_complete",
        "COMP_WORDS": f"ctxmode config get {incomplete}",
        "COMP_CWORD": "3",
    }
    done = subprocess.run(
        [sys.executable, "-c", "from ctxmode.cli import main; main(prog_name='ctxmode')"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert [line for line in done.stdout.splitlines() if line] == [f"plain,{n}" for n in expected]
