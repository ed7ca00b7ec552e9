"""Bash tool calls → cwd / env / git / error events (ctxmode.extract.bash)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmode import events, fastjson, payload
from ctxmode.extract import bash
from ctxmode.extract.common import BUDGETS, DATA_BUDGET
from tests.helpers import extracted
from tests.hooktools import FIXTURES

PROJECT = "/home/dev/proj"
TRANSCRIPT = "/home/dev/.claude/projects/-home-dev-proj/4d3360dc.jsonl"

Draft = tuple[str, dict[str, Any]]


def make_input(
    command: Any,
    *,
    cwd: str = PROJECT,
    stdout: str = "",
    stderr: str = "",
    response: Any = None,
    transcript: str | None = TRANSCRIPT,
) -> payload.HookInput:
    raw = {
        "hook_event_name": "PostToolUse",
        "session_id": "s1",
        "cwd": cwd,
        "transcript_path": transcript,
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "x"},
        "tool_response": response
        if response is not None
        else {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False},
        "tool_use_id": "toolu_1",
    }
    inp = payload.from_dict(raw)
    inp.project_dir = PROJECT
    return inp


def drafts(command: str, **kwargs: Any) -> list[Draft]:
    return bash.drafts(make_input(command, **kwargs))


# -- the real Claude Code 2.1.197 payloads ---------------------------------------------------

FIXTURE_EVENTS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    # cwd is reported *after* the command: /home/dev/proj/src, so `cd src` went there
    "more/PostToolUse.Bash.cd_ls.json": [("cwd_change", {"path": "/home/dev/proj/src"})],
    "more/PostToolUse.Bash.checkout_b.json": [
        ("git_branch", {"op": "checkout", "branch": "feature/x", "created": True})
    ],
    "more/PostToolUse.Bash.export_echo.json": [
        ("env_setup", {"kind": "export", "tool": "export", "detail": "export FOO"})
    ],
    "more/PostToolUse.Bash.git_C_log.json": [
        ("git_query", {"op": "log", "args": "--oneline -1", "dir": "/home/dev/proj/src"})
    ],
    "more/PostToolUse.Bash.git_add.json": [("git_op", {"op": "add", "args": "-A"})],
    "more/PostToolUse.Bash.heredoc_commit.json": [
        (
            "git_commit",
            {
                "message": "Subject line\n\nBody",
                "sha": "ef4c5ca",
                "printed": "[feature/x ef4c5ca] Subject line\n"
                " 3 files changed, 12 insertions(+), 9 deletions(-)",
            },
        )
    ],
    "more/PostToolUse.Bash.subagent_general-purpose.json": [
        ("git_query", {"op": "status", "args": "--short"})
    ],
    "more/PostToolUse.Bash.subagent_reviewer.json": [
        ("git_query", {"op": "status", "args": "--short"})
    ],
    "more/PostToolUse.Bash.tests_failed_exit0.json": [
        (
            "output_error",
            {
                "tool": "Bash",
                "key": "echo '===== 2 failed, 3 passed in 0.12s ====='",
                "error": "2 failed, 3 passed in 0.12s",
            },
        )
    ],
    "more/PostToolUse.Bash.venv.json": [
        ("env_setup", {"kind": "venv", "tool": "venv", "detail": "python3 -m venv .venv"})
    ],
    "PostToolUse.Bash.json": [
        ("git_op", {"op": "init", "args": "-q"}),
        ("git_op", {"op": "add", "args": "-A"}),
        ("git_commit", {"message": "init"}),
        ("git_query", {"op": "log", "args": "--oneline"}),
    ],
}


def test_every_bash_fixture_is_covered() -> None:
    found = {str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("more/PostToolUse.Bash.*.json")}
    found.add("PostToolUse.Bash.json")
    assert found == set(FIXTURE_EVENTS)


@pytest.mark.parametrize("name", sorted(FIXTURE_EVENTS))
def test_real_fixture_gives_the_exact_events(name: str) -> None:
    path = FIXTURES / name
    raw = json.loads(path.read_text())["payload"]
    inp = payload.from_dict(raw)
    inp.project_dir = PROJECT
    expected = [
        events.make(
            type_,
            data,
            agent_id=raw.get("agent_id"),
            agent_type=raw.get("agent_type") or None,
            tool_use_id=raw.get("tool_use_id"),
        )
        for type_, data in FIXTURE_EVENTS[name]
    ]
    got = bash.extract(inp)
    # First the call itself (its own tests below), then what its command line tells.
    assert got[0].type == "shell_call"
    assert json.loads(got[0].data)["command"] == raw["tool_input"]["command"]
    assert got[1:] == expected


def test_subagent_fields_are_carried() -> None:
    path = FIXTURES / "more/PostToolUse.Bash.subagent_reviewer.json"
    raw = json.loads(path.read_text())["payload"]
    call, event = bash.extract(payload.from_dict(raw))
    assert (event.agent_id, event.agent_type, event.category, event.priority) == (
        raw["agent_id"],
        "reviewer",
        "git",
        events.MINOR,
    )
    assert (call.agent_id, call.agent_type, call.category, call.priority) == (
        raw["agent_id"],
        "reviewer",
        "shell",
        events.MINOR,
    )


# -- working directory -------------------------------------------------------------------------

CWD = "cwd_change"

# (command, the payload's cwd — the cwd *after* the command —, expected paths)
CD_CASES = [
    ("cd src && ls", "/home/dev/proj/src", ["/home/dev/proj/src"]),
    ("cd /tmp", "/tmp", ["/tmp"]),
    ("cd ..", "/home/dev", ["/home/dev"]),
    ("cd ../..", "/home", ["/home"]),
    ("cd a/b/../c", "/home/dev/proj/a/c", ["/home/dev/proj/a/c"]),
    (
        "cd src && cd lib",
        "/home/dev/proj/src/lib",
        ["/home/dev/proj/src", "/home/dev/proj/src/lib"],
    ),
    ("cd build && make && cd ..", PROJECT, ["/home/dev/proj/build", PROJECT]),
    ("cd /opt/app && cd conf", "/opt/app/conf", ["/opt/app", "/opt/app/conf"]),
    # quoted paths with spaces
    (
        'cd "my dir/sub dir" && pwd',
        "/home/dev/proj/my dir/sub dir",
        ["/home/dev/proj/my dir/sub dir"],
    ),
    ("cd my\\ dir", "/home/dev/proj/my dir", ["/home/dev/proj/my dir"]),
    # ~ from the transcript path's home
    ("cd ~/work", "/home/dev/work", ["/home/dev/work"]),
    ("cd", "/home/dev", ["/home/dev"]),
    ("cd '~'", "/home/dev/proj/~", ["/home/dev/proj/~"]),  # quoted: a folder named ~
    # values only the shell knows: the payload's cwd says where it ended
    ("cd -", "/var/old", ["/var/old"]),
    ('cd "$REPO_ROOT"', "/srv/repo", ["/srv/repo"]),
    ("cd $(git rev-parse --show-toplevel)", PROJECT, [PROJECT]),
    # pushd / popd
    ("pushd lib && make && popd", PROJECT, ["/home/dev/proj/lib", PROJECT]),
    ("pushd /tmp", "/tmp", ["/tmp"]),
    # a cd that does not outlive the command is no cwd change
    ("(cd sub && make)", PROJECT, []),
    ("echo $(cd /tmp && pwd)", PROJECT, []),
    ("cd /tmp | cat", PROJECT, []),
    ("cd /tmp &", PROJECT, []),
    ("bash -c 'cd /tmp'", PROJECT, []),
    ("f() { cd /tmp; }", PROJECT, []),
    # mentions are not commands
    ('echo "cd /tmp && git push"', PROJECT, []),
    ("echo cd /tmp", PROJECT, []),
    ("grep -rn 'cd ..' scripts/", PROJECT, []),
    ("cd .", PROJECT, []),
    ("cd -P ../x", "/home/dev/x", ["/home/dev/x"]),
    # Windows-style paths (Git Bash): drive letters, backslashes in quotes
    ("cd src", "C:\\Users\\dev\\proj\\src", ["C:/Users/dev/proj/src"]),
    ("cd 'C:\\Users\\dev\\other'", "C:\\Users\\dev\\other", ["C:/Users/dev/other"]),
    ('cd "D:/work/repo" && git status', "D:\\work\\repo", ["D:/work/repo"]),
    ("cd SRC", "C:\\Users\\dev\\proj\\src", ["C:/Users/dev/proj/src"]),  # case-insensitive
    ("cd /c/Users/dev", "/c/Users/dev", ["/c/Users/dev"]),
]


@pytest.mark.parametrize(("command", "cwd", "paths"), CD_CASES)
def test_cd_resolves_against_the_cwd(command: str, cwd: str, paths: list[str]) -> None:
    got = [d["path"] for t, d in drafts(command, cwd=cwd) if t == CWD]
    assert got == paths


def test_cd_when_the_client_sends_the_cwd_from_before_the_command() -> None:
    # An older/other client: cwd not yet moved into src. It does not end in /src, so it is
    # read as the start directory.
    assert drafts("cd src && ls", cwd=PROJECT) == [(CWD, {"path": "/home/dev/proj/src"})]


def test_tilde_is_kept_when_the_home_is_unknown() -> None:
    assert drafts("cd ~/work && cd ..", cwd="/x", transcript=None) == [
        (CWD, {"path": "~/work"}),
        (CWD, {"path": "/x"}),
    ]


def test_home_from_transcript() -> None:
    assert bash.home_from_transcript(TRANSCRIPT) == "/home/dev"
    assert (
        bash.home_from_transcript("C:\\Users\\dev\\.claude\\projects\\p\\s.jsonl") == "C:/Users/dev"
    )
    assert bash.home_from_transcript("/tmp/elsewhere.jsonl") == ""
    assert bash.home_from_transcript(None) == ""


# -- git -----------------------------------------------------------------------------------------

GIT_CASES: list[tuple[str, list[Draft]]] = [
    # every git command of a chain
    (
        "git add -A && git commit -m 'Fix bug' && git push origin main",
        [
            ("git_op", {"op": "add", "args": "-A"}),
            ("git_commit", {"message": "Fix bug"}),
            ("git_op", {"op": "push", "args": "origin main"}),
        ],
    ),
    # commit messages in every form
    ("git commit -am 'fix: typo'", [("git_commit", {"message": "fix: typo"})]),
    ("git commit -a -m x -m 'second para'", [("git_commit", {"message": "x\n\nsecond para"})]),
    ("git commit --message='a b'", [("git_commit", {"message": "a b"})]),
    ("git commit --message 'a b' --no-verify", [("git_commit", {"message": "a b"})]),
    ("git commit -mQuick", [("git_commit", {"message": "Quick"})]),
    ("git commit -qam 'quiet all'", [("git_commit", {"message": "quiet all"})]),
    ("git commit -F msg.txt", [("git_commit", {"message": "file:msg.txt"})]),
    ("git commit --file=../MSG", [("git_commit", {"message": "file:../MSG"})]),
    ("git commit -F - <<'EOF'\nFrom stdin\n\nbody\nEOF", [("git_commit", {"message": "From stdin\n\nbody"})]),
    (
        "git commit -m \"$(cat <<'EOF'\nAdd parser (shell)\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"",
        [("git_commit", {"message": "Add parser (shell)\n\nCo-Authored-By: Claude <noreply@anthropic.com>"})],
    ),
    ('git commit -m "$MSG"', [("git_commit", {"message": "$MSG"})]),
    ("git commit --fixup HEAD~1", [("git_commit", {"message": "fixup:HEAD~1"})]),
    ("git commit --amend --no-edit", [("git_commit", {"message": ""})]),
    ("git commit --dry-run -m x", []),
    ("git commit -S -m signed", [("git_commit", {"message": "signed"})]),
    # global options before the subcommand
    ("git -C ../lib status", [("git_query", {"op": "status", "args": "", "dir": "/home/dev/lib"})]),
    ("git -C /repo -C sub log -1", [("git_query", {"op": "log", "args": "-1", "dir": "/repo/sub"})]),
    (
        "git -c user.name=Bot -c commit.gpgsign=false commit -m bot",
        [("git_commit", {"message": "bot"})],
    ),
    ("git --no-pager diff --stat", [("git_query", {"op": "diff", "args": "--stat"})]),
    ("git -P log --oneline", [("git_query", {"op": "log", "args": "--oneline"})]),
    ("git --git-dir=.git --work-tree . status", [("git_query", {"op": "status", "args": ""})]),
    ("git --work-tree /w --git-dir /w/.git fetch", [("git_op", {"op": "fetch", "args": ""})]),
    ("git --version", []),
    ("/usr/bin/git status", [("git_query", {"op": "status", "args": ""})]),
    ("sudo -u deploy git pull", [("git_op", {"op": "pull", "args": ""})]),
    ("GIT_PAGER=cat git log -3", [("git_query", {"op": "log", "args": "-3"})]),
    # branches
    ("git checkout -b feature/x", [("git_branch", {"op": "checkout", "branch": "feature/x", "created": True})]),
    ("git checkout -B hotfix origin/main", [("git_branch", {"op": "checkout", "branch": "hotfix", "created": True})]),
    ("git checkout main", [("git_branch", {"op": "checkout", "branch": "main"})]),
    ("git checkout release/1.2", [("git_branch", {"op": "checkout", "branch": "release/1.2"})]),
    ("git checkout -", [("git_branch", {"op": "checkout", "branch": "-"})]),
    ("git switch dev", [("git_branch", {"op": "switch", "branch": "dev"})]),
    ("git switch -c feat/y", [("git_branch", {"op": "switch", "branch": "feat/y", "created": True})]),
    ("git switch --create=feat/z", [("git_branch", {"op": "switch", "branch": "feat/z", "created": True})]),
    ("git branch topic", [("git_branch", {"op": "branch", "branch": "topic", "created": True})]),
    ("git branch topic main", [("git_branch", {"op": "branch", "branch": "topic", "created": True})]),
    # file restores are operations, not branch moves
    ("git checkout -- src/app.py", [("git_op", {"op": "checkout", "args": "-- src/app.py"})]),
    ("git checkout src/app.py", [("git_op", {"op": "checkout", "args": "src/app.py"})]),
    ("git checkout .", [("git_op", {"op": "checkout", "args": "."})]),
    ("git checkout HEAD~1 -- a.py b.py", [("git_op", {"op": "checkout", "args": "HEAD~1 -- a.py b.py"})]),
    ("git restore --staged a.py", [("git_op", {"op": "restore", "args": "--staged a.py"})]),
    # branch management and listing
    ("git branch -d old", [("git_op", {"op": "branch", "args": "-d old"})]),
    ("git branch -m old new", [("git_op", {"op": "branch", "args": "-m old new"})]),
    ("git branch", [("git_query", {"op": "branch", "args": ""})]),
    ("git branch -a --sort=-committerdate", [("git_query", {"op": "branch", "args": "-a --sort=-committerdate"})]),
    ("git branch --show-current", [("git_query", {"op": "branch", "args": "--show-current"})]),
    # state-changing operations
    ("git merge --no-ff feature", [("git_op", {"op": "merge", "args": "--no-ff feature"})]),
    ("git rebase -i HEAD~3", [("git_op", {"op": "rebase", "args": "-i HEAD~3"})]),
    ("git cherry-pick abc123", [("git_op", {"op": "cherry-pick", "args": "abc123"})]),
    ("git revert --no-edit HEAD", [("git_op", {"op": "revert", "args": "--no-edit HEAD"})]),
    ("git reset --hard HEAD~1", [("git_op", {"op": "reset", "args": "--hard HEAD~1"})]),
    ("git stash", [("git_op", {"op": "stash", "args": ""})]),
    ("git stash pop", [("git_op", {"op": "stash", "args": "pop"})]),
    ("git stash list", [("git_query", {"op": "stash", "args": "list"})]),
    ("git pull --rebase", [("git_op", {"op": "pull", "args": "--rebase"})]),
    ("git fetch --all --prune", [("git_op", {"op": "fetch", "args": "--all --prune"})]),
    ("git clone https://github.com/o/r.git", [("git_op", {"op": "clone", "args": "https://github.com/o/r.git"})]),
    ("git tag v1.0", [("git_op", {"op": "tag", "args": "v1.0"})]),
    ("git tag -a v1.1 -m 'Release'", [("git_op", {"op": "tag", "args": "-a v1.1 -m Release"})]),
    ("git tag", [("git_query", {"op": "tag", "args": ""})]),
    ("git tag -l 'v1.*'", [("git_query", {"op": "tag", "args": "-l 'v1.*'"})]),
    ("git rm --cached secrets.env", [("git_op", {"op": "rm", "args": "--cached secrets.env"})]),
    ("git mv a.py b.py", [("git_op", {"op": "mv", "args": "a.py b.py"})]),
    ("git worktree add ../wt feature", [("git_op", {"op": "worktree", "args": "add ../wt feature"})]),
    ("git worktree list", [("git_query", {"op": "worktree", "args": "list"})]),
    ("git init", [("git_op", {"op": "init", "args": ""})]),
    ("git remote add upstream git@github.com:o/r.git", [("git_op", {"op": "remote", "args": "add upstream git@github.com:o/r.git"})]),
    ("git remote -v", [("git_query", {"op": "remote", "args": "-v"})]),
    ("git config user.email", [("git_query", {"op": "config", "args": "user.email"})]),
    ("git config --global user.name 'Dev'", [("git_op", {"op": "config", "args": "--global user.name Dev"})]),
    # read-only queries
    ("git status --short", [("git_query", {"op": "status", "args": "--short"})]),
    ("git log --oneline -5", [("git_query", {"op": "log", "args": "--oneline -5"})]),
    ("git diff HEAD~1 -- src/", [("git_query", {"op": "diff", "args": "HEAD~1 -- src/"})]),
    ("git show --stat HEAD", [("git_query", {"op": "show", "args": "--stat HEAD"})]),
    ("git blame -L 10,20 app.py", [("git_query", {"op": "blame", "args": "-L 10,20 app.py"})]),
    ("git rev-parse --abbrev-ref HEAD", [("git_query", {"op": "rev-parse", "args": "--abbrev-ref HEAD"})]),
    ("git ls-files -m", [("git_query", {"op": "ls-files", "args": "-m"})]),
    # git inside substitutions, subshells, loops and bash -c is seen
    ("echo $(git rev-parse HEAD)", [("git_query", {"op": "rev-parse", "args": "HEAD"})]),
    ("for f in a b; do git add \"$f\"; done", [("git_op", {"op": "add", "args": "'$f'"})]),
    ("bash -lc 'git push'", [("git_op", {"op": "push", "args": ""})]),
    ("bash -o pipefail -c 'git fetch'", [("git_op", {"op": "fetch", "args": ""})]),
    ("bash deploy.sh 'git push'", []),
    ("eval 'git status'", [("git_query", {"op": "status", "args": ""})]),
    # mentions are not commands
    ('echo "git push --force"', []),
    ("echo 'git commit -m x' > notes.txt", []),
    ("grep -n 'git checkout' README.md", []),
    ("command -v git", []),
]  # fmt: skip


@pytest.mark.parametrize(("command", "expected"), GIT_CASES)
def test_git(command: str, expected: list[Draft]) -> None:
    # The git facts only (`> notes.txt` also records the file the shell wrote).
    assert [d for d in drafts(command) if d[0].startswith("git_")] == expected


def test_git_dir_follows_a_cd_in_a_subshell() -> None:
    assert drafts("(cd ../lib && git pull --ff-only)") == [
        ("git_op", {"op": "pull", "args": "--ff-only", "dir": "/home/dev/lib"})
    ]


def test_git_after_a_cd_in_the_same_chain_ran_in_the_session_cwd() -> None:
    assert drafts("cd sub && git status", cwd="/home/dev/proj/sub") == [
        (CWD, {"path": "/home/dev/proj/sub"}),
        ("git_query", {"op": "status", "args": ""}),
    ]


def test_git_before_a_cd_ran_where_the_command_started() -> None:
    assert drafts("git status && cd sub", cwd="/home/dev/proj/sub") == [
        ("git_query", {"op": "status", "args": "", "dir": PROJECT}),
        (CWD, {"path": "/home/dev/proj/sub"}),
    ]


@pytest.mark.parametrize(
    ("command", "stdout", "response", "expected"),
    [
        (
            "git commit -m 'Add x'",
            "[main 1a2b3c4] Add x\n 1 file changed, 2 insertions(+)",
            None,
            [
                (
                    "git_commit",
                    {
                        "message": "Add x",
                        "sha": "1a2b3c4",
                        "printed": "[main 1a2b3c4] Add x\n 1 file changed, 2 insertions(+)",
                    },
                )
            ],
        ),
        (
            "git commit -m 'first'",
            "[main (root-commit) 0f0f0f0] first\n",
            None,
            [
                (
                    "git_commit",
                    {"message": "first", "sha": "0f0f0f0", "printed": "[main (root-commit) 0f0f0f0] first"},
                )
            ],
        ),
        (
            "git commit --amend --no-edit",
            "[detached HEAD 9abcdef] Earlier subject\n Date: today",
            None,
            [
                (
                    "git_commit",
                    {
                        "message": "Earlier subject",
                        "sha": "9abcdef",
                        "printed": "[detached HEAD 9abcdef] Earlier subject",
                    },
                )
            ],
        ),
        (
            "git commit -qm a && git commit -qm b",
            "",
            {"stdout": "", "stderr": "", "gitOperation": {"commit": {"sha": "feedbee", "kind": "committed"}}},
            [("git_commit", {"message": "a"}), ("git_commit", {"message": "b", "sha": "feedbee"})],
        ),
        (
            "git commit -m a; git commit -m b",
            "[main 1111111] a\n[main 2222222] b\n",
            None,
            [
                ("git_commit", {"message": "a", "sha": "1111111", "printed": "[main 1111111] a"}),
                ("git_commit", {"message": "b", "sha": "2222222", "printed": "[main 2222222] b"}),
            ],
        ),
        # the commit did not happen (a later `;` command made the call succeed)
        (
            "git commit -m x; git status",
            "On branch main\nnothing to commit, working tree clean",
            None,
            [("git_query", {"op": "status", "args": ""})],
        ),
        # git refused: nothing staged, only untracked files (a pipe made the call succeed)
        (
            'git add -A && git commit -m "x" 2>&1 | tail -3',
            'Untracked files:\n\tnotes.txt\n\nnothing added to commit but untracked files present (use "git add" to track)',
            None,
            [("git_op", {"op": "add", "args": "-A"})],
        ),
        # `git log` output is not a commit line
        ("git log --oneline -1", "fffa6df init", None, [("git_query", {"op": "log", "args": "--oneline -1"})]),
    ],
)  # fmt: skip
def test_commit_sha(command: str, stdout: str, response: Any, expected: list[Draft]) -> None:
    assert drafts(command, stdout=stdout, response=response) == expected


# -- environment ----------------------------------------------------------------------------------

ENV_CASES: list[tuple[str, list[tuple[str, str, str]]]] = [
    ("source .venv/bin/activate", [("venv", "venv", "source .venv/bin/activate")]),
    (". venv/Scripts/activate", [("venv", "venv", ". venv/Scripts/activate")]),
    ("source ~/.nvm/nvm.sh", [("source", "source", "source ~/.nvm/nvm.sh")]),
    (". ./env.sh", [("source", "source", ". ./env.sh")]),
    ("python -m venv .venv", [("venv", "venv", "python -m venv .venv")]),
    ("python3.11 -m venv --prompt x .venv", [("venv", "venv", "python3.11 -m venv --prompt x .venv")]),
    ("virtualenv env", [("venv", "virtualenv", "virtualenv env")]),
    ("uv venv", [("venv", "uv", "uv venv")]),
    ("conda activate ml", [("venv", "conda", "conda activate ml")]),
    ("conda create -n ml python=3.11", [("venv", "conda", "conda create -n ml python=3.11")]),
    ("nvm use 20", [("toolchain", "nvm", "nvm use 20")]),
    ("pyenv local 3.12.1", [("toolchain", "pyenv", "pyenv local 3.12.1")]),
    ("asdf install nodejs 20.1.0", [("toolchain", "asdf", "asdf install nodejs 20.1.0")]),
    ("volta pin node@20", [("toolchain", "volta", "volta pin node@20")]),
    ("rbenv global 3.3.0", [("toolchain", "rbenv", "rbenv global 3.3.0")]),
    ("mise use python@3.12", [("toolchain", "mise", "mise use python@3.12")]),
    ("pip install -r requirements.txt", [("install", "pip", "pip install -r requirements.txt")]),
    ("pip3 install 'rich>=13'", [("install", "pip", "pip3 install 'rich>=13'")]),
    ("python -m pip install -e .", [("install", "pip", "python -m pip install -e .")]),
    ("python3 -m pip install --upgrade pip", [("install", "pip", "python3 -m pip install --upgrade pip")]),
    ("uv pip install ruff", [("install", "uv", "uv pip install ruff")]),
    ("uv sync --all-extras", [("install", "uv", "uv sync --all-extras")]),
    ("uv add httpx", [("install", "uv", "uv add httpx")]),
    ("poetry install", [("install", "poetry", "poetry install")]),
    ("poetry add requests", [("install", "poetry", "poetry add requests")]),
    ("pipx install black", [("install", "pipx", "pipx install black")]),
    ("npm install", [("install", "npm", "npm install")]),
    ("npm i -D vitest", [("install", "npm", "npm i -D vitest")]),
    ("npm ci", [("install", "npm", "npm ci")]),
    ("pnpm add zod", [("install", "pnpm", "pnpm add zod")]),
    ("yarn", [("install", "yarn", "yarn")]),
    ("yarn add lodash", [("install", "yarn", "yarn add lodash")]),
    ("bun i", [("install", "bun", "bun i")]),
    ("cargo install ripgrep", [("install", "cargo", "cargo install ripgrep")]),
    ("cargo add serde --features derive", [("install", "cargo", "cargo add serde --features derive")]),
    ("go install golang.org/x/tools/gopls@latest", [("install", "go", "go install golang.org/x/tools/gopls@latest")]),
    ("go get github.com/pkg/errors", [("install", "go", "go get github.com/pkg/errors")]),
    ("gem install rails", [("install", "gem", "gem install rails")]),
    ("bundle install", [("install", "bundle", "bundle install")]),
    ("sudo apt-get install -y jq", [("install", "apt-get", "sudo apt-get install -y jq")]),
    ("apt install curl", [("install", "apt", "apt install curl")]),
    ("brew install gh", [("install", "brew", "brew install gh")]),
    # exports: the names, never the values
    ("export FOO=bar", [("export", "export", "export FOO")]),
    ("export API_TOKEN=s3cr3t DEBUG=1", [("export", "export", "export API_TOKEN DEBUG")]),
    ("export PATH=\"$HOME/.local/bin:$PATH\"", [("export", "export", "export PATH")]),
    ("export EDITOR", [("export", "export", "export EDITOR")]),
    ("declare -x MODE=fast", [("export", "export", "export MODE")]),
    # a chain sets up several things, in order
    (
        "python3 -m venv .venv && source .venv/bin/activate && pip install -e '.[dev]'",
        [
            ("venv", "venv", "python3 -m venv .venv"),
            ("venv", "venv", "source .venv/bin/activate"),
            ("install", "pip", "pip install -e '.[dev]'"),
        ],
    ),
    # not environment setup
    ("pip list", []),
    ("pip uninstall -y x", []),
    ("npm run build", []),
    ("npm test", []),
    ("uv run pytest", []),
    ("export -p", []),
    ("echo 'pip install x'", []),
    ("python -c 'import venv'", []),
    ("FOO=1 make", []),
]  # fmt: skip


@pytest.mark.parametrize(("command", "expected"), ENV_CASES)
def test_environment_setup(command: str, expected: list[tuple[str, str, str]]) -> None:
    got = drafts(command)
    assert got == [("env_setup", {"kind": k, "tool": t, "detail": d}) for k, t, d in expected]


def test_export_never_records_a_value() -> None:
    call, event = bash.extract(make_input("export OPENAI_API_KEY=sk-proj-abc123def456ghi789jkl0"))
    for stored in (call, event):
        assert "sk-proj" not in stored.data and "abc123" not in stored.data
    assert json.loads(event.data)["detail"] == "export OPENAI_API_KEY"
    assert json.loads(call.data)["command"].startswith("export OPENAI_API_KEY=[REDACTED")


# -- failures in successful output ------------------------------------------------------------------

ERR = "output_error"

ERROR_CASES = [
    (
        "python app.py",
        'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    main()\n'
        '  File "app.py", line 2, in main\n    raise ValueError("bad input")\nValueError: bad input\n',
        "",
        'ValueError: bad input (File "app.py", line 2, in main)',
    ),
    ("pytest -q", "..F.\n=== 1 failed, 3 passed in 0.05s ===", "", "1 failed, 3 passed in 0.05s"),
    (
        "pytest -q",
        "FAILED tests/test_a.py::test_x - AssertionError: assert 1 == 2\n1 failed, 1 error in 0.1s",
        "",
        "FAILED tests/test_a.py::test_x - AssertionError: assert 1 == 2\n1 failed, 1 error in 0.1s",
    ),
    ("npx jest", "Tests:       2 failed, 5 passed, 7 total", "", "Tests: 2 failed, 5 passed, 7 total"),
    ("npx vitest run", " Tests  1 failed | 9 passed (10)", "", "Tests 1 failed | 9 passed (10)"),
    ("npx mocha", "  3 passing\n  2 failing", "", "2 failing"),
    ("go test ./...", "--- FAIL: TestParse (0.00s)\nFAIL\tgithub.com/x/y\t0.01s\nFAIL", "", "--- FAIL: TestParse (0.00s)\nFAIL github.com/x/y 0.01s\nFAIL"),
    ("cargo test", "test result: FAILED. 3 passed; 1 failed; 0 ignored", "", "test result: FAILED. 3 passed; 1 failed; 0 ignored"),
    ("python -m unittest", "", "Ran 4 tests in 0.001s\n\nFAILED (failures=2, errors=1)", "FAILED (failures=2, errors=1)"),
    ("npm run build", "", "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1", "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1"),
    ("make", "", "main.c:3:5: error: expected ';' before '}' token\n1 error generated.", "main.c:3:5: error: expected ';' before '}' token\n1 error generated."),
    ("cargo build", "", "error[E0308]: mismatched types\n --> src/main.rs:2:5", "error[E0308]: mismatched types"),
    ("npx tsc --noEmit", "src/a.ts(3,7): error TS2322: Type 'string' is not assignable", "", "src/a.ts(3,7): error TS2322: Type 'string' is not assignable"),
    ("mypy ctxmode", "ctxmode/a.py:1: error: Name 'x' is not defined\nFound 1 error in 1 file", "", "ctxmode/a.py:1: error: Name 'x' is not defined\nFound 1 error in 1 file"),
    ("foo --version; true", "", "bash: foo: command not found", "bash: foo: command not found"),
    ("./run.sh", "", "thread 'main' panicked at src/main.rs:4:5:\nboom", "thread 'main' panicked at src/main.rs:4:5:"),
]  # fmt: skip


@pytest.mark.parametrize(("command", "stdout", "stderr", "error"), ERROR_CASES)
def test_failures_visible_in_successful_output(
    command: str, stdout: str, stderr: str, error: str
) -> None:
    got = [d for t, d in drafts(command, stdout=stdout, stderr=stderr) if t == ERR]
    assert got == [{"tool": "Bash", "key": command, "error": error}]


@pytest.mark.parametrize(
    ("command", "stdout", "stderr"),
    [
        ("pytest", "===== 12 passed, 0 failed in 1.2s =====", ""),
        ("pytest", "5 passed, 0 errors", ""),
        ("cargo test", "test result: ok. 5 passed; 0 failed; 0 ignored", ""),
        ("python -m unittest", "", "Ran 3 tests\n\nOK"),
        ("npx jest", "Tests: 7 passed, 7 total\nno failures", ""),
        ("ruff check .", "All checks passed!", ""),
        ("mypy .", "Success: no issues found in 3 source files", ""),
        ("go test ./...", "ok  \tgithub.com/x/y\t0.01s", ""),
        ("python -m unittest", "", "FAILED (failures=0)"),
        ("ls", "error_handler.py\nfailures.md\ntest_errors.py", ""),
        # displaying a file or a log is not a failure of this command
        ("cat build.log", "Traceback (most recent call last):\nValueError: old", ""),
        ("grep -rn 'error:' src/", "src/a.c:1: error: x", ""),
        ("git log --oneline", "abc123 Fix 2 failed tests", ""),
        ("tail -n 50 test.log | grep FAIL", "--- FAIL: TestX", ""),
    ],
)
def test_no_error_without_a_failure(command: str, stdout: str, stderr: str) -> None:
    assert [t for t, _ in drafts(command, stdout=stdout, stderr=stderr) if t == ERR] == []


def test_error_text_and_key_are_trimmed() -> None:
    command = "pytest " + "-k x " * 200
    stdout = ("noise line\n" * 5000) + "E" * 1000 + "\n" + "=== 3 failed in 9s ==="
    ((_, data),) = [d for d in drafts(command, stdout=stdout) if d[0] == ERR]
    assert len(data["key"]) <= bash.KEY_CHARS and data["key"].endswith("…")
    assert data["error"] == "3 failed in 9s"


def test_huge_output_is_scanned_at_head_and_tail_only() -> None:
    middle_failure = (
        "x\n" * 20000 + "Traceback (most recent call last):\nValueError: hidden\n" + "y\n" * 20000
    )
    assert drafts("python a.py", stdout=middle_failure) == []
    tail_failure = "x\n" * 50000 + "=== 1 failed in 1s ==="
    assert [t for t, _ in drafts("pytest", stdout=tail_failure)] == [ERR]


# -- nothing for plain commands ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat README.md",
        "echo hello",
        "pwd",
        "python -c 'print(1)'",
        "make test",
        "",
        "   ",
    ],
)
def test_plain_commands_give_no_event(command: str) -> None:
    assert drafts(command, stdout="fine") == []


def test_events_are_in_the_order_the_commands_ran() -> None:
    got = drafts(
        "cd app && npm ci && git checkout -b fix && git commit -am wip && cd ..",
        cwd=PROJECT,
        stdout="[fix 1234567] wip",
    )
    assert got == [
        (CWD, {"path": "/home/dev/proj/app"}),
        ("env_setup", {"kind": "install", "tool": "npm", "detail": "npm ci"}),
        (
            "git_branch",
            {"op": "checkout", "branch": "fix", "created": True, "dir": "/home/dev/proj/app"},
        ),
        (
            "git_commit",
            {
                "message": "wip",
                "sha": "1234567",
                "printed": "[fix 1234567] wip",
                "dir": "/home/dev/proj/app",
            },
        ),
        (CWD, {"path": PROJECT}),
    ]


def test_output_is_bounded() -> None:
    got = drafts("git add x && " * 500 + "true")
    assert len(got) == bash.MAX_DRAFTS


# -- never raises, always well-formed ------------------------------------------------------------------


def _contract_keys(type_: str) -> tuple[set[str], set[str], dict[str, set[str]]]:
    """(required keys, optional keys, allowed values) from the ``events.TYPES`` description."""
    spec = events.TYPES[type_][2]
    inner = spec[spec.index("{") + 1 : spec.index("}")]
    required: set[str] = set()
    optional: set[str] = set()
    allowed: dict[str, set[str]] = {}
    for part in inner.split(","):
        part = part.strip()
        if not part:
            continue
        opt = part.startswith("[")
        part = part.strip("[]")
        key, _, values = part.partition(":")
        key = key.strip()
        (optional if opt else required).add(key)
        if "|" in values:
            allowed[key] = {v.strip() for v in values.split("|")}
    return required, optional, allowed


def assert_well_formed(event: events.SessionEvent) -> None:
    assert event.type in events.TYPES
    category, priority, _ = events.TYPES[event.type]
    assert (event.category, event.priority) == (category, priority)
    assert len(event.data) <= BUDGETS.get(event.type, DATA_BUDGET)
    data = fastjson.loads(event.data)
    assert isinstance(data, dict)
    required, optional, allowed = _contract_keys(event.type)
    assert required <= set(data) <= required | optional, (event.type, data)
    for key, values in allowed.items():
        if key in data:
            assert data[key] in values, (event.type, key, data[key])
    for key, value in data.items():
        assert isinstance(value, int if key in ("exit", "bytes") else (str, bool))


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=50),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
SHELLISH = st.text(alphabet="gitcdommx -$()`'\"\\\n;&|<>{}#~=./EOF", max_size=200)


@settings(max_examples=250, deadline=None)
@given(
    command=st.one_of(SHELLISH, st.text(max_size=200), JSONISH),
    response=st.one_of(
        JSONISH,
        st.fixed_dictionaries(
            {"stdout": st.text(max_size=300), "stderr": st.text(max_size=100)},
            optional={"gitOperation": JSONISH},
        ),
    ),
    cwd=st.one_of(st.just(PROJECT), st.just("C:\\Users\\dev"), st.text(max_size=30)),
    transcript=st.one_of(st.none(), st.just(TRANSCRIPT), st.text(max_size=30)),
)
def test_never_raises_and_events_are_well_formed(
    command: Any, response: Any, cwd: str, transcript: Any
) -> None:
    inp = make_input(command, cwd=cwd, response=response, transcript=transcript)
    for event in bash.extract(inp):
        assert_well_formed(event)


GARBAGE_WORDS = [
    "git", "commit", "-m", "-am", "checkout", "-b", "branch", "cd", "..", "/tmp", "~", "-C",
    "export", "A=1", "source", "pip", "install", "&&", ";", "|", "(", ")", "$(", "`", "<<EOF",
    "'EOF", "'", '"', "-", "--", "pushd", "popd", "uv", "venv", "-F", "-c", "x=y", "\\",
    "\nEOF\n", "\n",
]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(words=st.lists(st.sampled_from(GARBAGE_WORDS), max_size=25))
def test_never_raises_on_command_shaped_garbage(words: list[str]) -> None:
    inp = make_input(
        " ".join(words), stdout="[main abc1234] x\nTraceback (most recent call last):\n"
    )
    for event in bash.extract(inp):
        assert_well_formed(event)


def test_non_string_command_gives_nothing() -> None:
    assert bash.extract(make_input(None)) == []
    assert bash.extract(make_input(["git", "status"])) == []


def test_what_git_printed_for_a_commit_is_masked_and_bounded() -> None:
    """``printed`` is cut from the masked output, and clipped: a token pasted in a commit
    subject is not kept, nor a subject of any length."""
    token = "ghp_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    got = extracted(
        "Bash",
        {"command": "git commit -am wip"},
        {"stdout": f"[main 1a2b3c4] wip {token}\n 1 file changed, 1 insertion(+)", "stderr": ""},
    )
    commit = next(data for type_, data in got if type_ == "git_commit")
    assert token not in json.dumps(got) and "[REDACTED:" in commit["printed"]
    assert commit["printed"].endswith("\n 1 file changed, 1 insertion(+)")
    got = extracted(
        "Bash",
        {"command": "git commit -am wip"},
        {"stdout": "[main 1a2b3c4] " + "x" * 2000, "stderr": ""},
    )
    commit = next(data for type_, data in got if type_ == "git_commit")
    assert len(commit["printed"]) <= bash.PRINTED_CHARS + 1
