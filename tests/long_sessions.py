"""Long generated sessions: hundreds to 1,500 hook calls of a working day (prompts, reads,
edits, long failures, tests, git work), as Claude Code's hooks receive them.

:func:`session` is a seeded generator (the same seed, the same calls): each call is an
``(event, payload)`` pair ready for a hook's stdin, and :class:`Truth` says what the
snapshot must carry at the end (the last real commit, the branch, the first request,
the newest failure not yet run again with success). A commit that git refuses ("nothing
to commit", "nothing added to commit") is generated too, and is not the truth's last
commit. With ``rework=True`` the session also goes back over its failures: a failing
command run again with success (resolved), run again failing the same way after other
failures, and a flaky one (fails, passes, fails alike).
"""

from __future__ import annotations

import io
import json
import random
import re
from typing import Any

SESSION = "0d1f7a52-5e55-4a11-9c0a-00000000lo00"

_WORDS = [
    "parser",
    "cache",
    "billing",
    "ledger",
    "invoice",
    "retry",
    "queue",
    "worker",
    "schema",
    "index",
    "token",
    "session",
    "export",
    "import",
    "report",
    "chart",
    "widget",
    "layout",
    "router",
    "handler",
    "client",
    "server",
    "config",
]
_DIRS = ("src", "src/core", "src/api", "lib", "tests", "docs", "scripts")
_EXTS = ("py", "ts", "md", "json", "toml")


class Truth:
    """What the generated session did that the snapshot must keep."""

    def __init__(self) -> None:
        self.first_prompt = ""
        self.branch = ""
        self.last_sha = ""
        self.last_message = ""
        self.commits = 0
        self.changed_after: set[str] = set()  # files changed since the last real commit
        self.refused = 0  # commits git refused ("nothing to commit")
        self.calls = 0
        # Commands whose last run failed, in the order of those failures (the newest last).
        self.open_errors: dict[str, int] = {}

    @property
    def last_error(self) -> str:
        """The command of the newest failure not run again with success ("" if none)."""
        return next(reversed(self.open_errors), "")


def _sha(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(7))


def _phrase(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _path(rng: random.Random, root: str) -> str:
    name = "_".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))
    return f"{root}/{rng.choice(_DIRS)}/{name}.{rng.choice(_EXTS)}"


def _traceback(rng: random.Random, lines: int) -> str:
    frames = []
    for n in range(lines):
        frames.append(
            f'  File "/work/proj/src/{rng.choice(_WORDS)}.py", line {rng.randint(1, 900)}, '
            f"in {rng.choice(_WORDS)}_{n}\n    {_phrase(rng, 8)}"
        )
    kind = rng.choice(("AssertionError", "KeyError", "TypeError", "ValueError"))
    return (
        "Traceback (most recent call last):\n" + "\n".join(frames) + f"\n{kind}: {_phrase(rng, 12)}"
    )


class _Gen:
    def __init__(self, seed: int, root: str, session_id: str) -> None:
        self.rng = random.Random(seed)
        self.root = root
        self.sid = session_id
        self.n = 0
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.truth = Truth()
        self.files: list[str] = []
        # Each failing command's last output (error or stdout): what a rerun repeats.
        self.failures: dict[str, tuple[str, str]] = {}

    def _base(self, event: str) -> dict[str, Any]:
        return {
            "session_id": self.sid,
            "transcript_path": f"/home/dev/.claude/projects/-work-proj/{self.sid}.jsonl",
            "cwd": self.root,
            "permission_mode": "default",
            "hook_event_name": event,
        }

    def _tool(
        self, name: str, tool_input: dict[str, Any], response: Any = None, error: str = ""
    ) -> None:
        self.n += 1
        event = "PostToolUseFailure" if error else "PostToolUse"
        payload = self._base(event)
        payload.update(tool_name=name, tool_input=tool_input, tool_use_id=f"toolu_{self.n:05d}")
        if error:
            payload["error"] = error
            payload["is_interrupt"] = False
        else:
            payload["tool_response"] = response
        self.calls.append((event, payload))

    def prompt(self, text: str) -> None:
        if not self.truth.first_prompt:
            self.truth.first_prompt = text
        payload = self._base("UserPromptSubmit")
        payload["prompt"] = text
        self.calls.append(("UserPromptSubmit", payload))

    def todos(self) -> None:
        rng = self.rng
        todos = [
            {
                "content": f"{_phrase(rng, rng.randint(4, 14))}",
                "status": rng.choice(("pending", "in_progress", "completed")),
                "activeForm": "working",
            }
            for _ in range(rng.randint(3, 12))
        ]
        self._tool("TodoWrite", {"todos": todos}, {"oldTodos": [], "newTodos": todos})

    def plan(self) -> None:
        rng = self.rng
        plan = "# Plan\n" + "\n".join(
            f"{n}. {_phrase(rng, 12)}" for n in range(1, rng.randint(4, 14))
        )
        self._tool("ExitPlanMode", {"plan": plan}, {"plan": plan, "isAgent": False})

    def rules(self) -> None:
        path = f"{self.root}/{self.rng.choice(('CLAUDE.md', 'src/CLAUDE.md', 'docs/AGENTS.md'))}"
        self._tool(
            "Read", {"file_path": path},
            {"type": "text", "file": {"filePath": path, "content": "rules", "numLines": 1,
                                      "startLine": 1, "totalLines": 1}},
        )  # fmt: skip

    def bash(self, command: str, stdout: str = "", error: str = "", fails: bool = False) -> None:
        """A shell call; ``fails``: its (successful) output shows a failure."""
        response = {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}
        self._tool("Bash", {"command": command, "description": "run"}, response, error)
        opened = self.truth.open_errors
        opened.pop(command, None)
        if error or fails:
            opened[command] = self.n
            self.failures[command] = (stdout, error)

    def rerun_fixed(self) -> None:
        """An open failure's command run again, with success: it is resolved."""
        opened = list(self.truth.open_errors)
        if opened:
            self.bash(self.rng.choice(opened), stdout=f"{self.rng.randint(2, 90)} passed")

    def rerun_same(self) -> None:
        """An open failure's command run again after others, failing exactly as before."""
        opened = list(self.truth.open_errors)
        if len(opened) > 1:
            command = self.rng.choice(opened[:-1])
            stdout, error = self.failures[command]
            self.bash(command, stdout=stdout, error=error, fails=not error)

    def flaky(self) -> None:
        """A test that fails, passes, then fails alike (a few calls apart)."""
        target = f"tests/test_{self.rng.choice(_WORDS)}_flaky.py"
        command = f"python -m pytest -q {target}"
        error = f"Exit code 1\nFAILED {target}::test_timing - TimeoutError: took 2.1s"
        self.bash(command, error=error)
        self.read()
        self.bash(command, stdout="1 passed")
        self.edit()
        self.bash(command, error=error)

    def read(self) -> None:
        rng = self.rng
        path = (
            rng.choice(self.files) if self.files and rng.random() < 0.5 else _path(rng, self.root)
        )
        content = "\n".join(_phrase(rng, 10) for _ in range(rng.randint(5, 60)))
        self._tool(
            "Read", {"file_path": path},
            {"type": "text", "file": {"filePath": path, "content": content, "numLines": 1,
                                      "startLine": 1, "totalLines": 1}},
        )  # fmt: skip

    def edit(self) -> None:
        rng = self.rng
        path = _path(rng, self.root)
        self.files.append(path)
        self.truth.changed_after.add(path[len(self.root) + 1 :])
        old, new = _phrase(rng, 6), _phrase(rng, 7)
        if rng.random() < 0.3:
            self._tool(
                "Write", {"file_path": path, "content": new},
                {"type": "create", "filePath": path, "content": new, "structuredPatch": []},
            )  # fmt: skip
        else:
            self._tool(
                "Edit", {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
                {"filePath": path, "oldString": old, "newString": new, "originalFile": old,
                 "structuredPatch": [], "userModified": False, "replaceAll": False},
            )  # fmt: skip

    def failing_test(self) -> None:
        rng = self.rng
        target = f"tests/test_{rng.choice(_WORDS)}.py"
        body = _traceback(rng, rng.randint(3, 25))
        self.bash(f"python -m pytest -q {target}", error=f"Exit code 1\n{body}\nFAILED {target}")

    def long_output_error(self) -> None:
        rng = self.rng
        out = "\n".join(_phrase(rng, 9) for _ in range(rng.randint(2, 20)))
        self.bash(
            f"npm run build:{rng.choice(_WORDS)}",
            stdout=f"{out}\nerror: {_phrase(rng, 14)} failed",
            fails=True,
        )

    def branch(self) -> None:
        name = f"feature/{self.rng.choice(_WORDS)}-{self.rng.randint(1, 999)}"
        self.truth.branch = name
        self.bash(f"git checkout -b {name}", stdout=f"Switched to a new branch '{name}'")

    def commit(self) -> None:
        rng = self.rng
        kind = rng.choice(("feat", "fix", "refactor", "test"))
        message = f"{kind}({rng.choice(_WORDS)}): {_phrase(rng, rng.randint(3, 9))}"
        branch = self.truth.branch or "main"
        roll = rng.random()
        if roll < 0.15:
            # Refused by git: the call fails (exit 1), or a pipe hides the status.
            self.truth.refused += 1
            if rng.random() < 0.5:
                self.bash(
                    f'git commit -am "{message}"',
                    error=f"Exit code 1\nOn branch {branch}\nnothing to commit, working tree clean",
                )
            else:
                self.bash(
                    f'git add -A && git commit -m "{message}" 2>&1 | tail -3',
                    stdout=f"On branch {branch}\nUntracked files:\n\tnotes.txt\n\n"
                    'nothing added to commit but untracked files present (use "git add" to track)',
                )
            return
        sha = _sha(rng)
        self.truth.last_sha, self.truth.last_message = sha, message
        self.truth.commits += 1
        self.truth.changed_after = set()
        self.bash(
            f'git add -A && git commit -m "{message}"',
            stdout=f"[{branch} {sha}] {message}\n {rng.randint(1, 9)} files changed, "
            f"{rng.randint(1, 300)} insertions(+)",
        )

    def git_other(self) -> None:
        rng = self.rng
        op = rng.choice(("status", "diff", "log", "push", "pull", "stash", "fetch"))
        if op == "status":
            self.bash("git status --short", stdout=" M src/a.py\n?? notes.txt")
        elif op == "log":
            self.bash("git log --oneline -5", stdout=f"{_sha(rng)} {_phrase(rng, 4)}")
        elif op == "push":
            self.bash("git push -u origin HEAD", stdout="branch set up to track origin")
        elif op == "diff":
            self.bash("git diff --stat", stdout=" src/a.py | 2 +-")
        else:
            self.bash(f"git {op}", stdout="")


def session(
    seed: int,
    calls: int,
    root: str = "/work/proj",
    session_id: str = SESSION,
    rework: bool = False,
) -> tuple[list[tuple[str, dict[str, Any]]], Truth]:
    """A seeded session of about ``calls`` hook calls (no PreCompact): the calls and the truth.

    Work comes in rounds: a request, reads, edits, failing tests and builds with long
    output, now and then a branch, commits (some refused by git) and other git work. The
    last real commit is followed by more reads and failures, as when a compaction comes
    in the middle of the next piece of work. ``rework``: failures are also run again, with
    success or failing alike, and some tests are flaky (see the module's docstring); the
    same seed without it gives the same session as before it existed.
    """
    g = _Gen(seed, root, session_id)
    rng = g.rng
    g.prompt(
        f"Build the {_phrase(rng, 3)} feature end to end, with tests (the goal of seed {seed})"
    )
    if rng.random() < 0.7:
        g.branch()
    while len(g.calls) < calls:
        words = _phrase(rng, rng.randint(3, 90))
        rule = (
            f". Always use the {rng.choice(_WORDS)} module, never the old one"
            if rng.random() < 0.3
            else ""
        )
        g.prompt(f"{rng.choice(('fix', 'add', 'refactor', 'explain'))} the {words}{rule}")
        if rng.random() < 0.3:
            g.todos()
        if rng.random() < 0.1:
            g.plan()
        if rng.random() < 0.1:
            g.rules()
        for _ in range(rng.randint(4, 30)):
            roll = rng.random()
            if roll < 0.30:
                g.read()
            elif roll < 0.50:
                g.edit()
            elif roll < 0.65:
                g.failing_test()
            elif roll < 0.75:
                g.long_output_error()
            elif roll < 0.85:
                g.commit()
            elif roll < 0.93:
                g.git_other()
            elif roll < 0.95:
                g.branch()
            else:
                g.bash(f"ls {rng.choice(_DIRS)}", stdout=_phrase(rng, 5))
            if rework and rng.random() < 0.25:
                rng.choice((g.rerun_fixed, g.rerun_fixed, g.rerun_same, g.flaky))()
    if not g.truth.last_sha:
        g.commit()
        while not g.truth.last_sha:
            g.commit()
    # The compaction comes in the middle of the next piece of work.
    steps = [g.read, g.failing_test, g.long_output_error, g.edit]
    if rework:
        steps += [g.rerun_fixed, g.rerun_same, g.flaky]
    for _ in range(rng.randint(5, 40)):
        rng.choice(steps)()
    g.truth.calls = len(g.calls)
    return g.calls, g.truth


def compaction_payloads(
    calls: list[tuple[str, dict[str, Any]]],
) -> list[tuple[str, dict[str, Any]]]:
    """The auto compaction that follows ``calls``: PreCompact, then SessionStart (compact)."""
    base = {k: v for k, v in calls[0][1].items() if k != "prompt"}
    return [
        ("PreCompact", {**base, "hook_event_name": "PreCompact", "trigger": "auto",
                        "custom_instructions": ""}),
        ("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "compact"}),
    ]  # fmt: skip


def replay_in_process(calls: list[tuple[str, dict[str, Any]]], env: dict[str, str]) -> str:
    """Run ``calls`` and the compaction after them through the hooks' core
    (``hookrun.run_hook``, environment injected); the snapshot SessionStart handed back."""
    from ctxmode import hookrun

    out = b""
    for event, payload in [*calls, *compaction_payloads(calls)]:
        out = hookrun.run_hook(event, io.BytesIO(json.dumps(payload).encode()), env)
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""


def git_section(xml: str) -> str:
    found = re.search(r"<git[ >].*?</git>", xml, re.S)
    return found.group(0) if found else ""


def last_commit_kept(xml: str, truth: Truth) -> bool:
    """Whether the snapshot's newest commit is the session's last real commit."""
    first = re.search(r"<commit( sha=\"([0-9a-f]+)\")?[^>]*>([^<]*)</commit>", git_section(xml))
    if first is None or first.group(2) != truth.last_sha:
        return False
    shown = first.group(3).rstrip("…").strip()
    return bool(shown) and truth.last_message.startswith(shown)


def error_keys(xml: str) -> list[str]:
    """The ``key`` of each ``<errors>/<error>``, in the snapshot's order (a cut key without
    its ``…``)."""
    from xml.etree.ElementTree import fromstring

    return [
        (error.get("key") or "").removesuffix("…")
        for error in fromstring(xml).findall("errors/error")
    ]


def last_error_kept(xml: str, truth: Truth) -> bool:
    """Whether the snapshot's first error is the newest failure not yet run again with
    success (its key shortened at most)."""
    keys = error_keys(xml)
    return bool(keys and keys[0] and truth.last_error.startswith(keys[0]))
