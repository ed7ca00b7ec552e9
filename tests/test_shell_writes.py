"""What a shell command evidently changes (issue 18): redirections, tee, sed -i, rm, mv, cp.

Through the Bash extractor, as both hosts' shell calls reach it; what the command line does
not state is left to the snapshot-time reconciliation (tests/test_worktree.py).
"""

from __future__ import annotations

import json

import pytest

from ctxmode.extract import extract
from ctxmode.hosts import codex
from tests.helpers import PROJECT, extracted


def files(command: str, cwd: str = PROJECT) -> list[tuple[str, str]]:
    return [
        (kind, data["path"])
        for kind, data in extracted("Bash", {"command": command}, {"stdout": ""}, cwd=cwd)
        if kind.startswith("file_") and data.get("via") == "shell"
    ]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo hi > notes.txt", [("file_write", "notes.txt")]),
        ("make 2> build.log >> all.log", [("file_write", "build.log"), ("file_edit", "all.log")]),
        ("./gen | tee out/a.txt", [("file_write", "out/a.txt")]),
        ("cat x | tee -a log.txt", [("file_edit", "log.txt")]),
        ("sed -i 's/1/2/' config.ini", [("file_edit", "config.ini")]),
        (
            "sed -i.bak -e 's/a/b/' -e 's/c/d/' a.py b.py",
            [("file_edit", "a.py"), ("file_edit", "b.py")],
        ),
        ("rm -f old.txt build/x.o", [("file_delete", "old.txt"), ("file_delete", "build/x.o")]),
        ("mv a.py b.py", [("file_delete", "a.py"), ("file_write", "b.py")]),
        ("cp tmpl.ini config.ini", [("file_write", "config.ini")]),
        (f"echo x > {PROJECT}/abs.txt", [("file_write", "abs.txt")]),
        # not stated, or not certain: nothing
        ("sed 's/1/2/' config.ini", []),
        ("echo x > /dev/null 2>&1", []),
        ('echo x > "$OUT"', []),
        ("grep -rn TODO src", []),
    ],
)
def test_shell_changes(command: str, expected: list[tuple[str, str]]) -> None:
    assert files(command) == expected


# Claude Code's payload gives the directory after the command (its shell keeps a `cd`),
# Codex's the one it started in: the paths come out the same from either.
@pytest.mark.parametrize("cwd_after", [True, False])
@pytest.mark.parametrize(
    ("command", "final", "expected"),
    [
        ("cd sub && echo x > f.txt", "sub", [("file_write", "sub/f.txt")]),
        (
            "echo a > before.txt && cd sub && echo b > after.txt",
            "sub",
            [("file_write", "before.txt"), ("file_write", "sub/after.txt")],
        ),
        ("cd sub/deep && sed -i 's/a/b/' x.cfg", "sub/deep", [("file_edit", "sub/deep/x.cfg")]),
        (
            "(cd sub && echo x > in.txt) && echo y > out.txt",
            "",
            [("file_write", "sub/in.txt"), ("file_write", "out.txt")],
        ),
        (
            "pushd sub && rm a.o && popd && rm b.o",
            "",
            [("file_delete", "sub/a.o"), ("file_delete", "b.o")],
        ),
        ("cd /srv/data && tee log.txt < in", None, [("file_write", "/srv/data/log.txt")]),
        # where the line cannot tell: before and after `cd "$DIR"` its own writes are left out
        ('echo a > one.txt; cd "$DIR" && echo b > two.txt', None, [("file_write", "one.txt")]),
        # `~` is the home the transcript's path names (/home/dev/.claude/projects/...)
        (
            "cd ~/elsewhere && echo b > two.txt",
            None,
            [("file_write", "/home/dev/elsewhere/two.txt")],
        ),
    ],
)
def test_writes_after_a_cd_land_where_the_command_ran(
    command: str, final: str | None, expected: list[tuple[str, str]], cwd_after: bool
) -> None:
    # None: the payload's cwd is the project's either way (the last cd left it)
    cwd = f"{PROJECT}/{final}".rstrip("/") if final is not None and cwd_after else PROJECT
    assert files(command, cwd=cwd) == expected


def test_a_cd_up_leaves_out_what_ran_in_the_unnamed_start_folder() -> None:
    # After `cd ..` the payload names the parent; the folder the command started in is
    # one of its children, which the line does not name.
    assert files("echo a > here.txt && cd .. && echo b > up.txt", cwd=PROJECT) == [
        ("file_write", "up.txt")
    ]


def test_paths_outside_the_project_stay_absolute() -> None:
    assert files("echo x > /tmp/elsewhere.txt") == [("file_write", "/tmp/elsewhere.txt")]


def codex_events(command: str, cwd: str = PROJECT) -> list[tuple[str, dict]]:
    """What a Codex shell call makes: Codex runs each command in a fresh shell, started
    where the payload's cwd says."""
    raw = {
        "session_id": "s", "cwd": cwd, "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": command}, "tool_response": "", "tool_use_id": "call_1",
    }  # fmt: skip
    inp = codex.parse(json.dumps(raw).encode(), "PostToolUse")
    inp.project_dir = PROJECT
    return [(e.type, json.loads(e.data)) for e in extract(inp)]


def test_a_codex_cd_moves_no_session_but_places_the_writes_after_it() -> None:
    found = codex_events("cd sub && echo x > f.txt && make")
    assert ("file_write", {"path": "sub/f.txt", "via": "shell"}) in found
    assert [kind for kind, _ in found if kind == "cwd_change"] == []


def test_a_codex_cd_whose_name_ends_the_cwd_is_still_taken_from_the_cwd() -> None:
    # Claude Code's cwd is where the command left it, so there `cd sub` from .../sub is
    # read as "started one folder up"; Codex's cwd is where it started.
    found = codex_events("cd sub && echo x > f.txt", cwd=f"{PROJECT}/sub")
    assert ("file_write", {"path": "sub/sub/f.txt", "via": "shell"}) in found


def test_a_codex_git_call_after_a_cd_names_the_folder_it_ran_in() -> None:
    found = codex_events("cd ../lib && git pull")
    assert [data.get("dir") for kind, data in found if kind.startswith("git_")] == ["/home/dev/lib"]


def test_claude_code_still_records_the_move() -> None:
    assert ("cwd_change", {"path": f"{PROJECT}/sub"}) in extracted(
        "Bash", {"command": "cd sub && make"}, {"stdout": ""}, cwd=f"{PROJECT}/sub"
    )
