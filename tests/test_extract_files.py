"""File tools → file/rule events: real 2.1.197 payloads, older shapes, paths, rule files."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxmode import payload
from ctxmode.extract import extract, files
from ctxmode.extract.common import is_rule_file, normalize, rel_path
from tests.helpers import PROJECT, extracted, extracted_fixture, fixture

# -- real payloads ---------------------------------------------------------------------------

FIXTURE_CASES = [
    # What a read returned: an excerpt (head and tail) of the text, masked.
    (
        "more/PostToolUse.Read.text.json",
        [
            (
                "file_read",
                {
                    "path": "README.md",
                    "given": f"{PROJECT}/README.md",
                    "excerpt": "# Demo project\n\nA small invoice demo used to capture hook "
                    "payloads.\nSee src/app.py.",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.Read.offset_limit.json",
        [
            (
                "file_read",
                {
                    "path": "src/app.py",
                    "given": f"{PROJECT}/src/app.py",
                    "offset": 2,
                    "limit": 3,
                    "excerpt": "def old_name(lines):",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.Read.notebook.json",
        [("file_read", {"path": "analysis.ipynb", "given": f"{PROJECT}/analysis.ipynb"})],
    ),
    (
        "more/PostToolUse.Read.reread_unchanged.json",
        [("file_read", {"path": "README.md", "given": f"{PROJECT}/README.md"})],
    ),
    (
        "more/PostToolUse.Read.before_edit.json",
        [
            (
                "file_read",
                {
                    "path": "src/app.py",
                    "given": f"{PROJECT}/src/app.py",
                    "excerpt": '"""Invoice helpers."""\n\n\ndef old_name(lines):\n    # TODO: '
                    "round half-up\n    return sum(lines)\n\n\ndef total(lines):\n    return "
                    'old_name(lines)\n\n\nALIASES = {"sum": old_name}',
                },
            )
        ],
    ),
    # What a write or an edit put in: an excerpt of the new text (head and tail).
    (
        "PostToolUse.Write.json",
        [
            (
                "file_write",
                {
                    "path": "hello.py",
                    "given": f"{PROJECT}/hello.py",
                    "kind": "create",
                    "excerpt": 'print("hello")',
                },
            )
        ],
    ),
    (
        "more/PostToolUse.Write.overwrite.json",
        [
            (
                "file_write",
                {
                    "path": "notes.txt",
                    "given": f"{PROJECT}/notes.txt",
                    "kind": "overwrite",
                    "excerpt": "Notes (rewritten)\n- rounding is half-up",
                },
            )
        ],
    ),
    # The plan file lives outside the project: kept absolute.
    (
        "more/PostToolUse.Write.plan_file.print_permission_prompt_tool.json",
        [
            (
                "file_write",
                {
                    "path": "/home/dev/.claude/plans/zany-beaming-marshmallow.md",
                    "kind": "create",
                    "excerpt": "# Plan: invoice rounding\n\n1. Round totals half-up in src/app.py\n"
                    "2. Add tests for .005 cases",
                },
            )
        ],
    ),
    (
        "PostToolUse.Edit.json",
        [
            (
                "file_edit",
                {
                    "path": "hello.py",
                    "given": f"{PROJECT}/hello.py",
                    "summary": "+1 -1",
                    "excerpt": 'print("hello, world")',
                },
            )
        ],
    ),
    (
        "more/PostToolUse.Edit.replace_all.json",
        [
            (
                "file_edit",
                {
                    "path": "src/app.py",
                    "given": f"{PROJECT}/src/app.py",
                    "summary": "+3 -3",
                    "replace_all": True,
                    "excerpt": "new_name",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.NotebookEdit.insert.json",
        [
            (
                "file_edit",
                {
                    "path": "analysis.ipynb",
                    "given": f"{PROJECT}/analysis.ipynb",
                    "summary": "insert markdown cell ba689788",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.NotebookEdit.replace.json",
        [
            (
                "file_edit",
                {
                    "path": "analysis.ipynb",
                    "given": f"{PROJECT}/analysis.ipynb",
                    "summary": "replace code cell cell-a",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.Glob.pattern.json",
        [
            (
                "file_search",
                {
                    "tool": "Glob",
                    "pattern": "**/*.py",
                    "matches": 2,
                    "excerpt": "src/util.py\nsrc/app.py",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.Grep.files_with_matches.json",
        [
            (
                "file_search",
                {
                    "tool": "Grep",
                    "pattern": "TODO",
                    "matches": 2,
                    "excerpt": "src/app.py\nsrc/util.py",
                },
            )
        ],
    ),
    # content mode reports numFiles 0: the match count is its lines.
    (
        "more/PostToolUse.Grep.content.json",
        [
            (
                "file_search",
                {
                    "tool": "Grep",
                    "pattern": "TODO",
                    "matches": 2,
                    "excerpt": "src/app.py:5:    # TODO: round half-up\n"
                    "src/util.py:1:# TODO: add CSV export",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.Grep.count.json",
        [
            (
                "file_search",
                {"tool": "Grep", "pattern": "old_name", "matches": 3, "excerpt": "src/app.py:3"},
            )
        ],
    ),
]


@pytest.mark.parametrize(("name", "expected"), FIXTURE_CASES, ids=[c[0] for c in FIXTURE_CASES])
def test_real_payloads(name: str, expected: list[tuple[str, dict[str, Any]]]) -> None:
    assert extracted_fixture(name) == expected


def test_subagent_read_carries_agent_fields() -> None:
    record = fixture("more/PostToolUse.Read.subagent_reviewer.json")
    inp = payload.from_dict(record["payload"], record["event"])
    inp.project_dir = PROJECT
    [event] = extract(inp)
    assert event.type == "file_read"
    assert json.loads(event.data)["path"] == "README.md"
    assert (event.agent_id, event.agent_type) == ("ae611b5df06ff9aad", "reviewer")
    assert event.tool_use_id == "toolu_sub_inner_0_8818bdbd"


@pytest.mark.parametrize(
    "name",
    [
        "PostToolUse.Write.json",
        "more/PostToolUse.Write.overwrite.json",
        "PostToolUse.Edit.json",
        "more/PostToolUse.Edit.replace_all.json",
        "more/PostToolUse.NotebookEdit.replace.json",
    ],
)
def test_no_file_contents_in_events_but_an_excerpt_of_the_new_text(name: str) -> None:
    """What a file held before a change (an edit's old text, the file before) is never
    stored; of what a tool wrote, only the excerpt (of what a read returned: an excerpt
    too, see test_a_reads_excerpt_is_bounded)."""
    record = fixture(name)["payload"]
    old = [record["tool_input"].get(k) for k in ("old_string",)]
    old += [record["tool_response"].get(k) for k in ("originalFile", "oldString")]
    old.append(record["tool_response"].get("file", {}).get("content"))
    events = extracted_fixture(name)
    stored = json.dumps(events)
    new = "\n".join(filter(None, (record["tool_input"].get(k) for k in ("content", "new_string"))))
    for text in filter(None, old):
        for line in text.splitlines():
            if len(line.strip()) > 8 and line.strip() not in new:
                assert line.strip() not in stored
    for _type, data in events:
        assert len(data.get("excerpt", "")) <= 420


class HeadOnly(str):
    """A huge file body of which only the head may be read (the excerpt's source, see
    extract.HEAD_CHARS): any access past it raises (and yields no events)."""

    LIMIT = 1024 + 4096  # HEAD_CHARS, and the line end safe_head looks for

    def _check(self, stop: object) -> None:
        if not isinstance(stop, int) or stop > self.LIMIT:
            raise AssertionError("file contents were inspected past their head")

    def __getitem__(self, key: Any) -> str:
        if not isinstance(key, slice) or key.start not in (None, 0):
            raise AssertionError("file contents were inspected")
        self._check(key.stop)
        return str.__getitem__(self, key)

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        self._check(end)
        return str.find(self, sub, start, end)

    def rfind(self, sub: Any, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        self._check(end)
        return str.rfind(self, sub, start, end)

    def _boom(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("file contents were inspected")

    __iter__ = __contains__ = _boom  # type: ignore[assignment]
    split = splitlines = lower = strip = startswith = encode = _boom  # type: ignore[assignment]


class Poison(str):
    """A file body no extractor may look at: any inspection raises (and yields no events)."""

    def _boom(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("file contents were inspected")

    __iter__ = __getitem__ = __contains__ = __len__ = _boom
    find = split = splitlines = lower = strip = startswith = encode = _boom


def test_large_contents_are_never_inspected_past_their_head() -> None:
    body = Poison("x" * (5 * 1024 * 1024))
    written = HeadOnly(("line of text\n" * 400) * 1000)
    assert extracted(
        "Write",
        {"file_path": f"{PROJECT}/big.txt", "content": written},
        {
            "type": "create",
            "filePath": f"{PROJECT}/big.txt",
            "content": body,
            "originalFile": None,
            "structuredPatch": [],
        },
    ) == [
        (
            "file_write",
            {
                "path": "big.txt",
                "given": f"{PROJECT}/big.txt",
                "kind": "create",
                "excerpt": _excerpt_of(written),
            },
        )
    ]
    assert extracted(
        "Edit",
        {"file_path": f"{PROJECT}/big.py", "old_string": body, "new_string": written},
        {
            "filePath": f"{PROJECT}/big.py",
            "originalFile": body,
            "oldString": body,
            "structuredPatch": [{"lines": ["-a", "+b", " c"]}],
        },
    ) == [
        (
            "file_edit",
            {
                "path": "big.py",
                "given": f"{PROJECT}/big.py",
                "summary": "+1 -1",
                "excerpt": _excerpt_of(written),
            },
        )
    ]


def _excerpt_of(written: str) -> str:
    head = str.__getitem__(written, slice(0, 1024 + 4096))
    return "\n".join(head.split("\n")[:18]) + "\n…\n" + "\n".join(head.split("\n")[-10:-1])


# -- older and malformed shapes --------------------------------------------------------------

OLDER_CASES = [
    # MultiEdit (older clients): one event, the number of edits.
    (
        "MultiEdit",
        {
            "file_path": f"{PROJECT}/src/a.py",
            "edits": [
                {"old_string": "a", "new_string": "b"},
                {"old_string": "c", "new_string": "d", "replace_all": True},
            ],
        },
        None,
        [
            (
                "file_edit",
                {
                    "path": "src/a.py",
                    "given": f"{PROJECT}/src/a.py",
                    "edits": 2,
                    "replace_all": True,
                    "excerpt": "b\n…\nd",
                },
            )
        ],
    ),
    (
        "MultiEdit",
        {"file_path": f"{PROJECT}/src/a.py", "edits": []},
        {"filePath": f"{PROJECT}/src/a.py", "structuredPatch": []},
        [("file_edit", {"path": "src/a.py", "given": f"{PROJECT}/src/a.py", "edits": 0})],
    ),
    # No tool_response at all, or null: the input is enough.
    (
        "Write",
        {"file_path": f"{PROJECT}/a.txt", "content": "x"},
        None,
        [("file_write", {"path": "a.txt", "given": f"{PROJECT}/a.txt", "excerpt": "x"})],
    ),
    (
        "Edit",
        {"file_path": f"{PROJECT}/a.txt", "old_string": "x", "new_string": "y"},
        None,
        [("file_edit", {"path": "a.txt", "given": f"{PROJECT}/a.txt", "excerpt": "y"})],
    ),
    (
        "Read",
        {"file_path": f"{PROJECT}/a.txt", "offset": "2", "limit": True},
        None,
        [("file_read", {"path": "a.txt", "given": f"{PROJECT}/a.txt"})],
    ),
    # tool_response as a JSON string.
    (
        "Write",
        {"file_path": f"{PROJECT}/a.txt"},
        '{"type":"update","filePath":"/x"}',
        [("file_write", {"path": "a.txt", "given": f"{PROJECT}/a.txt", "kind": "overwrite"})],
    ),
    # Path only in the response (input field renamed or missing).
    (
        "Read",
        {},
        {"type": "text", "file": {"filePath": f"{PROJECT}/b.txt"}},
        [("file_read", {"path": "b.txt", "given": f"{PROJECT}/b.txt"})],
    ),
    (
        "NotebookEdit",
        {"notebook_path": f"{PROJECT}/n.ipynb", "cell_id": "c1", "edit_mode": "delete"},
        None,
        [
            (
                "file_edit",
                {"path": "n.ipynb", "given": f"{PROJECT}/n.ipynb", "summary": "delete cell c1"},
            )
        ],
    ),
    (
        "Grep",
        {"pattern": "def main", "path": "src", "output_mode": "content"},
        {"mode": "content", "numFiles": 0, "numLines": 4},
        [("file_search", {"tool": "Grep", "pattern": "def main", "path": "src", "matches": 4})],
    ),
    (
        "Glob",
        {"pattern": "*.md", "path": "/etc"},
        None,
        [("file_search", {"tool": "Glob", "pattern": "*.md", "path": "/etc"})],
    ),
    # Nothing to name: no event rather than an empty path.
    ("Read", {"file_path": None}, None, []),
    ("Write", {"file_path": ""}, "not json", []),
    ("Glob", {"pattern": "  "}, None, []),
]


@pytest.mark.parametrize(("tool", "tool_input", "response", "expected"), OLDER_CASES)
def test_older_and_partial_shapes(
    tool: str, tool_input: dict[str, Any], response: Any, expected: list[tuple[str, dict[str, Any]]]
) -> None:
    assert extracted(tool, tool_input, response) == expected


def test_relative_path_resolved_against_cwd() -> None:
    # After `cd src`, Claude Code reports cwd=/home/dev/proj/src; Glob's path is relative to it.
    assert extracted("Glob", {"pattern": "*.py", "path": "util"}, None, cwd=f"{PROJECT}/src") == [
        ("file_search", {"tool": "Glob", "pattern": "*.py", "path": "src/util"})
    ]
    assert extracted("Read", {"file_path": "../README.md"}, None, cwd=f"{PROJECT}/src") == [
        ("file_read", {"path": "README.md", "given": "../README.md"})  # as the call wrote it
    ]


# -- paths -------------------------------------------------------------------------------------

REL_CASES = [
    ("/home/dev/proj/src/a.py", "/home/dev/proj", "", "src/a.py"),
    ("/home/dev/proj/src/a.py", "/home/dev/proj/", "", "src/a.py"),  # trailing slash
    ("/home/dev/proj//src/./b/../a.py", "/home/dev/proj", "", "src/a.py"),
    ("/home/dev/proj", "/home/dev/proj", "", "."),
    ("/home/dev/proj2/a.py", "/home/dev/proj", "", "/home/dev/proj2/a.py"),  # a sibling prefix
    ("/home/dev/proj/../other/a.py", "/home/dev/proj", "", "/home/dev/other/a.py"),
    ("/etc/hosts", "/home/dev/proj", "", "/etc/hosts"),
    ("src/a.py", "/home/dev/proj", "/home/dev/proj", "src/a.py"),
    ("a.py", "/home/dev/proj", "/home/dev/proj/src", "src/a.py"),
    ("../../x", "/home/dev/proj", "/home/dev/proj/src", "/home/dev/x"),
    ("/a.py", "/", "", "a.py"),
    ("/tmp/x with spaces/f.txt", "/tmp/x with spaces", "", "f.txt"),
    # Windows-style paths, as sent by Claude Code on Windows.
    ("C:\\proj\\src\\a.py", "C:\\proj", "", "src/a.py"),
    ("C:\\proj\\src\\a.py", "C:\\proj\\", "", "src/a.py"),
    ("c:\\Proj\\Src\\a.py", "C:\\proj", "", "Src/a.py"),  # case-insensitive, case kept
    ("C:/proj/src/a.py", "C:\\proj", "", "src/a.py"),
    ("D:\\other\\a.py", "C:\\proj", "", "D:/other/a.py"),
    ("C:\\projects\\a.py", "C:\\proj", "", "C:/projects/a.py"),
    ("src\\a.py", "C:\\proj", "C:\\proj", "src/a.py"),
    ("\\\\server\\share\\proj\\a.py", "\\\\server\\share\\proj", "", "a.py"),
    ("\\\\Server\\Share\\Proj\\a.py", "\\\\server\\share\\proj", "", "a.py"),
    ("C:\\İx\\a.py", "C:\\ix", "", "C:/İx/a.py"),  # lower() would change the length
    ("", "/home/dev/proj", "", ""),
    ("/x/y.py", "", "", "/x/y.py"),
]


@pytest.mark.parametrize(("path", "project", "cwd", "expected"), REL_CASES)
def test_rel_path(path: str, project: str, cwd: str, expected: str) -> None:
    assert rel_path(path, project, cwd) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a/./b//c/", "a/b/c"),
        ("../a", "../a"),
        ("/../a", "/a"),
        ("a/..", "."),
        ("//srv/x", "//srv/x"),
    ],
)
def test_normalize(path: str, expected: str) -> None:
    assert normalize(path) == expected


def test_windows_project_read_gives_relative_path() -> None:
    """Stored relative and ``/``-separated; the path as the session wrote it is kept beside
    it (``given``): an agent later quotes and asks for that form."""
    assert extracted(
        "Read", {"file_path": "C:\\proj\\src\\a.py"}, None, project="C:\\proj", cwd="C:\\proj"
    ) == [("file_read", {"path": "src/a.py", "given": "C:\\proj\\src\\a.py"})]
    # A path the call gave in its stored form already is not kept twice.
    assert extracted("Read", {"file_path": "src/a.py"}, None) == [
        ("file_read", {"path": "src/a.py"})
    ]
    outside = "/home/dev/.claude/plans/p.md"
    assert extracted("Read", {"file_path": outside}, None) == [("file_read", {"path": outside})]


# -- rule files --------------------------------------------------------------------------------

RULES = [
    "CLAUDE.md",
    "src/CLAUDE.md",
    "CLAUDE.local.md",
    "AGENTS.md",
    "/home/dev/proj/pkg/AGENTS.md",
    ".claude/CLAUDE.md",
    "/home/dev/.claude/CLAUDE.md",
    ".claude/rules/style.md",
    ".claude/rules/python/testing.md",
    ".claude/commands/deploy.md",
    ".claude/agents/reviewer.md",
    ".claude/skills/greet/SKILL.md",
    "/home/dev/.claude/skills/pdf/SKILL.md",
    "C:\\proj\\.claude\\rules\\style.md",
    ".claude/worktrees/feat/CLAUDE.md",
]
NOT_RULES = [
    "README.md",
    "claude.md.bak",
    ".claude/settings.json",
    ".claude/settings.local.json",
    "/home/dev/.claude/projects/-home-dev-proj/abc.jsonl",
    "/home/dev/.claude/projects/-home-dev-proj/CLAUDE.md",
    "/home/dev/.claude/plans/x.md",
    ".claude/skills/greet/helper.py",
    ".claude/todos/a.json",
    ".claude/statsig/cache",
    ".claude",
    ".claude/rules",
    "docs/rules/style.md",
    "",
]


@pytest.mark.parametrize("path", RULES)
def test_rule_files(path: str) -> None:
    assert is_rule_file(path)


@pytest.mark.parametrize("path", NOT_RULES)
def test_not_rule_files(path: str) -> None:
    assert not is_rule_file(path)


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        (
            "Read",
            {"file_path": f"{PROJECT}/CLAUDE.md"},
            [
                ("file_read", {"path": "CLAUDE.md", "given": f"{PROJECT}/CLAUDE.md"}),
                ("rule_read", {"path": "CLAUDE.md"}),
            ],
        ),
        (
            "Read",
            {"file_path": "/home/dev/.claude/CLAUDE.md"},
            [
                ("file_read", {"path": "/home/dev/.claude/CLAUDE.md"}),
                ("rule_read", {"path": "/home/dev/.claude/CLAUDE.md"}),
            ],
        ),
        (
            "Edit",
            {
                "file_path": f"{PROJECT}/.claude/rules/style.md",
                "old_string": "a",
                "new_string": "b",
            },
            [
                (
                    "file_edit",
                    {
                        "path": ".claude/rules/style.md",
                        "given": f"{PROJECT}/.claude/rules/style.md",
                        "excerpt": "b",
                    },
                ),
                ("rule_edit", {"path": ".claude/rules/style.md"}),
            ],
        ),
        (
            "Write",
            {"file_path": f"{PROJECT}/AGENTS.md", "content": "x"},
            [
                (
                    "file_write",
                    {"path": "AGENTS.md", "given": f"{PROJECT}/AGENTS.md", "excerpt": "x"},
                ),
                ("rule_edit", {"path": "AGENTS.md"}),
            ],
        ),
        (
            "MultiEdit",
            {"file_path": f"{PROJECT}/.claude/commands/ship.md", "edits": [{}]},
            [
                (
                    "file_edit",
                    {
                        "path": ".claude/commands/ship.md",
                        "given": f"{PROJECT}/.claude/commands/ship.md",
                        "edits": 1,
                    },
                ),
                ("rule_edit", {"path": ".claude/commands/ship.md"}),
            ],
        ),
        (
            "Write",
            {"file_path": f"{PROJECT}/.claude/settings.json", "content": "{}"},
            [
                (
                    "file_write",
                    {
                        "path": ".claude/settings.json",
                        "given": f"{PROJECT}/.claude/settings.json",
                        "excerpt": "{}",
                    },
                )
            ],
        ),
    ],
)
def test_rule_events_come_with_file_events(
    tool: str, tool_input: dict[str, Any], expected: list[tuple[str, dict[str, Any]]]
) -> None:
    assert extracted(tool, tool_input) == expected


# -- apply_patch-style tools -------------------------------------------------------------------

PATCH = """*** Begin Patch
*** Update File: src/app.py
@@ def total(lines):
-    return old_name(lines)
+    return new_name(lines)
*** Add File: docs/notes.md
+# Notes
+*** Update File: not/a/header.py (inside content, after a '+')
*** Delete File: old/legacy.py
*** Update File: src/util.py
*** Move to: src/helpers.py
@@
-x = 1
+x = 2
*** Update File: CLAUDE.md
@@
-a
+b
*** End Patch
"""

# Each file with an excerpt of the lines the patch adds to it (a line holding a header
# after its "+" is content).
PATCH_EVENTS = [
    ("file_edit", {"path": "src/app.py", "excerpt": "return new_name(lines)"}),
    (
        "file_write",
        {
            "path": "docs/notes.md",
            "kind": "create",
            "excerpt": "# Notes\n*** Update File: not/a/header.py (inside content, after a '+')",
        },
    ),
    ("file_delete", {"path": "old/legacy.py"}),
    ("file_edit", {"path": "src/helpers.py", "excerpt": "x = 2"}),
    ("file_edit", {"path": "CLAUDE.md", "excerpt": "b"}),
    ("rule_edit", {"path": "CLAUDE.md"}),
]


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("apply_patch", {"input": PATCH}),
        ("ApplyPatch", {"patch": PATCH}),
        ("shell", {"command": ["apply_patch", PATCH]}),  # Codex-style argv
        ("mystery_editor", {"patch_text": PATCH.replace("\n", "\r\n")}),
    ],
)
def test_apply_patch_records_every_file(tool: str, tool_input: dict[str, Any]) -> None:
    assert extracted(tool, tool_input) == PATCH_EVENTS


def test_apply_patch_absolute_and_windows_paths() -> None:
    patch = "*** Begin Patch\n*** Add File: C:\\proj\\a.py\n+x\n*** Delete File: C:\\proj\\b.py\n"
    assert extracted("apply_patch", {"input": patch}, project="C:\\proj", cwd="C:\\proj") == [
        ("file_write", {"path": "a.py", "kind": "create", "excerpt": "x"}),
        ("file_delete", {"path": "b.py"}),
    ]


def test_apply_patch_through_bash_adds_file_events() -> None:
    command = f"apply_patch <<'EOF'\n{PATCH}EOF"
    got = extracted("Bash", {"command": command}, {"stdout": "Done!", "stderr": ""})
    for expected in PATCH_EVENTS:
        assert expected in got


def test_unknown_tool_without_patch_gives_nothing() -> None:
    assert (
        extracted("Skill", {"skill": "greet", "args": "*** not a patch"}, {"success": True}) == []
    )


def test_a_reads_excerpt_is_bounded() -> None:
    """Of a long file read, the event keeps an excerpt of the start of what the read
    returned (what an agent asks later is most often near the top: a version, an import,
    a setting), at most 420 characters, never the file."""
    lines = [f"line {n}: setting_{n} = {n * 7}" for n in range(5000)]
    record = fixture("more/PostToolUse.Read.text.json")
    raw = json.loads(json.dumps(record["payload"]))
    raw["tool_response"]["file"]["content"] = "\n".join(lines)
    inp = payload.from_dict(raw, record["event"])
    inp.project_dir = PROJECT
    [event] = extract(inp)
    excerpt = json.loads(event.data)["excerpt"]
    assert excerpt.startswith("line 0: setting_0 = 0\nline 1:")
    assert len(excerpt) <= 420
    assert "line 2500:" not in excerpt


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("     1\t# Demo\n     2\t\n     3\tSee src/app.py.", "# Demo\n\nSee src/app.py."),
        ("12→x = 1\n13→y = 2", "x = 1\ny = 2"),
        ("1\tonly numbered lines\nbut not this one", "1\tonly numbered lines\nbut not this one"),
        ("2024 was a year", "2024 was a year"),
        ("src/app.py:3", "src/app.py:3"),
    ],
)
def test_a_transcripts_numbered_lines_read_as_the_file(text: str, expected: str) -> None:
    assert files.unnumbered(text) == expected


def test_the_path_as_given_is_masked_and_bounded() -> None:
    """``given`` comes from the masked payload, like ``path``, and is clipped."""
    token = "ghp_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    got = extracted("Read", {"file_path": f"{PROJECT}/keys/{token}.txt"}, None)
    (_, data), *_ = got
    assert token not in json.dumps(got) and "[REDACTED:" in data["given"]
    long = f"{PROJECT}/" + "/".join(["deep"] * 200) + "/a.py"
    (_, data), *_ = extracted("Read", {"file_path": long}, None)
    assert len(data["given"]) <= files.GIVEN_CHARS + 1  # "…" at the cut
