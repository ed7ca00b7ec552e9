"""Where ctxmode keeps its data, and which store belongs to which project.

Every hook and every CLI command goes through these functions, so a project always
maps to the same file: :func:`identify` decides the project (one per repository, all
its worktrees included), :func:`store_file` names its store. Hot path: stdlib ``os``/``sys`` only; ``platformdirs`` is
re-implemented below (importing it costs ~28 ms per hook), and a test keeps the two
in agreement.

Long on purpose: the project's identity (git's own files, read by hand and only as git
writes them), the data root's rule and the private folders are what every hook and every
command must agree on, and every hook imports this module (another costs an import).
"""

from __future__ import annotations

import os
import sys

from ctxmode.hashing import sha256_hex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

APP_NAME = "ctxmode"
DIR_MODE = 0o700
FILE_MODE = 0o600
# One lock file per sessions folder, taken only on the rare paths that create,
# rename or move aside a store (never on the normal open of an existing store).
LOCK_NAME = ".ctxmode.lock"


def project_dir(cwd: str, env: Mapping[str, str]) -> str:
    """``CLAUDE_PROJECT_DIR``, else the nearest ancestor of ``cwd`` holding ``.git``, else ``cwd``.

    The folder as the user names it (symlinks kept): where the installer puts project
    settings. Which *store* a folder uses is :func:`identify`'s answer, not this one.
    """
    explicit = env.get("CLAUDE_PROJECT_DIR")
    if explicit:
        return _abs(explicit)
    start = _abs(cwd) if cwd else os.getcwd()
    current = start
    while True:
        # exists(), not isdir(): a linked worktree or a submodule has a .git *file*.
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


def _abs(path: str) -> str:
    # abspath() normalises ".." and trailing slashes lexically; identify_dir resolves
    # symlinks before it calls this.
    result = os.path.abspath(path)
    if result.startswith("//") and not result.startswith("///") and os.sep == "/":
        result = result[1:]  # POSIX keeps a leading "//"; it names the same directory
    return result


def canonical(path: str, platform: str = sys.platform) -> str:
    """Absolute, forward slashes, no trailing slash; lower-cased where file names ignore case."""
    if platform == "win32":
        import ntpath  # only for Windows paths (and for tests that simulate them)

        result = ntpath.normpath(ntpath.abspath(path) if os.sep == "\\" else path)
        result = result.replace("\\", "/")
    else:
        result = _abs(path) if os.sep == "/" else path.replace("\\", "/")
    if len(result) > 1 and result.endswith("/") and not result.endswith(":/"):
        result = result.rstrip("/") or "/"
    # macOS (APFS/HFS+ default) and Windows (NTFS) are case-insensitive: "/Users/Me/App"
    # and "/users/me/app" are one project and must share one store.
    if platform in ("darwin", "win32"):
        result = result.lower()
    return result


# ---------------------------------------------------------------- one memory per repository


class Identity:
    """Which memory a folder belongs to: what :func:`identify` finds by reading files.

    ``project``: the key of the store, the same for every worktree of one repository (the
    main worktree's folder; a bare repository's own folder), the resolved folder outside
    git. ``worktree``: the resolved root of the work tree the folder is in (None outside
    git). ``gitdir``: that work tree's git dir (where its ``HEAD`` is); ``common_dir``: the
    repository's shared git dir (equal to ``gitdir`` but in a linked worktree).
    """

    __slots__ = ("common_dir", "gitdir", "project", "worktree")

    def __init__(
        self,
        project: str,
        worktree: str | None = None,
        gitdir: str | None = None,
        common_dir: str | None = None,
    ) -> None:
        self.project = project
        self.worktree = worktree
        self.gitdir = gitdir
        self.common_dir = common_dir

    @property
    def tree(self) -> str:
        """The folder the work happens in: the work tree's root, else the project."""
        return self.worktree or self.project

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Identity):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in Identity.__slots__)

    def __hash__(self) -> int:
        return hash(self.project)

    def __repr__(self) -> str:
        return (
            f"Identity(project={self.project!r}, worktree={self.worktree!r}, "
            f"gitdir={self.gitdir!r}, common_dir={self.common_dir!r})"
        )


def identify(cwd: str, env: Mapping[str, str]) -> Identity:
    """The identity of a hook's (or a command's) project: ``CLAUDE_PROJECT_DIR`` if set,
    else ``cwd``, else the process's working directory; see :func:`identify_dir`."""
    return identify_dir(env.get("CLAUDE_PROJECT_DIR") or cwd or os.getcwd())


def identify_dir(start: str) -> Identity:
    """The :class:`Identity` of ``start``, by reading files (never a ``git`` process).

    Symlinks are resolved once (``realpath``), then the nearest ``.git`` above is found:

    - a ``.git`` folder: a repository's main worktree, keyed by its own folder;
    - a ``.git`` file naming a git dir with a ``commondir`` file: a linked worktree,
      keyed by its repository (:func:`_repository`: the main worktree, or the bare
      repository's folder);
    - a ``.git`` file naming a git dir without ``commondir``: a submodule (or a
      separate git dir), a repository of its own, keyed by its own work tree;
    - nothing up to the top: not git, keyed by the resolved ``start``.

    A few ``stat`` and ``open`` calls: every hook pays them (``ctxmode bench``).
    """
    start = _abs(os.path.realpath(start))
    current = start
    while True:
        dot_git = os.path.join(current, ".git")
        try:
            st = os.stat(dot_git)
        except OSError:
            parent = os.path.dirname(current)
            if parent == current:
                return Identity(start)
            current = parent
            continue
        if st.st_mode & 0o170000 == _KIND_DIR:
            return Identity(current, current, dot_git, dot_git)
        return _linked(current, dot_git)


def _linked(tree: str, dot_git: str) -> Identity:
    """The identity of a work tree whose ``.git`` is a file (``gitdir: <path>``).

    The pointer files (``.git``, the git dir's ``commondir``) are read only as git writes
    them: small regular files of one line of text (:func:`_read_pointer`), and what they
    lead to counts only when it is a git directory. Anything else (a ``commondir``
    linked to some other file, a NUL, a second line) is an odd folder, its own project:
    nothing read from such a file becomes a key, a path in the store or a message.
    """
    text = _read_pointer(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return Identity(tree, tree)  # an odd .git file: the folder is its own project
    target = text[len("gitdir:") :].strip()
    if not target:
        return Identity(tree, tree)
    gitdir = _abs(os.path.realpath(os.path.join(tree, target)))
    if not _is_git_dir(gitdir):
        return Identity(tree, tree)
    pointer = os.path.join(gitdir, "commondir")
    if not os.path.lexists(pointer):
        return Identity(tree, tree, gitdir, gitdir)  # a submodule: a repository of its own
    common = _read_pointer(pointer)
    if common is None:
        return Identity(tree, tree)
    common_dir = _abs(os.path.realpath(os.path.join(gitdir, common.strip())))
    if not _is_common_dir(common_dir):
        return Identity(tree, tree)
    return Identity(_repository(common_dir), tree, gitdir, common_dir)


def _is_git_dir(path: str) -> bool:
    """A work tree's git dir: its ``HEAD``, and the objects or the pointer to them."""
    return os.path.isfile(os.path.join(path, "HEAD")) and (
        os.path.isdir(os.path.join(path, "objects"))
        or os.path.isfile(os.path.join(path, "commondir"))
    )


def _is_common_dir(path: str) -> bool:
    """A repository's shared git dir: its objects and refs."""
    return os.path.isdir(os.path.join(path, "objects")) and os.path.isdir(
        os.path.join(path, "refs")
    )


def _repository(common_dir: str) -> str:
    """The key of the repository whose shared git dir is ``common_dir``.

    A non-bare repository's ``.git`` → the main worktree (its parent). A repository
    whose config names its work tree (``core.worktree``, e.g. a submodule's git dir
    under ``.git/modules/``) → that work tree, the key its own checkout has. Anything
    else is a bare repository (``bare = true``, or a git dir not named ``.git``): its
    own folder.
    """
    bare, worktree = _core_config(_read_small(os.path.join(common_dir, "config")) or "")
    if worktree and "\0" not in worktree:
        folder = _abs(os.path.realpath(os.path.join(common_dir, worktree)))
        if os.path.isdir(folder):
            return folder
    if os.path.basename(common_dir) == ".git" and not bare:
        return os.path.dirname(common_dir)
    return common_dir


def _core_config(text: str) -> tuple[bool, str]:
    """(``core.bare``, ``core.worktree``) of a git config text (enough of its syntax)."""
    bare, worktree, in_core = False, "", False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            in_core = line[1:].split("]", 1)[0].strip().lower() == "core"
            continue
        if not in_core or "=" not in line:
            continue
        key, value = line.split("=", 1)
        key, value = key.strip().lower(), value.split("#", 1)[0].split(";", 1)[0].strip()
        if key == "bare":
            bare = value.lower() in ("true", "yes", "on", "1")
        elif key == "worktree":
            worktree = value.strip('"')
    return bare, worktree


def head_branch(gitdir: str | None) -> str | None:
    """The branch checked out in a work tree (``HEAD`` of its git dir): the name after
    ``refs/heads/``, 12 hex of the commit when detached, None when unreadable."""
    if not gitdir:
        return None
    text = _read_pointer(os.path.join(gitdir, "HEAD"))
    if not text:
        return None
    head = text.strip()
    if head.startswith("ref:"):
        ref = head[4:].strip()
        if len(ref) > 255 or " " in ref:
            return None  # no ref name git makes
        return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref or None
    if len(head) in (40, 64) and not head.strip("0123456789abcdef"):
        return head[:12]
    return None


def _read_small(path: str, limit: int = 4096) -> str | None:
    """The start of a small regular text file, or None (absent, a folder, a FIFO,
    unreadable)."""
    data = _read_regular(path, limit)
    return None if data is None else data.decode("utf-8", "replace")


def _read_regular(path: str, limit: int) -> bytes | None:
    try:
        # O_NONBLOCK: a FIFO in the way must not hang a hook.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if os.fstat(fd).st_mode & 0o170000 != 0o100000:
            return None  # a device, a FIFO, a folder
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


# A pointer file git writes holds one path: never longer than a path can be.
POINTER_LIMIT = 4096


def _read_pointer(path: str) -> str | None:
    """The one line of a git pointer file (``.git``, ``commondir``, ``HEAD``), or None
    unless it is what git writes there: a small regular file of one line of printable
    UTF-8 text (a trailing line end allowed), no NUL."""
    data = _read_regular(path, POINTER_LIMIT + 1)
    if not data or len(data) > POINTER_LIMIT or b"\0" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    if not text or not text.isprintable():
        return None  # a second line, a control character
    return text


# New stores are named by the repository key with this prefix, so that every store of
# the older schemes (per folder, per worktree) is told apart by its name and merged
# into the repository's store once (ctxmode.store.merge).
STORE_PREFIX = "repo-"


def repo_store_name(project: str, platform: str = sys.platform) -> str:
    """``repo-`` + 16 hex of SHA-256 of the canonical repository key."""
    return STORE_PREFIX + sha256_hex(canonical(project, platform))[:16]


def store_file(root: str, project: str) -> str:
    """``<root>/sessions/repo-<hash>.db``: the store of the repository key ``project``
    (a Windows path read on another system is keyed as ctxmode on Windows keys it)."""
    platform = "win32" if foreign_path(project) is not None else sys.platform
    return os.path.join(root, "sessions", repo_store_name(project, platform) + ".db")


def foreign_path(path: str) -> str | None:
    """``path`` when it is a Windows path read on another system (``C:\\…``, ``C:/…``,
    ``\\\\server\\share``), else None: a transcript copied from Windows names no folder
    here, and taken as a relative path it would land in whatever folder reads it."""
    if os.sep == "\\":
        return None
    drive = len(path) >= 3 and path[0].isascii() and path[0].isalpha() and path[1] == ":"
    if (drive and path[2] in "\\/") or path.startswith("\\\\"):
        return path
    return None


def foreign_key(path: str) -> str:
    """The repository key of a :func:`foreign_path`: as ctxmode on Windows keys it."""
    return canonical(path, "win32")


def recorded_above(folder: str, root: str) -> str | None:
    """The nearest folder above ``folder`` whose store exists under ``root``, or None.

    Outside git a session's project is the folder its client started in (Claude Code's
    ``CLAUDE_PROJECT_DIR``; a Codex or Gemini session's cwd): a command run in one of
    its subfolders reads that folder's store (the CLI's choice; hooks never call this).
    """
    current = _abs(folder)
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
        if os.path.exists(store_file(root, current)):
            return current


# ---------------------------------------------------------------- names of older versions
# Kept for the tests that make stores the way older versions did; ctxmode itself finds
# old stores by what they record (ctxmode.store.merge), not by their names.


def worktree_gitdir(project: str) -> str | None:
    """The ``.../worktrees/<name>`` git dir when ``project`` is a linked worktree, else None."""
    dot_git = os.path.join(project, ".git")
    if not os.path.isfile(dot_git):
        return None  # a normal checkout (folder) or no git at all
    first = (_read_pointer(dot_git) or "").strip()
    if not first.startswith("gitdir:"):
        return None
    target = first[len("gitdir:") :].split("\n", 1)[0].strip()
    if not target:
        return None
    if not os.path.isabs(target):
        target = os.path.join(project, target)
    target = os.path.normpath(target)
    # A submodule's .git file points into .../modules/<name>: not a worktree.
    parent = os.path.basename(os.path.dirname(target.replace("\\", "/").rstrip("/")))
    if parent != "worktrees":
        return None
    return target


def store_name(project: str, platform: str = sys.platform) -> str:
    """The name 0.2 gave: 16 hex of SHA-256 of the canonical project path, plus
    ``__<8 hex>`` of the git dir for a linked worktree (one store per worktree)."""
    name = sha256_hex(canonical(project, platform))[:16]
    gitdir = worktree_gitdir(project)
    if gitdir is not None:
        name += "__" + sha256_hex(canonical(gitdir, platform))[:8]
    return name


def _home(env: Mapping[str, str]) -> str:
    home = env.get("HOME", "")
    if os.path.isabs(home):
        return home
    # Like os.path.expanduser (and platformdirs): an unset or relative HOME falls
    # back to the password database.
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, AttributeError):  # pragma: no cover - exotic systems
        return os.path.expanduser("~")


def data_root(env: Mapping[str, str], platform: str = sys.platform) -> str:
    """The one data root every hook and CLI command uses (see :func:`resolve_root`)."""
    return resolve_root(env, platform)[0]


# Where the root came from, in the order they are tried.
ROOT_FROM_ENV = "CTXMODE_HOME"
ROOT_FROM_INSTALL = "install"
ROOT_FROM_POINTER = "pointer"
ROOT_FROM_DEFAULT = "default"


def resolve_root(env: Mapping[str, str], platform: str = sys.platform) -> tuple[str, str]:
    """(data root, where it came from). The rule, in order:

    1. ``CTXMODE_HOME`` in the environment (the contract: it moves all data);
    2. the root recorded by the installation that runs this code: the file
       ``ctxmode-data-root`` in its virtual environment, found from ``sys.prefix`` or,
       for hooks run as ``<venv>/bin/python -I -S`` (which never set ``sys.prefix`` to
       the venv), from ``sys.executable``;
    3. the per-user pointer ``install.sh`` leaves at the fixed default location
       (``~/.local/share/ctxmode/ctxmode-data-root`` on Linux, ignoring
       ``XDG_DATA_HOME``), for code run by another interpreter, e.g. the plugin's
       ``python3``; it is read only when it is a regular file of this user that no
       one else can write;
    4. the platform's user data dir, what platformdirs gives (``XDG_DATA_HOME`` honoured).

    So once installed the root is fixed, whatever ``XDG_DATA_HOME`` says later, and
    every process of the user agrees on it unless ``CTXMODE_HOME`` says otherwise.
    """
    override = env.get("CTXMODE_HOME")
    if override:
        if override == "~" or override.startswith("~/"):
            override = _home(env) + override[1:]
        return _abs(override), ROOT_FROM_ENV
    installed = installed_root()
    if installed:
        return installed, ROOT_FROM_INSTALL
    pointed = _read_root_file(os.path.join(pointer_dir(env, platform), ROOT_MARKER), trusted=True)
    if pointed:
        return pointed, ROOT_FROM_POINTER
    return default_root(env, platform), ROOT_FROM_DEFAULT


def default_root(env: Mapping[str, str], platform: str = sys.platform) -> str:
    """What ``platformdirs.user_data_dir("ctxmode", appauthor=False)`` gives."""
    if platform == "win32":
        base = env.get("LOCALAPPDATA") or os.path.join(
            env.get("USERPROFILE") or _home(env), "AppData", "Local"
        )
        return os.path.join(os.path.normpath(base), APP_NAME)
    # platformdirs (4.x) honours an absolute XDG_DATA_HOME on Linux and macOS alike and
    # ignores a relative or empty one.
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, APP_NAME)
    return pointer_dir(env, platform)


def pointer_dir(env: Mapping[str, str], platform: str = sys.platform) -> str:
    """The default data root with no ``XDG_*``/``LOCALAPPDATA`` override: a fixed place."""
    if platform == "win32":
        base = env.get("USERPROFILE") or _home(env)
        return os.path.join(base, "AppData", "Local", APP_NAME)
    if platform == "darwin":
        return os.path.join(_home(env), "Library", "Application Support", APP_NAME)
    return os.path.join(_home(env), ".local", "share", APP_NAME)


# ``install.sh`` writes this file into the virtual environment it creates at
# ``<root>/venv`` and, as the per-user pointer, into :func:`pointer_dir`.
ROOT_MARKER = "ctxmode-data-root"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_UID = os.getuid() if hasattr(os, "getuid") else None


def write_pointer(root: str, env: Mapping[str, str] | None = None) -> str:
    """Record ``root`` as this user's data root at :func:`pointer_dir`; return the file.

    Written by ``install.sh`` (step 3 of :func:`resolve_root`): atomically, the folder
    0700 and the file 0600, since a pointer others could edit would redirect the data.
    """
    folder = pointer_dir(os.environ if env is None else env)
    ensure_dir(folder)
    target = os.path.join(folder, ROOT_MARKER)
    temp = f"{target}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, FILE_MODE)
    try:
        os.write(fd, (_abs(root) + "\n").encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(temp, target)
    return target


def installed_root() -> str | None:
    """The data root recorded in the running interpreter's environment, if any."""
    root = _read_root_file(os.path.join(sys.prefix, ROOT_MARKER))
    if root:
        return root
    # ``python -I -S`` skips site.py, which is what points sys.prefix at a venv; the
    # executable's path still names it (<venv>/bin/python, <venv>\Scripts\python.exe).
    venv = os.path.dirname(os.path.dirname(sys.executable or ""))
    if venv and venv != sys.prefix:
        return _read_root_file(os.path.join(venv, ROOT_MARKER))
    return None


def _read_root_file(path: str, trusted: bool = False) -> str | None:
    """The absolute path a root file names; None when absent, empty or relative.

    ``trusted``: also None unless the file is a regular file of this user that group
    and others cannot write (a pointer anyone could edit would redirect the data).
    """
    try:
        # O_NONBLOCK: a FIFO in its place must not hang a hook.
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_mode & 0o170000) != 0o100000:
            return None
        if trusted and _UID is not None and (st.st_uid != _UID or st.st_mode & 0o022):
            return None
        root = os.read(fd, 4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)
    return root if root.startswith(("/", "\\")) or root[1:3] == ":\\" else None


_KIND_DIR = 0o040000
_KIND_LINK = 0o120000


def private_problem(path: str, *, tighten: bool = True) -> str | None:
    """Why ``path`` must not be used; None when it is absent or fine.

    A symbolic link (it could send the data anywhere) or a path of another user is
    refused. One of this user that group or others can reach is
    tightened to 0700/0600 (unless ``tighten`` is False, for ``doctor``'s read-only
    look) and then fine: the data must be the user's alone.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{path} cannot be inspected ({exc.strerror})"
    # Only a link is refused for its kind: a directory where the store should be, or
    # the like, is damage that the store's own recovery moves aside.
    if st.st_mode & 0o170000 == _KIND_LINK:
        return f"{path} is a symbolic link"
    if _UID is not None and st.st_uid != _UID:
        return f"{path} belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o077:
        if not tighten:
            return f"{path} is open to others (mode {st.st_mode & 0o777:04o})"
        try:
            os.chmod(path, DIR_MODE if st.st_mode & 0o170000 == _KIND_DIR else FILE_MODE)
        except OSError as exc:
            return f"{path} is open to others and could not be made private ({exc.strerror})"
    return None


def root_problem(root: str, *, tighten: bool = True) -> str | None:
    """The first reason not to use the data root: itself, its folders, the log.

    Six ``lstat`` calls at most (a few microseconds): every hook pays them, so that no
    hook ever writes into a root someone else can read, redirect or swap.
    """
    for path in (
        root,
        os.path.join(root, "sessions"),
        os.path.join(root, "spool"),
        os.path.join(root, "logs"),
        os.path.join(root, "logs", "ctxmode.log"),
    ):
        problem = private_problem(path, tighten=tighten)
        if problem:
            return problem
    return None


def spool_file(root: str, store_path: str) -> str:
    """``<root>/spool/<store name>.jsonl``: the events that met a locked store (ctxmode.spool)."""
    name = os.path.splitext(os.path.basename(store_path))[0]
    return os.path.join(root, "spool", name + ".jsonl")


def sessions_dir(env: Mapping[str, str]) -> str:
    return os.path.join(data_root(env), "sessions")


def store_path(project: str, env: Mapping[str, str]) -> str:
    """``<root>/sessions/repo-<hash>.db``: the store of the repository ``project`` is in
    (any folder of it: a subfolder, a symlink to it, another worktree of it)."""
    return store_file(data_root(env), identify_dir(project).project)


def log_dir(env: Mapping[str, str]) -> str:
    return os.path.join(data_root(env), "logs")


def missing_dirs(path: str) -> list[str]:
    """``path`` and its parents that do not exist yet, deepest first."""
    missing: list[str] = []
    current = os.path.abspath(path)
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return missing


def ensure_dir(path: str) -> None:
    """Create ``path`` and any missing parents, each 0700; leave existing folders alone."""
    for folder in reversed(missing_dirs(path)):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
            continue  # another process made it first: its mode is its business
        # mkdir's mode is filtered by the umask; make it exactly 0700.
        os.chmod(folder, DIR_MODE)


def create_private_file(path: str) -> bool:
    """Create ``path`` empty with mode 0600 unless it exists. True if this call created it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return False
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, FILE_MODE)  # the umask may have removed bits we need
    finally:
        os.close(fd)
    return True


def open_private(path: str, flags: int = os.O_WRONLY | os.O_APPEND) -> int:
    """``os.open`` that creates a missing file as 0600 (for logs and other private files)."""
    return os.open(path, flags | os.O_CREAT, FILE_MODE)


class FileLock:
    """An exclusive advisory lock on ``<folder>/.ctxmode.lock`` (a no-op without fcntl)."""

    def __init__(self, folder: str) -> None:
        self.path = os.path.join(folder, LOCK_NAME)
        self._fd: int | None = None

    def __enter__(self) -> FileLock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: renames there are best effort
            return self
        self._fd = open_private(self.path, os.O_RDWR)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing releases the flock
            self._fd = None


SIDE_FILES = ("-wal", "-shm")
