"""What a shell command evidently changes (issue 18): redirections, tee, sed -i, rm, mv, cp.

Through the Bash extractor, as both hosts' shell calls reach it; what the command line does
not state is left to the snapshot-time reconciliation (tests/test_worktree.py).
"""

from __future__ import annotations

import pytest

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
        ("cd sub && echo x > f.txt", []),
        ("grep -rn TODO src", []),
    ],
)
def test_shell_changes(command: str, expected: list[tuple[str, str]]) -> None:
    assert files(command) == expected


def test_paths_outside_the_project_stay_absolute() -> None:
    assert files("echo x > /tmp/elsewhere.txt") == [("file_write", "/tmp/elsewhere.txt")]
