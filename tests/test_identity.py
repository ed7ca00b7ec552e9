"""One memory per repository: hooks and CLI agree on the project wherever they start.

Real git repositories (``git init``, ``git worktree add``, ``git submodule add``,
``git clone --bare``): a subfolder, a symlink, a linked worktree, a submodule, a worktree
of a bare repository, a repository moved on disk and a folder outside git. In each a hook
writes and ``ctxmode search``/``sessions``/``dump`` read it back from elsewhere in the
repository. Then the merge of the stores older versions kept (per folder, per worktree):
nothing lost, nothing doubled, safe to cut short at any step.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxmode import paths
from ctxmode.cli import main
from ctxmode.events import SessionEvent
from ctxmode.store import Store
from ctxmode.store.merge import BACKUP_MARK, backups
from tests.hooktools import REPO, hook_env, run_hook

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

V2_FIXTURE = REPO / "tests" / "fixtures_old_schemas" / "v2.db"


def git(*args: str, cwd: Path) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    done = subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def make_repo(path: Path) -> Path:
    (path / "src" / "deep").mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=path)
    (path / "README").write_text(path.name)
    git("add", "README", cwd=path)
    git("commit", "-qm", "init", cwd=path)
    return path


def real(path: Path) -> str:
    return os.path.realpath(path)


def write(session: str, marker: str, cwd: Path, project: Path | None = None) -> None:
    """A hook call as Claude Code makes it: CLAUDE_PROJECT_DIR where the session started."""
    target = f"{cwd}/{marker}"
    payload = {
        "session_id": session,
        "cwd": str(cwd),
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": target, "content": ""},
        "tool_response": {"type": "create", "filePath": target},
    }
    env = hook_env(CLAUDE_PROJECT_DIR=str(project or cwd))
    done = run_hook("PostToolUse", payload, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def hook(event: str, session: str, cwd: Path, **fields: str) -> bytes:
    payload = {"session_id": session, "cwd": str(cwd), "hook_event_name": event, **fields}
    done = run_hook(event, payload, env=hook_env(CLAUDE_PROJECT_DIR=str(cwd)))
    assert (done.returncode, done.stderr) == (0, b"")
    return done.stdout


def cli(*args: str, cwd: Path | None = None) -> str:
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code == 0, result.output
    return result.output


def stores(root: Path) -> list[str]:
    folder = root / "sessions"
    return sorted(n for n in os.listdir(folder) if n.endswith(".db")) if folder.exists() else []


# ---------------------------------------------------------------- identify


def test_a_subfolder_and_a_symlink_are_the_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    link = tmp_path / "link"
    link.symlink_to(repo / "src")
    main_id = paths.identify_dir(str(repo))
    assert main_id.project == main_id.worktree == real(repo)
    assert main_id.gitdir == main_id.common_dir == real(repo / ".git")
    for start in (repo / "src" / "deep", link, link / "deep"):
        assert paths.identify_dir(str(start)) == main_id
    # CLAUDE_PROJECT_DIR wins over the cwd, as in the hooks.
    env = {"CLAUDE_PROJECT_DIR": str(link)}
    assert paths.identify(str(tmp_path), env) == main_id
    assert paths.head_branch(main_id.gitdir) == "main"


def test_a_linked_worktree_is_its_repository_with_its_own_tree_and_branch(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    git("worktree", "add", "-q", "-b", "feature", str(tmp_path / "repo-feature"), cwd=repo)
    found = paths.identify_dir(str(tmp_path / "repo-feature" / "src"))
    assert found.project == real(repo)
    assert found.worktree == real(tmp_path / "repo-feature")
    assert found.common_dir == real(repo / ".git")
    assert found.gitdir is not None and found.gitdir.startswith(real(repo / ".git" / "worktrees"))
    assert paths.head_branch(found.gitdir) == "feature"
    # Detached: 12 hex of the commit.
    git("checkout", "-q", "--detach", cwd=tmp_path / "repo-feature")
    assert paths.head_branch(found.gitdir) == git("rev-parse", "HEAD", cwd=repo)[:12]


def test_a_submodule_is_a_repository_of_its_own(tmp_path: Path) -> None:
    lib = make_repo(tmp_path / "lib")
    app = make_repo(tmp_path / "app")
    git("submodule", "add", "-q", str(lib), "vendor/lib", cwd=app)
    found = paths.identify_dir(str(app / "vendor" / "lib"))
    assert found.project == found.worktree == real(app / "vendor" / "lib")
    assert found.gitdir == real(app / ".git" / "modules" / "vendor" / "lib")
    assert paths.identify_dir(str(app / "src")).project == real(app)
    # A linked worktree of the submodule belongs to the submodule (core.worktree).
    git("worktree", "add", "-q", "-b", "sub-wt", str(tmp_path / "lib-wt"), cwd=app / "vendor/lib")
    assert paths.identify_dir(str(tmp_path / "lib-wt")).project == found.project


def test_a_worktree_of_a_bare_repository_is_keyed_by_the_bare_repository(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin")
    git("clone", "-q", "--bare", str(origin), str(tmp_path / "proj.git"), cwd=tmp_path)
    bare = tmp_path / "proj.git"
    git("worktree", "add", "-q", "-b", "one", str(tmp_path / "one"), cwd=bare)
    git("worktree", "add", "-q", "-b", "two", str(tmp_path / "two"), cwd=bare)
    one, two = (paths.identify_dir(str(tmp_path / n / "src")) for n in ("one", "two"))
    assert one.project == two.project == real(bare)
    assert (one.worktree, two.worktree) == (real(tmp_path / "one"), real(tmp_path / "two"))
    assert paths.head_branch(two.gitdir) == "two"


def test_outside_git_the_resolved_folder(tmp_path: Path) -> None:
    (tmp_path / "plain" / "sub").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(tmp_path / "plain")
    found = paths.identify_dir(str(tmp_path / "alias" / "sub"))
    assert found.project == real(tmp_path / "plain" / "sub")
    assert (found.worktree, found.gitdir, found.common_dir) == (None, None, None)
    assert paths.head_branch(found.gitdir) is None


@pytest.mark.parametrize(
    "text",
    ["", "not a gitdir line\n", "gitdir:\n", "gitdir: /nowhere/at/all\n"],
)
def test_an_odd_git_file_makes_the_folder_its_own_project(tmp_path: Path, text: str) -> None:
    (tmp_path / "p" / "sub").mkdir(parents=True)
    (tmp_path / "p" / ".git").write_text(text)
    found = paths.identify_dir(str(tmp_path / "p" / "sub"))
    assert found.project == real(tmp_path / "p")


# ---------------------------------------------------------------- hooks and CLI agree


@pytest.fixture
def family(tmp_path: Path) -> dict[str, Path]:
    """A repository, a subfolder of it, a symlink to it and two linked worktrees."""
    repo = make_repo(tmp_path / "repo")
    for name in ("feature", "hotfix"):
        git("worktree", "add", "-q", "-b", name, str(tmp_path / f"repo-{name}"), cwd=repo)
    (tmp_path / "link").symlink_to(repo)
    return {
        "main": repo,
        "subdir": repo / "src" / "deep",
        "symlink": tmp_path / "link",
        "feature": tmp_path / "repo-feature",
        "hotfix": tmp_path / "repo-hotfix",
    }


def test_hooks_anywhere_in_a_repository_write_the_one_store_the_cli_reads(
    family: dict[str, Path], data_root: Path
) -> None:
    for name, folder in family.items():
        write(f"s-{name}", f"{name}-marker.py", folder)
    assert stores(data_root) == [paths.repo_store_name(real(family["main"])) + ".db"]
    # Every command, started anywhere in the repository (or pointed at any folder of
    # it), reads every marker.
    for start in family.values():
        out = cli("search", "marker", "--limit", "20", cwd=start)
        assert all(f"{name}-marker.py" in out for name in family), out
        out = cli("search", "marker", "--limit", "20", "--project", str(start))
        assert all(f"{name}-marker.py" in out for name in family), out
    listed = json.loads(cli("sessions", "--json", cwd=family["hotfix"]))
    assert listed["project_dir"] == real(family["main"])
    rows = {row["session_id"]: row for row in listed["sessions"]}
    assert rows["s-feature"]["worktree"] == real(family["feature"])
    assert rows["s-feature"]["branch"] == "feature"
    assert rows["s-subdir"]["worktree"] == real(family["main"])
    assert rows["s-subdir"]["branch"] == "main"
    with Store.open(paths.store_path(str(family["main"]), os.environ), readonly=True) as store:
        meta = {m["session_id"]: m for m in store.sessions()}
    assert meta["s-subdir"]["cwd"] == str(family["subdir"])
    assert meta["s-subdir"]["client"] == "claude_code"
    assert meta["s-symlink"]["project_dir"] == real(family["main"])


def _run(*args: str, cwd: Path) -> tuple[int, str, str]:
    """``ctxmode ARGS`` started in ``cwd``: exit code, stdout, stderr."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


def test_outside_git_a_subfolder_reads_the_folder_the_session_started_in(
    tmp_path: Path, data_root: Path
) -> None:
    """Claude Code started in ``plain`` (no git): its hooks record under ``plain`` from
    any folder the work goes to; the CLI started in a subfolder finds that store, and
    says on stderr which it read and why."""
    plain = tmp_path / "plain"
    (plain / "src" / "deep").mkdir(parents=True)
    write("s-plain", "plain-marker.py", plain / "src", project=plain)
    assert stores(data_root) == [paths.repo_store_name(real(plain)) + ".db"]
    note = (
        f"ctxmode: {real(plain / 'src' / 'deep')} is not in a git repository and has no "
        f"store of its own: reading the one of {real(plain)}, the nearest folder above it "
        "where sessions were recorded\n"
    )
    for args in (
        ("search", "plain-marker"),
        ("dump",),
        ("sessions",),
        ("search", "plain-marker", "--project", str(plain / "src" / "deep")),
    ):
        code, out, err = _run(*args, cwd=plain / "src" / "deep")
        assert (code, err) == (0, note), (args, out, err)
        assert "plain-marker.py" in out or "s-plain" in out, (args, out)
    listed = json.loads(_run("sessions", "--json", cwd=plain / "src" / "deep")[1])
    assert listed["project_dir"] == real(plain)
    # Its own folder reads its own store: no note.
    assert _run("search", "plain-marker", cwd=plain)[2] == ""
    # Deleting a whole store takes the folder named, never one found above it.
    code, out, err = _run("purge", "--project", "--yes", cwd=plain / "src")
    assert (code, out, err) == (0, f"Nothing recorded for {real(plain / 'src')}.\n", "")
    assert stores(data_root) == [paths.repo_store_name(real(plain)) + ".db"]


def test_outside_git_nothing_recorded_says_where_it_looked(tmp_path: Path, data_root: Path) -> None:
    (tmp_path / "plain" / "sub").mkdir(parents=True)
    code, out, err = _run("search", "x", cwd=tmp_path / "plain" / "sub")
    folder = real(tmp_path / "plain" / "sub")
    assert (code, out) == (1, "")
    assert err == (
        f"Error: no ctxmode store for {folder} "
        f"(expected {paths.store_file(str(data_root), folder)}); nothing has been recorded "
        "yet in this folder or any folder above it (outside git, a session is recorded "
        "under the folder its client started in)\n"
    )


def test_a_repository_never_reads_a_store_above_it(tmp_path: Path, data_root: Path) -> None:
    # A recorded folder outside git with a repository inside: the repository is its own
    # project, recorded or not; only folders outside git look above themselves.
    plain = tmp_path / "plain"
    plain.mkdir()
    write("s-plain", "plain-marker.py", plain)
    repo = make_repo(plain / "repo")
    code, _, err = _run("search", "plain-marker", cwd=repo / "src")
    assert code == 1
    assert err.startswith(f"Error: no ctxmode store for {real(repo)} ")
    assert err.endswith("nothing has been recorded for this repository yet\n")


def test_worktree_narrows_sessions_dump_and_search(
    family: dict[str, Path], data_root: Path
) -> None:
    for name in ("main", "feature", "hotfix"):
        write(f"s-{name}", f"{name}-marker.py", family[name])
    listed = json.loads(cli("sessions", "--json", "--worktree", "here", cwd=family["feature"]))
    assert [row["session_id"] for row in listed["sessions"]] == ["s-feature"]
    text = cli("sessions", cwd=family["main"])
    assert "repo-feature@feature" in text and ".@main" in text
    dumped = json.loads(
        cli("dump", "--json", "--worktree", str(family["hotfix"]), cwd=family["main"])
    )
    assert [s["session_id"] for s in dumped["sessions"]] == ["s-hotfix"]
    assert dumped["sessions"][0]["branch"] == "hotfix"
    out = cli("search", "marker", "--worktree", str(family["main"]), cwd=family["hotfix"])
    assert "main-marker.py" in out and "feature-marker.py" not in out
    # A folder of another repository, or outside git, is refused.
    other = make_repo(family["main"].parent / "other")
    for bad in (str(other), str(family["main"].parent)):
        result = CliRunner().invoke(main, ["sessions", "--project", str(family["main"]),
                                           "--worktree", bad])  # fmt: skip
        assert result.exit_code == 2 and "--worktree" in result.output


def test_a_snapshot_lookup_runs_from_any_worktree(family: dict[str, Path]) -> None:
    write("s1", "lookup-marker.py", family["feature"])
    hook("SessionEnd", "s1", family["feature"], reason="other")
    with Store.open(paths.store_path(str(family["main"]), os.environ), readonly=True) as store:
        snapshot = store.resumes("s1")[0]["snapshot"]
    assert f"search --project {real(family['main'])}" in snapshot
    for start in ("main", "hotfix", "subdir"):
        out = cli("search", "lookup-marker", "--project", real(family["main"]), cwd=family[start])
        assert "lookup-marker.py" in out


def test_startup_handover_prefers_the_same_worktree(family: dict[str, Path]) -> None:
    (family["main"] / ".claude").mkdir()
    (family["main"] / ".claude" / "ctxmode.json").write_text('{"inject_on_startup": true}')
    for name in ("feature", "hotfix"):
        (family[name] / ".claude").mkdir()
        (family[name] / ".claude" / "ctxmode.json").write_text('{"inject_on_startup": true}')
    for name in ("feature", "main", "hotfix"):  # hotfix's snapshot is the newest
        write(f"end-{name}", f"{name}-end.py", family[name])
        hook("SessionEnd", f"end-{name}", family[name], reason="other")
    out = hook("SessionStart", "new-feature", family["feature"], source="startup")
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "feature-end.py" in context and "hotfix-end.py" not in context
    # Without one of its own worktree, a session gets the repository's newest.
    out = hook("SessionStart", "new-feature-2", family["feature"], source="startup")
    assert "hotfix-end.py" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_a_folder_outside_git(tmp_path: Path, data_root: Path) -> None:
    (tmp_path / "notes" / "sub").mkdir(parents=True)
    write("n1", "note-marker.txt", tmp_path / "notes")
    out = cli("search", "note-marker", cwd=tmp_path / "notes")
    assert "note-marker.txt" in out
    listed = json.loads(cli("sessions", "--json", cwd=tmp_path / "notes"))
    assert listed["sessions"][0]["worktree"] is None
    assert stores(data_root) == [paths.repo_store_name(real(tmp_path / "notes")) + ".db"]


def test_a_moved_repository_keeps_its_memory(tmp_path: Path, data_root: Path) -> None:
    repo = make_repo(tmp_path / "old-place" / "repo")
    write("before", "before-move.py", repo)
    hook("SessionEnd", "before", repo, reason="other")
    (tmp_path / "new-place").mkdir()
    moved = tmp_path / "new-place" / "repo"
    shutil.move(str(repo), str(moved))
    write("after", "after-move.py", moved)
    assert stores(data_root) == [paths.repo_store_name(real(moved)) + ".db"]
    out = cli("search", "move", cwd=moved)
    assert "before-move.py" in out and "after-move.py" in out
    # The old store is a backup now, and its unclaimed snapshot went along, once.
    assert len(backups(paths.store_path(str(moved), os.environ))) == 1
    out = hook("SessionStart", "next", moved, source="resume")
    assert "before-move.py" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert hook("SessionStart", "next-2", moved, source="resume") == b""


# ---------------------------------------------------------------- merging old stores


def old_store(root: Path, folder: Path, session: str, marker: str, *, end: bool = False) -> str:
    """A store as 0.2 made it: named by ``paths.store_name`` of the folder as given."""
    path = str(root / "sessions" / (paths.store_name(str(folder)) + ".db"))
    with Store.open(path) as store:
        event = SessionEvent("file_write", "file", 1, json.dumps({"path": marker}))
        store.add_events(session, [event], source_hook="PostToolUse", project_dir=str(folder))
        store.set_meta("incident:2026-01-01T00:00:00.000Z", f"an incident of {marker}")
        if end:
            store.save_resume(session, f"<session_resume>{marker}</session_resume>", 1, kind="end")
    return path


def v2_store(root: Path, folder: Path) -> str:
    """The frozen schema-2 store, its sessions recorded in ``folder``."""
    path = root / "sessions" / (paths.store_name(str(folder)) + ".db")
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(V2_FIXTURE, path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE session_meta SET project_dir = ?", (str(folder),))
    return str(path)


def contents(path: str) -> tuple[list[tuple[object, ...]], ...]:
    """What a store holds, independent of row ids."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        events = conn.execute(
            "SELECT session_id, type, data, created_at FROM session_events ORDER BY 1, 4, 3"
        ).fetchall()
        columns = {row[1] for row in conn.execute("PRAGMA table_info(session_meta)")}
        tree = "worktree" if "worktree" in columns else "NULL"  # schema 2 has none
        sessions = conn.execute(
            f"SELECT session_id, event_count, {tree} FROM session_meta ORDER BY 1"
        ).fetchall()
        resumes = conn.execute(
            "SELECT session_id, kind, compact_seq, consumed, consumed_by, snapshot "
            "FROM session_resume ORDER BY 1, 2, 3"
        ).fetchall()
        meta = conn.execute(
            "SELECT key, value FROM store_meta WHERE key LIKE 'incident:%' ORDER BY 1"
        ).fetchall()
    return events, sessions, resumes, meta


def expected_rows(*paths_: str) -> tuple[int, int, int]:
    events = sessions = resumes = 0
    for path in paths_:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            events += conn.execute("SELECT count(*) FROM session_events").fetchone()[0]
            sessions += conn.execute("SELECT count(*) FROM session_meta").fetchone()[0]
            resumes += conn.execute("SELECT count(*) FROM session_resume").fetchone()[0]
    return events, sessions, resumes


@pytest.fixture
def old_family(family: dict[str, Path], data_root: Path) -> dict[str, str]:
    """0.2's stores of one repository: the main folder, a subfolder, the symlink, a
    worktree (its ``__`` name) and the frozen schema-2 store (recorded in hotfix)."""
    made = {
        "main": old_store(data_root, family["main"], "old-main", "main-old.py", end=True),
        "subdir": old_store(data_root, family["subdir"], "old-sub", "sub-old.py"),
        "symlink": old_store(data_root, family["symlink"], "old-link", "link-old.py"),
        "feature": old_store(data_root, family["feature"], "old-feat", "feat-old.py", end=True),
        "v2": v2_store(data_root, family["hotfix"]),
    }
    assert "__" in os.path.basename(made["feature"])
    # Another repository's old store is left alone.
    other = make_repo(family["main"].parent / "other")
    made["other"] = old_store(data_root, other, "other-1", "other-old.py")
    return made


def test_old_stores_merge_into_the_repository_store_once(
    family: dict[str, Path], old_family: dict[str, str], data_root: Path
) -> None:
    ours = [p for name, p in old_family.items() if name != "other"]
    events, sessions, resumes = expected_rows(*ours)
    write("new-1", "new-marker.py", family["feature"])
    store = paths.store_path(str(family["main"]), os.environ)
    merged = contents(store)
    assert len(merged[0]) == events + 1 and len(merged[1]) == sessions + 1
    assert len(merged[2]) == resumes
    assert len([row for row in merged[3] if "an incident of" in row[1]]) == 4
    # Old sessions learn the worktree their folder is in.
    worktrees = {sid: tree for sid, _, tree in merged[1]}
    assert worktrees["old-feat"] == real(family["feature"])
    assert worktrees["old-sub"] == real(family["main"])
    # The old files are backups now; the other repository's store is untouched.
    assert sorted(os.path.basename(g[0]).split(BACKUP_MARK)[0] for g in backups(store)) == sorted(
        os.path.basename(p) for p in ours
    )
    assert os.path.exists(old_family["other"])
    assert stores(data_root) == sorted(
        [os.path.basename(store), os.path.basename(old_family["other"])]
    )
    # Idempotent: more hooks and commands change nothing of it (the same call again is
    # a duplicate the store drops).
    write("new-1", "new-marker.py", family["feature"])
    cli("sessions", cwd=family["hotfix"])
    assert contents(store)[:3] == (merged[0], merged[1], merged[2])
    # Every old marker is found from every worktree.
    for start in family.values():
        out = cli("search", "old.py", "--limit", "50", cwd=start)
        for marker in ("main-old.py", "sub-old.py", "link-old.py", "feat-old.py"):
            assert marker in out
        assert "other-old.py" not in out
    # The unclaimed end snapshots stay claimable exactly once (feature's own first).
    claimed = []
    for k in range(3):
        out = hook("SessionStart", f"fresh-{k}", family["feature"], source="resume")
        claimed.append(out)
    texts = [json.loads(o)["hookSpecificOutput"]["additionalContext"] for o in claimed if o]
    unclaimed_v2 = sum(1 for r in merged[2] if r[0] not in ("old-main", "old-feat") and not r[3])
    assert len(texts) == min(3, 2 + unclaimed_v2)
    assert "feat-old.py" in texts[0]


def test_the_cli_merges_too_before_any_hook(
    family: dict[str, Path], old_family: dict[str, str]
) -> None:
    out = cli("search", "old.py", "--limit", "50", cwd=family["feature"])
    assert "main-old.py" in out and "feat-old.py" in out


# A merge cut short: the process dies (os._exit, no clean-up) at a fixed step.
KILL = """
import os, sys
from ctxmode import paths
from ctxmode.store import merge

step = sys.argv[1]
if step == "after-backups":
    merge._build = lambda *a, **k: os._exit(9)
elif step == "before-commit":
    real_import = merge._import_spools
    def die(*a, **k):
        real_import(*a, **k)
        os._exit(9)
    merge._import_spools = die
elif step == "after-commit":
    real_rename = os.rename
    def rename(src, dst):
        real_rename(src, dst)
        if dst.endswith(".db") and os.path.basename(dst).startswith(paths.STORE_PREFIX):
            os._exit(9)
    os.rename = rename
ident = paths.identify_dir(sys.argv[2])
merge.ensure_store(paths.store_path(sys.argv[2], os.environ), ident, os.environ["CTXMODE_HOME"])
"""


@pytest.mark.parametrize("step", ["after-backups", "before-commit", "after-commit"])
def test_a_merge_cut_short_loses_and_doubles_nothing(
    step: str, family: dict[str, Path], old_family: dict[str, str], data_root: Path
) -> None:
    ours = [p for name, p in old_family.items() if name != "other"]
    before = {p: contents(p) for p in ours}
    events, sessions, resumes = expected_rows(*ours)
    done = subprocess.run(
        [sys.executable, "-c", KILL, step, str(family["main"])],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        check=False,
    )
    assert done.returncode == 9, done.stderr
    store = paths.store_path(str(family["main"]), os.environ)
    assert os.path.exists(store) is (step == "after-commit")
    # The next hook finishes (or redoes) the merge.
    write("later", "later-marker.py", family["feature"])
    merged = contents(store)
    assert (len(merged[0]), len(merged[1]), len(merged[2])) == (
        events + 1,
        sessions + 1,
        resumes,
    )
    for old in ours:  # every old store kept, unchanged, under its backup name
        (group,) = [g for g in backups(store) if g[0].startswith(old + BACKUP_MARK)]
        assert contents(group[0]) == before[old]
    assert not [n for n in os.listdir(data_root / "sessions") if ".new-" in n]


def test_purge_removes_a_session_from_the_backups(
    family: dict[str, Path], old_family: dict[str, str]
) -> None:
    write("new-1", "new-marker.py", family["main"])
    store = paths.store_path(str(family["main"]), os.environ)
    out = cli("purge", "--session", "old-feat", "--project", str(family["main"]))
    assert "merged backup" in out
    for group in backups(store):
        for path in group:
            with open(path, "rb") as handle:
                assert b"old-feat" not in handle.read()
    # The backups of other sessions keep them.
    (main_backup,) = [g[0] for g in backups(store) if g[0].startswith(old_family["main"])]
    assert contents(main_backup)[1][0][0] == "old-main"
    out = cli("search", "old.py", "--limit", "50", cwd=family["main"])
    assert "feat-old.py" not in out and "main-old.py" in out


def test_an_old_stores_spooled_events_come_along_once(
    family: dict[str, Path], old_family: dict[str, str], data_root: Path
) -> None:
    from ctxmode import spool

    event = SessionEvent("file_write", "file", 1, json.dumps({"path": "spooled-old.py"}))
    spool.put(str(data_root), old_family["feature"], "old-feat", [event])
    old_spool = paths.spool_file(str(data_root), old_family["feature"])
    assert os.path.exists(old_spool)
    write("new-1", "new-marker.py", family["main"])
    assert not [n for n in os.listdir(data_root / "spool") if n.startswith(
        os.path.basename(old_spool))]  # fmt: skip
    out = cli("search", "spooled-old", cwd=family["feature"])
    assert out.count("spooled-old.py") == 1


def test_doctor_lists_the_merged_backups(
    family: dict[str, Path], old_family: dict[str, str]
) -> None:
    write("new-1", "new-marker.py", family["main"])
    result = CliRunner().invoke(main, ["doctor", "--project", str(family["feature"])])
    assert "5 older stores of this repository were merged into its store" in result.output


@pytest.mark.parametrize(
    ("head", "branch"),
    [
        ("ref: refs/heads/main\n", "main"),
        ("ref:refs/heads/no-space\n", "no-space"),  # git reads it without the space too
        ("ref: refs/remotes/origin/dev\n", "refs/remotes/origin/dev"),  # not a local branch
        ("0123456789abcdef0123456789abcdef01234567\n", "0123456789ab"),  # detached
        ("\n", None),
    ],
)
def test_head_branch_reads_the_head_file(tmp_path: Path, head: str, branch: str | None) -> None:
    (tmp_path / "HEAD").write_text(head)
    assert paths.head_branch(str(tmp_path)) == branch


def test_identify_takes_the_cwd_it_is_given_not_the_process_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = tmp_path / "given"
    given.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert paths.identify(str(given), {}).project == str(given.resolve())
    assert paths.identify("", {}).project == str(elsewhere.resolve())


# ---------------------------------------------------------------- hostile pointer files


def _worktree_pointing_at(tmp_path: Path, target: Path) -> Path:
    """A real linked worktree whose git dir's ``commondir`` is replaced by a symlink to
    ``target``: any file of the machine."""
    repo = make_repo(tmp_path / "repo")
    tree = tmp_path / "wt"
    git("worktree", "add", "-q", "-b", "feature", str(tree), cwd=repo)
    gitdir = Path(paths.identify_dir(str(tree)).gitdir or "")
    assert (gitdir / "commondir").is_file()
    (gitdir / "commondir").unlink()
    (gitdir / "commondir").symlink_to(target)
    return tree


SECRET_FILES = {
    "one line": "ghp_NOT_A_PATH_{m}\n",
    "many lines": "root:x:0:0:root:/root:/bin/bash\nsecret {m}\n",
    "a NUL": "../..\0{m}\n",
    "a path-like line to no git dir": "../../{m}\n",
    "binary": "\xff\xfe{m}",
}


@pytest.mark.parametrize("kind", sorted(SECRET_FILES))
def test_a_commondir_linked_to_any_file_is_never_read_into_a_key(
    tmp_path: Path, data_root: Path, kind: str
) -> None:
    """Issue 29: the file's text never becomes the project key, a message or a row."""
    marker = "MARK" + os.urandom(6).hex()
    target = tmp_path / "elsewhere.txt"
    target.write_bytes(SECRET_FILES[kind].format(m=marker).encode("utf-8", "surrogateescape"))
    tree = _worktree_pointing_at(tmp_path, target)
    found = paths.identify_dir(str(tree))
    assert found.project == real(tree) and found.common_dir is None
    assert marker not in repr(found)
    # The CLI names the folder, not what the file says; one Error: line, no traceback.
    done = subprocess.run(
        [sys.executable, "-m", "ctxmode", "search", "--project", str(tree), "x"],
        capture_output=True, text=True, env=hook_env(), timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout == "", done
    assert done.stderr.startswith("Error: no ctxmode store for ") and "Traceback" not in done.stderr
    assert marker not in done.stderr
    # A hook run there records the folder, nothing of the file.
    hook("UserPromptSubmit", "s-odd", tree, prompt="fix the parser")
    blob = b"".join(p.read_bytes() for p in data_root.rglob("*") if p.is_file())
    assert marker.encode() not in blob and b"s-odd" in blob


def test_a_git_file_or_head_that_is_no_pointer_is_not_read(tmp_path: Path) -> None:
    marker = "MARK" + os.urandom(6).hex()
    secret = tmp_path / "secret.txt"
    secret.write_text(f"gitdir: {tmp_path}\nmore {marker}\n")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / ".git").symlink_to(secret)
    found = paths.identify_dir(str(tmp_path / "p"))
    assert found == paths.Identity(real(tmp_path / "p"), real(tmp_path / "p"))
    head = tmp_path / "g" / "HEAD"
    head.parent.mkdir()
    for text in (f"ref: refs/heads/x\n{marker}\n", f"{marker}\n", "ref: refs/heads/a\0b\n"):
        head.write_text(text)
        assert paths.head_branch(str(head.parent)) is None, text


def _folder_state(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir()}


@pytest.mark.parametrize("in_git", [True, False])
def test_a_lookup_for_a_folder_without_a_store_leaves_the_other_stores_alone(
    tmp_path: Path, data_root: Path, in_git: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29: ``search --project DIR`` where DIR has no store opened every store (to
    look for one to merge) and left -wal/-shm beside them. A command that reads opens
    only the stores of older versions (none here), makes and leaves nothing."""
    from ctxmode.store import merge

    for n in range(3):
        hook("UserPromptSubmit", f"other-{n}", make_repo(tmp_path / f"other{n}"), prompt="hi")
    folder = data_root / "sessions"
    before = _folder_state(folder)
    assert len([n for n in before if n.endswith(".db")]) == 3
    new = make_repo(tmp_path / "new") if in_git else tmp_path / "plain"
    new.mkdir(exist_ok=True)
    opened: list[str] = []
    real_inspect = merge._inspect
    monkeypatch.setattr(merge, "_inspect", lambda path: opened.append(path) or real_inspect(path))
    result = CliRunner().invoke(main, ["search", "--project", str(new), "x"])
    assert result.exit_code == 1 and "no ctxmode store for" in result.output, result.output
    assert opened == []
    assert _folder_state(folder) == before
