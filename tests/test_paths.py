"""Project identity, data root, file modes and the legacy-name rename (ctxmode.paths)."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys

import platformdirs
import pytest

from ctxmode import paths

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    # Nothing in this file may write under the real home.
    monkeypatch.setenv("CTXMODE_HOME", str(tmp_path / "ctxmode-home"))


def race(script: str, n: int, **fmt) -> list[str]:
    """Run ``script`` in ``n`` processes released at once (see tests/test_store.py)."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", PRELUDE + script.format(i=i, **fmt)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    for p in procs:
        assert p.stdout.readline() == "ready\n"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert (p.returncode, err) == (0, ""), err
        results.append(out.strip())
    return results


PRELUDE = f"""
import sys
sys.path.insert(0, {REPO!r})
def wait_for_go():
    print("ready", flush=True)
    sys.stdin.readline()
"""


def h(text: str, n: int = 16) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# ------------------------------------------------------------------ project_dir


def test_project_dir_prefers_claude_project_dir(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    env = {"CLAUDE_PROJECT_DIR": str(tmp_path / "elsewhere") + "/"}
    assert paths.project_dir(str(tmp_path / "repo"), env) == str(tmp_path / "elsewhere")


def test_project_dir_ignores_empty_claude_project_dir(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src" / "pkg").mkdir(parents=True)
    cwd = str(tmp_path / "repo" / "src" / "pkg")
    assert paths.project_dir(cwd, {"CLAUDE_PROJECT_DIR": ""}) == str(tmp_path / "repo")


@pytest.mark.parametrize(
    ("layout", "cwd", "expected"),
    [
        # .git folder two levels up
        ({"repo/.git/": None, "repo/src/app/": None}, "repo/src/app", "repo"),
        # cwd is the root itself, given with a trailing slash
        ({"repo/.git/": None}, "repo/", "repo"),
        # a .git *file* (linked worktree / submodule) also marks a root
        ({"wt/.git": "gitdir: /x/.git/worktrees/wt\n", "wt/lib/": None}, "wt/lib", "wt"),
        # the nearest root wins (a nested repo inside another)
        (
            {"outer/.git/": None, "outer/inner/.git/": None, "outer/inner/a/": None},
            "outer/inner/a",
            "outer/inner",
        ),
        # no git anywhere: the cwd itself
        ({"plain/sub/": None}, "plain/sub", "plain/sub"),
        # ".." is normalised away
        ({"repo/.git/": None, "repo/src/": None}, "repo/src/../src", "repo"),
    ],
)
def test_project_dir_walks_up_to_git_root(tmp_path, layout, cwd, expected):
    for rel, content in layout.items():
        target = tmp_path / rel
        if content is None:
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
    assert paths.project_dir(str(tmp_path / cwd), {}) == str(tmp_path / expected)


# ------------------------------------------------------------------ canonical / store_name


@pytest.mark.parametrize(
    ("path", "platform", "expected"),
    [
        ("/Users/Me/My App/", "darwin", "/users/me/my app"),
        ("/Users/Me/My App", "linux", "/Users/Me/My App"),
        ("/home/me/app/../lib//x/", "linux", "/home/me/lib/x"),
        ("/", "linux", "/"),
        ("/Volumes/Work/Proj", "darwin", "/volumes/work/proj"),
        ("C:\\Users\\Me\\Proj\\", "win32", "c:/users/me/proj"),
        ("C:/Users/Me/Proj", "win32", "c:/users/me/proj"),
        ("c:\\Users\\me\\a\\..\\Proj", "win32", "c:/users/me/proj"),
        ("C:\\", "win32", "c:/"),
        ("\\\\server\\share\\Proj", "win32", "//server/share/proj"),
    ],
)
def test_canonical(path, platform, expected):
    assert paths.canonical(path, platform) == expected


def test_canonical_makes_relative_paths_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert paths.canonical("a/b/", "linux") == f"{tmp_path}/a/b"


@pytest.mark.parametrize(
    ("a", "b", "platform", "same"),
    [
        ("/Users/Me/App", "/users/me/app/", "darwin", True),
        ("C:\\Work\\App", "c:/work/app", "win32", True),
        ("/home/Me/App", "/home/me/app", "linux", False),
    ],
)
def test_store_name_case_folding(a, b, platform, same):
    assert (paths.store_name(a, platform) == paths.store_name(b, platform)) is same


@pytest.mark.parametrize("platform, same", [("darwin", True), ("win32", True), ("linux", False)])
def test_repo_store_name_is_prefixed_and_folds_case_where_names_do(tmp_path, platform, same):
    project = str(tmp_path / "Proj")
    assert paths.repo_store_name(project, "linux") == "repo-" + h(project)
    folded = paths.repo_store_name(project, platform) == paths.repo_store_name(
        project.lower(), platform
    )
    assert folded is same


def test_store_name_is_sha256_of_canonical_path(tmp_path):
    project = str(tmp_path / "Proj")
    assert paths.store_name(project, "linux") == h(project)
    assert paths.store_name(project, "darwin") == h(project.lower())


def make_worktree(tmp_path, gitdir_line: str):
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    wt = tmp_path / "feature"
    wt.mkdir()
    (wt / ".git").write_text(gitdir_line)
    return main, wt


def test_store_name_linked_worktree_gets_suffix(tmp_path):
    main, wt = make_worktree(tmp_path, f"gitdir: {tmp_path}/main/.git/worktrees/feature\n")
    gitdir = f"{tmp_path}/main/.git/worktrees/feature"
    assert paths.worktree_gitdir(str(wt)) == gitdir
    assert paths.store_name(str(wt), "linux") == h(str(wt)) + "__" + h(gitdir, 8)
    # the main checkout (a .git folder) has no suffix
    assert paths.store_name(str(main), "linux") == h(str(main))


def test_store_name_relative_gitdir(tmp_path):
    _, wt = make_worktree(tmp_path, "gitdir: ../main/.git/worktrees/feature")
    gitdir = f"{tmp_path}/main/.git/worktrees/feature"
    assert paths.store_name(str(wt), "linux") == h(str(wt)) + "__" + h(gitdir, 8)


@pytest.mark.parametrize(
    "content",
    [
        "gitdir: /src/super/.git/modules/lib\n",  # a submodule, not a worktree
        "not a gitdir line\n",
        "gitdir:\n",
        "",
    ],
)
def test_store_name_no_suffix_for_other_git_files(tmp_path, content):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / ".git").write_text(content)
    assert paths.store_name(str(tmp_path / "p"), "linux") == h(str(tmp_path / "p"))


def test_two_worktrees_of_one_repo_get_two_stores(tmp_path):
    main = tmp_path / "main"
    for name in ("a", "b"):
        (main / ".git" / "worktrees" / name).mkdir(parents=True)
        (tmp_path / name).mkdir()
        (tmp_path / name / ".git").write_text(f"gitdir: {main}/.git/worktrees/{name}\n")
    names = {paths.store_name(str(tmp_path / n), "linux") for n in ("a", "b")}
    assert len(names) == 2 and all("__" in n for n in names)


# ------------------------------------------------------------------ data root


@pytest.mark.parametrize(
    "xdg",
    [None, "", "/tmp/xdg-data", "/tmp/xdg-data/", "relative/xdg"],
)
@pytest.mark.parametrize("home", [None, "/home/someone"])
def test_data_root_matches_platformdirs(monkeypatch, xdg, home):
    monkeypatch.delenv("CTXMODE_HOME", raising=False)
    if xdg is None:
        monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_DATA_HOME", xdg)
    if home is not None:
        monkeypatch.setenv("HOME", home)
    expected = platformdirs.user_data_dir("ctxmode", appauthor=False)
    assert paths.data_root(os.environ) == expected


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({"CTXMODE_HOME": "/srv/ctx/", "HOME": "/h"}, "linux", "/srv/ctx"),
        ({"CTXMODE_HOME": "~/ctx", "HOME": "/h/me"}, "linux", "/h/me/ctx"),
        ({"HOME": "/h/me"}, "linux", "/h/me/.local/share/ctxmode"),
        ({"HOME": "/h/me", "XDG_DATA_HOME": "/data"}, "linux", "/data/ctxmode"),
        ({"HOME": "/Users/me"}, "darwin", "/Users/me/Library/Application Support/ctxmode"),
        ({"HOME": "/Users/me", "XDG_DATA_HOME": "/x"}, "darwin", "/x/ctxmode"),
        (
            {"HOME": "/Users/me", "XDG_DATA_HOME": "rel"},
            "darwin",
            "/Users/me/Library/Application Support/ctxmode",
        ),
        # (os.path.join: on a POSIX host the simulated Windows path is joined with "/")
        (
            {"LOCALAPPDATA": "C:\\Users\\me\\AppData\\Local"},
            "win32",
            os.path.join("C:\\Users\\me\\AppData\\Local", "ctxmode"),
        ),
    ],
)
def test_data_root_table(env, platform, expected):
    assert paths.data_root(env, platform) == expected


def test_store_path_and_log_dir(tmp_path):
    env = {"CTXMODE_HOME": str(tmp_path / "root")}
    project = str(tmp_path / "proj")
    # One store per repository, named by its key (here the folder itself: no git).
    assert paths.store_path(project, env) == f"{tmp_path}/root/sessions/repo-{h(project)}.db"
    assert paths.log_dir(env) == f"{tmp_path}/root/logs"


# ------------------------------------------------------------------ modes


def test_ensure_dir_creates_every_missing_level_0700(tmp_path):
    old = os.umask(0o022)
    try:
        paths.ensure_dir(str(tmp_path / "a" / "b" / "c"))
    finally:
        os.umask(old)
    for rel in ("a", "a/b", "a/b/c"):
        assert mode(tmp_path / rel) == 0o700, rel
    # an existing folder keeps its mode: it is not ours to change
    (tmp_path / "shared").mkdir(mode=0o755)
    os.chmod(tmp_path / "shared", 0o755)
    paths.ensure_dir(str(tmp_path / "shared" / "x"))
    assert mode(tmp_path / "shared") == 0o755
    assert mode(tmp_path / "shared" / "x") == 0o700


def test_private_files_are_0600_whatever_the_umask(tmp_path):
    old = os.umask(0)
    try:
        assert paths.create_private_file(str(tmp_path / "f")) is True
        assert paths.create_private_file(str(tmp_path / "f")) is False
        fd = paths.open_private(str(tmp_path / "log"))
        os.write(fd, b"x")
        os.close(fd)
    finally:
        os.umask(old)
    assert mode(tmp_path / "f") == 0o600
    assert mode(tmp_path / "log") == 0o600
