"""What a shell command evidently changes on disk → file events (pure).

Agents edit through the shell too: ``> file``, ``>> file``, ``tee``, ``sed -i``, ``rm``,
``mv``, ``cp``. Only what the command line states is recorded (``via: "shell"``); paths with
an unexpanded ``$``, ``~`` or glob are skipped, as are the commands whose directory the line
cannot tell (after ``cd "$DIR"``, say: the caller resolves each command's directory from the
``cd``s before it). Anything else a program writes (generators, formatters) is found at
snapshot time by ``ctxmode.worktree``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.extract.common import Draft
    from ctxmode.extract.shell import Command

MAX_FILES = 20
VIA = "shell"
_WRITE_OPS = {">": "file_write", ">|": "file_write", "&>": "file_write"}
_APPEND_OPS = {">>": "file_edit", "&>>": "file_edit"}
_NOT_FILES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-")


def _plain(path: str) -> bool:
    return bool(path) and path not in _NOT_FILES and not any(ch in path for ch in "$~*?[`")


def _positionals(args: list[str]) -> list[str]:
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i + 1 :]
        if not arg.startswith("-") or arg == "-":
            out.append(arg)
    return out


def _sed_files(args: list[str]) -> list[str]:
    in_place = any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args)
    if not in_place:
        return []
    scripted = any(
        a in ("-e", "-f", "--expression", "--file") or a.startswith("--expr") for a in args
    )
    files = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in ("-e", "-f", "--expression", "--file"):
            skip = True
            continue
        if not arg.startswith("-"):
            files.append(arg)
    return files if scripted else files[1:]


def changes(cmd: Command) -> list[tuple[str, str]]:
    """(event type, path as written) of each change one command states, in order."""
    found: list[tuple[str, str]] = []
    for redirect in cmd.redirects:
        kind = _WRITE_OPS.get(redirect.op) or _APPEND_OPS.get(redirect.op)
        if kind and redirect.fd in ("", "1", "2") and not redirect.target.isdigit():
            found.append((kind, redirect.target))
    argv = [w.text for w in cmd.words]
    if not argv:
        return found
    name = argv[0].rsplit("/", 1)[-1]
    args = argv[1:]
    if name == "tee":
        kind = "file_edit" if any(a in ("-a", "--append") for a in args) else "file_write"
        found += [(kind, path) for path in _positionals(args)]
    elif name in ("sed", "gsed"):
        found += [("file_edit", path) for path in _sed_files(args)]
    elif name == "rm":
        found += [("file_delete", path) for path in _positionals(args)]
    elif name in ("mv", "cp") and not any(a.startswith(("-t", "--target")) for a in args):
        paths = _positionals(args)
        if len(paths) == 2:
            if name == "mv":
                found.append(("file_delete", paths[0]))
            found.append(("file_write", paths[1]))
    return found


def drafts(commands: list[Command], project_dir: str, dirs: list[str | None]) -> list[Draft]:
    """The file events of what ``commands`` change, paths as the file tools record them
    (relative to the project when inside it). ``dirs[i]`` is where ``commands[i]`` ran:
    None when unknown (its changes are left out), "" for the project's directory."""
    from ctxmode.extract.common import rel_path

    out: list[Draft] = []
    seen: set[tuple[str, str]] = set()
    for cmd, where in zip(commands, dirs, strict=True):
        if where is None:
            continue
        for kind, raw in changes(cmd):
            if not _plain(raw):
                continue
            path = rel_path(raw, project_dir, where)
            if not path or (kind, path) in seen:
                continue
            seen.add((kind, path))
            out.append((kind, {"path": path, "via": VIA}))
            if len(out) >= MAX_FILES:
                return out
    return out
