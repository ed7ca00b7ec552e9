"""Bash tool calls → ``shell``, ``cwd``, ``env``, ``git``, ``error`` and sent-message events.

Every call is kept as it ran (``shell_call``: the whole command line, the exit code when
the client tells it, the head and tail of what it printed), so that a later search finds
the version an install printed, the port a server took, the flags a command used.

The command line is parsed the way the shell parses it (:mod:`ctxmode.extract.shell`) and
each simple command is looked at on its own, so ``echo "cd /tmp && git push"`` is one
``echo`` and nothing else, while every ``git`` of ``git add -A && git commit -m x &&
git push`` counts.

The working directory needs care: Claude Code sends PostToolUse with the ``cwd`` as it is
*after* the command (``cd src && ls`` arrives with ``cwd`` already ending in ``/src``).
So ``cd`` targets are followed symbolically from an unknown start, and the start is then
recovered from the final ``cwd`` (:func:`_start`); a payload whose ``cwd`` does not fit
(an older client sending the cwd from before, or one that reset it) is read as the start.

Long on purpose (~1,000 lines): one subject, the Bash command line, read in one pass;
the bulk is the table of git subcommands and environment-setting commands with their
small readers, which are easier to check side by side than spread over modules.
"""

from __future__ import annotations

from ctxmode import events
from ctxmode.extract import shell
from ctxmode.extract.common import as_int, clip, masked_excerpt, one_line, s

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctxmode.extract.common import Draft
    from ctxmode.payload import HookInput

    # A directory known exactly ("abs", root, segments), or relative to the directory the
    # command started in ("rel", levels up, segments below), or unknown (None).
    Sym = tuple[str, Any, tuple[str, ...]] | None

KEY_CHARS = 300  # the command, as the key of an error event
COMMAND_CHARS = 2000  # the command line a shell_call keeps: all of nearly every one
# The excerpt of a call's output: its first and last this-many characters (cut at line
# ends where one is near), enough for a version, a port, a count, a summary line.
OUTPUT_HEAD = 320
OUTPUT_TAIL = 320
# Of a longer output, lines from between the two that look like an error or a warning,
# or that name what the command did (common.standout_lines), up to this many characters:
# room for three or four (a type checker's or a test runner's errors are ~200 each).
OUTPUT_MIDDLE = 640
SAVED_CHARS = 400  # the path of the file a client saved a large output to
SENT_CHARS = 2000  # the text of a comment, an issue or a pull request the agent sent
DESCRIPTION_CHARS = 200  # what the agent said a command does
ERROR_CHARS = 400
ARGS_CHARS = 200
DETAIL_CHARS = 200
MESSAGE_CHARS = 500
PRINTED_CHARS = 400  # a commit's summary line(s) as git printed them
# Output is scanned for failures in its first and last this-many characters only.
SCAN_CHARS = 8192
# `bash -c "…"` / `eval "…"` inside a command are parsed too, this many levels deep.
MAX_NESTED_SHELLS = 3
# Bounds on one call's work and output: commands looked at, events kept, path depth.
MAX_COMMANDS = 300
MAX_DRAFTS = 40
MAX_SEGMENTS = 256

_START: Sym = ("rel", 0, ())
# Programs whose arguments name files they change (ctxmode.extract.shell_writes).
_WRITERS = frozenset({"tee", "sed", "gsed", "rm", "mv", "cp"})


def extract(inp: HookInput) -> list[events.SessionEvent]:
    """PostToolUse of Bash → events.

    Free text that may hold a secret (messages, arguments, the command, error lines) is
    masked here already (``common.clip`` masks before it trims, so a cut never leaves
    half a token); the dispatcher masks every event again.
    """
    return [
        events.make(
            type_,
            data,
            agent_id=inp.agent_id,
            agent_type=inp.agent_type,
            tool_use_id=inp.tool_use_id,
        )
        for type_, data in [*call(inp), *drafts(inp)]
    ]


def call(inp: HookInput) -> list[Draft]:
    """The call itself: ``shell_call {command, [description], [exit], [output], [saved,
    bytes]}`` (none without a command)."""
    command = s(inp.tool_input.get("command"))
    if not command.strip():
        return []
    response = inp.tool_response if isinstance(inp.tool_response, dict) else {}
    stdout, stderr = s(response.get("stdout")), s(response.get("stderr"))
    data = call_data(command, stdout, stderr, _exit_code(inp), described(inp))
    # An output too large for the model's context (Claude Code: ~30 KB) is saved whole to
    # a file, and the model reads a preview; ``stdout`` is its head, not all of it. Where
    # the whole output is, and its size: the one way back to its end after a compaction.
    saved = s(response.get("persistedOutputPath"))
    if saved.strip():
        data["saved"] = clip(saved, SAVED_CHARS)
        size = as_int(response.get("persistedOutputSize"))
        if size is not None and size > 0:
            data["bytes"] = size
    return [("shell_call", data)]


def described(inp: HookInput) -> str:
    """What the agent said the command does (Claude Code's and Gemini's ``description``):
    the words a question about it later uses ("check the disk encryption status")."""
    return clip(one_line(s(inp.tool_input.get("description"))), DESCRIPTION_CHARS)


def drafts(inp: HookInput) -> list[Draft]:
    """The facts one Bash call's command line and output tell, as ``(event type, data)``
    pairs in the order they ran (the call itself: :func:`call`)."""
    command = s(inp.tool_input.get("command"))
    response = inp.tool_response if isinstance(inp.tool_response, dict) else {}
    stdout, stderr = s(response.get("stdout")), s(response.get("stderr"))
    if not command.strip():
        return []
    walker = _Walker(home_from_transcript(inp.transcript_path))
    parsed = shell.parse(command)
    walker.walk(parsed, (0,), 0)
    start = walker.start(inp.cwd, inp.shell_keeps_cwd)
    out = walker.drafts(start, inp.cwd, stdout, _commit_sha(response), inp.shell_keeps_cwd)
    if ">" in command or any(p in _WRITERS for p in walker.programs):
        # What the command line evidently changes (`> f`, `tee`, `sed -i`, `rm`, `mv`…),
        # each relative path taken from where its command ran (after any `cd` before it);
        # a command whose directory the line cannot tell is left out (extract.shell_writes).
        from ctxmode.extract import shell_writes

        dirs = [walker.ran_in(cmd, start) for cmd in parsed]
        out += shell_writes.drafts(parsed, inp.project_dir, dirs)
    if not _only_viewers(walker.programs):
        error = output_error(stdout, stderr)
        if error:
            out.append(
                (
                    "output_error",
                    {
                        "tool": inp.tool_name or "shell",
                        "key": clip(command, KEY_CHARS),
                        "error": clip(error, ERROR_CHARS),
                    },
                )
            )
    return out


def call_data(
    command: str, stdout: str, stderr: str, exit_code: int | None, description: str = ""
) -> dict[str, Any]:
    """A ``shell_call``'s data: the command line, what it is for, the exit code if known,
    the output's excerpt (stdout, then stderr). The text is masked already
    (extract.masked)."""
    data: dict[str, Any] = {"command": clip(command, COMMAND_CHARS)}
    if description:
        data["description"] = description
    if exit_code is not None:
        data["exit"] = exit_code
    printed = stdout.rstrip()
    if stderr.strip():
        printed = f"{printed}\n{stderr.rstrip()}" if printed else stderr.rstrip()
    keys = command_keys(command) if len(printed) > OUTPUT_HEAD + OUTPUT_TAIL else ()
    excerpt = masked_excerpt(printed, OUTPUT_HEAD, OUTPUT_TAIL, OUTPUT_MIDDLE, keys)
    if excerpt:
        data["output"] = excerpt
    return data


# Words of a command line that say nothing of what its output holds.
_KEY_SKIP = frozenset(
    {"then", "else", "done", "echo", "true", "false", "null", "/dev/null", "grep", "head",
     "tail", "sort", "less", "more", "2>&1", "sudo", "find", "xargs", "print", "printf"}
)  # fmt: skip
_KEY_TRIM = "\"'`()[]{};|&<>$,!"
MAX_KEYS = 8


# Words after which a new command starts: its first word is a program, not a key.
_KEY_SEPARATORS = frozenset({"&&", "||", "|", ";", "&", "|&", "then", "do", "else", "xargs"})


def command_keys(command: str) -> tuple[str, ...]:
    """The words of a command line its output's lines may hold (what a ``grep``, a
    ``cat`` or a lookup was after: a name, a path, a pattern): each word of four
    characters or more but a program (the first word of each command of the line: in
    ``cd app && pnpm typecheck`` the output names ``pnpm`` on every line it prints, and
    the failure on one), an option or a shell word."""
    keys: list[str] = []
    program_next = True
    for raw in command.split():
        is_program = program_next
        program_next = raw in _KEY_SEPARATORS or raw.endswith(";")
        if is_program and "=" in raw:
            program_next = True  # `NODE_ENV=test npm test`: the program comes after
            continue
        word = raw.strip(_KEY_TRIM)
        if (
            not is_program
            and len(word) >= 4
            and not word.startswith("-")
            and word.lower() not in _KEY_SKIP
            and any(c.isalpha() for c in word)
            and word not in keys
        ):
            keys.append(word)
            if len(keys) >= MAX_KEYS:
                break
    return tuple(keys)


# A background task's states that end it: its output is final.
_ENDED = frozenset({"completed", "failed", "killed", "stopped", "error", "timeout"})


def background(inp: HookInput) -> list[Draft]:
    """TaskOutput (older: BashOutput) of a background command → ``shell_call {command,
    [exit], [output], task, [status]}``: what it printed, which its own Bash call never
    saw (``status`` when it still runs). ``command`` is the task's description (the command is on the Bash call that
    started it, with ``task`` in its output)."""
    from ctxmode.extract.common import as_dict

    response = as_dict(inp.tool_response)
    task = as_dict(response.get("task")) or response  # TaskOutput nests it; BashOutput not
    status = s(task.get("status"))
    printed = s(task.get("output")) or s(task.get("stdout"))
    code = task.get("exitCode", task.get("exit_code"))
    what = s(task.get("description")) or s(task.get("command"))
    task_id = s(task.get("task_id")) or s(inp.tool_input.get("task_id"))
    task_id = task_id or s(inp.tool_input.get("bash_id"))
    stderr = s(task.get("stderr"))
    if status not in _ENDED and not (printed.strip() or stderr.strip()):
        return []  # still running and nothing printed yet: a later read has it
    if not (printed.strip() or stderr.strip() or what.strip()):
        return []
    # A read while it still runs is kept too: a server never ends, and what it printed
    # (the port it took, the error a request hit) is in no other event.
    data = call_data(what or "(background command)", printed, stderr, None)
    if status and status not in _ENDED:
        data["status"] = clip(status, 40)
    if isinstance(code, int) and not isinstance(code, bool):
        data["exit"] = code
    if task_id:
        data["task"] = clip(task_id, 80)
    return [("shell_call", data)]


def _exit_code(inp: HookInput) -> int | None:
    """0 for a call the client reports as a success (Claude Code and Gemini report
    failures apart; Codex does not: unknown), else None."""
    response = inp.tool_response if isinstance(inp.tool_response, dict) else {}
    if not inp.outcome_known or inp.event != "PostToolUse" or response.get("interrupted"):
        return None
    if isinstance(response.get("returnCodeInterpretation"), str):
        return None  # a non-zero code the client read as no failure (grep: no match)
    return 0


def home_from_transcript(transcript_path: str | None) -> str:
    """The user's home directory, read from ``<home>/.claude/projects/…`` ("" if absent)."""
    path = (transcript_path or "").replace("\\", "/")
    cut = path.find("/.claude/projects/")
    return path[:cut] if cut > 0 else ""


def _commit_sha(response: dict[str, Any]) -> str:
    op = response.get("gitOperation")
    commit = op.get("commit") if isinstance(op, dict) else None
    return s(commit.get("sha")).strip() if isinstance(commit, dict) else ""


# -- programs ---------------------------------------------------------------------------


def prog(word: str) -> str:
    """The program name of ``argv[0]``: no directory, no ``.exe``."""
    name = word.replace("\\", "/").rsplit("/", 1)[-1]
    if name.lower().endswith((".exe", ".cmd", ".bat")):
        name = name[:-4]
    return name


# Options of wrapper commands that take a value (so the value is not the program).
_WRAPPER_VALUE_OPTS = {
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user", "--group"},
    "doas": {"-u", "-C"},
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "nice": {"-n", "--adjustment"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "exec": {"-a"},
    "stdbuf": {"-i", "-o", "-e"},
    "ionice": {"-c", "-n", "-p"},
}
_WRAPPERS = frozenset({*_WRAPPER_VALUE_OPTS, "time", "nohup", "command", "builtin"})


def unwrap(argv: list[str]) -> int:
    """Index of the program a command really runs (past ``sudo``, ``env X=1``, ``time``…)."""
    k = 0
    for _ in range(8):
        if k >= len(argv):
            return k
        name = prog(argv[k])
        if name not in _WRAPPERS:
            return k
        if name == "command" and k + 1 < len(argv) and argv[k + 1] in ("-v", "-V"):
            return len(argv)  # `command -v git` asks where git is; it runs nothing
        value_opts = _WRAPPER_VALUE_OPTS.get(name, set())
        k += 1
        while k < len(argv):
            arg = argv[k]
            if arg == "--":
                k += 1
                break
            if arg in value_opts:
                k += 2
            elif (arg.startswith("-") and len(arg) > 1) or (
                name == "env" and "=" in arg and shell.is_name(arg.split("=", 1)[0])
            ):
                k += 1  # a flag, or env's NAME=value
            else:
                break
        if name == "timeout" and k < len(argv):
            k += 1  # the duration
    return k


# -- working directory -----------------------------------------------------------------------


def _split(path: str) -> tuple[str, list[str]]:
    """``(root, segments)`` with ``\\`` read as ``/``; root is ``""`` for a relative path."""
    p = path.replace("\\", "/")
    if len(p) >= 2 and p[1] == ":" and p[0].isalpha():
        root, rest = p[0].upper() + ":/", p[2:]
    elif p.startswith("//") and not p.startswith("///"):
        root, rest = "//", p[2:]
    elif p.startswith("/"):
        root, rest = "/", p
    else:
        root, rest = "", p
    return root, [seg for seg in rest.split("/") if seg and seg != "."]


def _apply(sym: Sym, root: str, segs: list[str]) -> Sym:
    base: Sym = ("abs", root, ()) if root else sym
    if base is None:
        return None
    kind, up, below = base
    comps = list(below)
    for seg in segs:
        if seg == "..":
            if comps:
                comps.pop()
            elif kind == "rel":
                up += 1
            # an absolute path stays at its root, as `cd /..` does
        else:
            comps.append(seg)
    if len(comps) > MAX_SEGMENTS:
        return None
    return (kind, up, tuple(comps))


def _fmt(root: str, comps: tuple[str, ...] | list[str]) -> str:
    if root == "~/":
        return "~/" + "/".join(comps) if comps else "~"
    return root + "/".join(comps)


def _same(a: list[str] | tuple[str, ...], b: list[str] | tuple[str, ...], fold: bool) -> bool:
    if fold:
        return [x.casefold() for x in a] == [x.casefold() for x in b]
    return list(a) == list(b)


class _Start:
    """Where the command started: ``root`` + ``base`` + ``unknown`` segments not known."""

    __slots__ = ("base", "root", "unknown")

    def __init__(self, root: str, base: list[str], unknown: int) -> None:
        self.root, self.base, self.unknown = root, base, unknown

    def resolve(self, sym: Sym) -> str | None:
        if sym is None:
            return None
        kind, up, comps = sym
        if kind == "abs":
            return _fmt(up, comps)
        if not self.root or up < self.unknown:
            return None
        drop = up - self.unknown
        kept = self.base[: max(0, len(self.base) - drop)]
        return _fmt(self.root, [*kept, *comps])


def _start(cwd: str, final: Sym) -> _Start:
    """The start directory, from the payload's cwd (the cwd after the command)."""
    root, comps = _split(cwd.strip())
    if not root:
        return _Start("", [], 0)
    if final is not None and final[0] == "rel" and final != _START:
        _, up, below = final
        n = len(below)
        if len(comps) >= n and _same(comps[len(comps) - n :], below, fold=root.endswith(":/")):
            return _Start(root, comps[: len(comps) - n], up)
    return _Start(root, comps, 0)


# -- the walk over simple commands ------------------------------------------------------------


class _Pending:
    """A fact whose directories are resolved once the start directory is known."""

    __slots__ = ("data", "dir_sym", "eff", "explicit", "type")

    def __init__(
        self, type_: str, data: dict[str, Any], eff: Sym = None, dir_sym: Sym = None
    ) -> None:
        self.type = type_
        self.data = data
        self.eff = eff  # where the command ran
        self.dir_sym = dir_sym  # `git -C` directory, if any
        self.explicit = ""  # `git -C` as written, when it cannot be resolved


class _Walker:
    def __init__(self, home: str) -> None:
        self.home = home
        self.cwd: dict[tuple[int, ...], Sym] = {(0,): _START}
        self.oldpwd: dict[tuple[int, ...], Sym] = {}
        self.stacks: dict[tuple[int, ...], list[Sym]] = {}
        self.pending: list[_Pending] = []
        self.cd_moves: list[tuple[int, Sym, Sym]] = []  # (index in pending, before, after)
        self.programs: list[str] = []
        self.nested_ids = 0
        self.seen = 0  # simple commands walked
        self.dirs: dict[int, Sym] = {}  # id() of each top-level command -> where it ran

    # scopes inherit the directory their parent had when they were forked
    def scope_cwd(self, scope: tuple[int, ...]) -> Sym:
        if scope not in self.cwd:
            parent: Sym = _START
            for k in range(len(scope) - 1, 0, -1):
                if scope[:k] in self.cwd:
                    parent = self.cwd[scope[:k]]
                    self.oldpwd.setdefault(scope, self.oldpwd.get(scope[:k]))
                    self.stacks.setdefault(scope, list(self.stacks.get(scope[:k], [])))
                    break
            self.cwd[scope] = parent
        return self.cwd[scope]

    def walk(self, commands: list[shell.Command], base: tuple[int, ...], nesting: int) -> None:
        for cmd in commands:
            self.seen += 1
            if self.seen > MAX_COMMANDS:
                return
            # Commands of a nested `bash -c` string are re-rooted under ``base``.
            scope = base + cmd.scope[1:] if base != (0,) else cmd.scope
            if nesting == 0:
                self.dirs[id(cmd)] = self.scope_cwd(scope)
            words = cmd.words
            argv = [w.text for w in words]
            k = unwrap(argv)
            if k >= len(argv):
                continue
            name = prog(argv[k])
            self.programs.append(name)
            eff = self.scope_cwd(scope)
            args = words[k + 1 :]
            if name in ("cd", "pushd", "popd", "chdir"):
                self.change_dir(name, args, scope, eff)
            elif name == "git":
                self.git(argv[k:], words[k:], cmd, eff)
            elif name in ("bash", "sh", "zsh", "dash", "ksh") and nesting < MAX_NESTED_SHELLS:
                script = _dash_c(args)
                if script is not None:
                    self.nested_ids += 1
                    inner = (*scope, 1_000_000 * self.nested_ids)
                    self.cwd[inner] = eff
                    self.walk(shell.parse(script), inner, nesting + 1)
            elif name == "eval" and nesting < MAX_NESTED_SHELLS:
                self.walk(shell.parse(" ".join(a.text for a in args)), scope, nesting + 1)
            elif name in _FORGES:
                sent = sent_message(name, words[k + 1 :])
                if sent:
                    self.pending.append(_Pending("message_sent", sent))
            else:
                found = env_setup(argv[k:], argv)
                if found:
                    self.pending.append(_Pending("env_setup", found))

    def ran_in(self, cmd: shell.Command, start: _Start) -> str | None:
        """The directory a top-level command ran in: "" for the start directory when the
        payload gave none (the project's, then), None when the line cannot tell."""
        if id(cmd) not in self.dirs:
            return None  # past MAX_COMMANDS: never walked
        sym = self.dirs[id(cmd)]
        if sym == _START and not start.root:
            return ""
        path = start.resolve(sym)
        return None if path is None or path.startswith("~") else path

    def change_dir(
        self, name: str, args: list[shell.Word], scope: tuple[int, ...], before: Sym
    ) -> None:
        argv = [a.text for a in args]
        while argv and argv[0].startswith("-") and argv[0] not in ("-", "--") and len(argv[0]) > 1:
            if name == "popd" or (name == "pushd" and argv[0][1:].isdigit()):
                break
            argv, args = argv[1:], args[1:]  # -L, -P, -e, -@, -n
        if argv and argv[0] == "--":
            argv, args = argv[1:], args[1:]
        stack = self.stacks.setdefault(scope, [])
        after: Sym
        if name == "popd":
            after = stack.pop() if stack and not argv else None
        elif not argv:
            if name == "pushd":  # swap the top two directories
                after = stack.pop() if stack else None
                stack.append(before)
            else:
                after = ("abs", *self.home_root()) if self.home else ("abs", "~/", ())
        elif argv[0] == "-" and name in ("cd", "chdir"):
            after = self.oldpwd.get(scope)
        else:
            after = self.target(args[0], before)
            if name == "pushd":
                stack.append(before)
        self.oldpwd[scope] = before
        self.cwd[scope] = after
        if len(scope) == 1:  # only the main shell's cd outlives the command
            self.cd_moves.append((len(self.pending), before, after))

    def home_root(self) -> tuple[str, tuple[str, ...]]:
        root, comps = _split(self.home)
        return root or "/", tuple(comps)

    def target(self, word: shell.Word, base: Sym) -> Sym:
        """Where ``cd WORD`` goes from ``base`` (None when it depends on the shell)."""
        value = word.value()
        if value is None or not value.strip():
            return None if value is None else base
        if word.tilde and (value == "~" or value.startswith(("~/", "~\\"))):
            if not self.home:
                return ("abs", "~/", tuple(_split(value[1:])[1]))
            value = self.home + value[1:]
        elif word.tilde:
            return None  # ~user
        root, segs = _split(value)
        return _apply(base, root, segs)

    def git(self, argv: list[str], words: list[shell.Word], cmd: shell.Command, eff: Sym) -> None:
        parsed = git_command(argv)
        if parsed is None:
            return
        sub, sub_index, dirs = parsed
        dir_sym = eff
        for d in dirs:
            root, segs = _split(d)
            dir_sym = _apply(dir_sym, root, segs)
        for type_, data in git_facts(sub, argv[sub_index + 1 :], words[sub_index + 1 :], cmd):
            item = _Pending(type_, data, eff, dir_sym if dirs else None)
            item.explicit = "/".join(dirs) if dirs else ""
            self.pending.append(item)

    # -- resolution ------------------------------------------------------------------------

    def final(self, cwd_is_after: bool) -> Sym:
        """Where the session is once the command is over: where the main shell was left
        (``cwd_is_after``: Claude Code's, whose shell keeps a `cd`), else where it started
        (a client that runs each command in a fresh shell: its `cd`s end with it)."""
        return self.cwd[(0,)] if cwd_is_after else _START

    def start(self, cwd: str, cwd_is_after: bool) -> _Start:
        """Where the command started, from the payload's ``cwd`` (the session's after it)."""
        return _start(cwd, self.final(cwd_is_after))

    def drafts(
        self, start: _Start, cwd: str, stdout: str, sha: str, cwd_is_after: bool = True
    ) -> list[Draft]:
        after_cwd = start.resolve(self.final(cwd_is_after))
        out: list[tuple[int, Draft]] = []
        if cwd_is_after:
            out += self.cd_drafts(start, cwd)
        commits = [p for p in self.pending if p.type == "git_commit"]
        subjects = commit_lines(stdout)
        nothing = any(refusal in stdout for refusal in COMMIT_REFUSALS)
        for index, item in enumerate(commits):
            if index < len(subjects):
                line_sha, subject, printed = subjects[index]
                item.data["sha"] = line_sha
                item.data["printed"] = printed
                if not item.data.get("message"):
                    item.data["message"] = clip(subject, MESSAGE_CHARS)
            if sha and index == len(commits) - 1:
                item.data["sha"] = sha
            if nothing and "sha" not in item.data:
                item.type = ""  # the commit did not happen
        for at, item in enumerate(self.pending):
            if not item.type:
                continue
            data = dict(item.data)
            if item.type.startswith("git_"):
                where = start.resolve(item.dir_sym) if item.explicit else None
                if item.explicit and where is None:
                    where = item.explicit
                if where is None:
                    ran_in = start.resolve(item.eff)
                    if ran_in is not None and after_cwd is not None and ran_in != after_cwd:
                        where = ran_in  # e.g. `(cd ../lib && git pull)`
                if where:
                    data["dir"] = where
            out.append((at, (item.type, data)))
        out.sort(key=lambda pair: pair[0])  # stable: a cd comes before what follows it
        return [draft for _, draft in out[:MAX_DRAFTS]]

    def cd_drafts(self, start: _Start, cwd: str) -> list[tuple[int, Draft]]:
        """The session's moves. Where the last one went, the payload's cwd says, when the
        command alone cannot (`cd "$DIR"`, `cd -`, `~` with the home unknown); and a path
        equal to the cwd but for case (Windows) is spelt as the file system spells it."""
        out: list[tuple[int, Draft]] = []
        last = len(self.cd_moves) - 1
        previous = ""
        root, comps = _split(cwd.strip())
        actual = _fmt(root, comps) if root else ""
        fold = root.endswith(":/")
        for n, (at, before, after) in enumerate(self.cd_moves):
            if after == before and after is not None:
                continue  # `cd .`
            path = start.resolve(after)
            unknown = path is None or path.startswith("~")
            if actual and ((n == last and unknown) or (path and _same([path], [actual], fold))):
                path = actual
            if path and path != previous:
                out.append((at, ("cwd_change", {"path": path})))
                previous = path
        return out


# -- what the agent sent outside ----------------------------------------------------------

# The forges' command-line clients: ``gh pr comment 12 --body "…"`` and the like.
_FORGES = frozenset({"gh", "glab"})
# (object, action) pairs that send text somewhere (a comment, an issue, a pull request,
# a review, a release); the options that carry its title and text.
_SENDS = frozenset(
    {
        ("pr", "create"), ("pr", "comment"), ("pr", "review"), ("pr", "edit"), ("pr", "merge"),
        ("pr", "close"), ("issue", "create"), ("issue", "comment"), ("issue", "edit"),
        ("issue", "close"), ("release", "create"), ("release", "edit"), ("mr", "create"),
        ("mr", "note"), ("mr", "comment"), ("mr", "update"), ("mr", "merge"), ("gist", "create"),
    }
)  # fmt: skip
_TITLE_OPTS = frozenset({"-t", "--title", "--subject"})
_BODY_OPTS = frozenset({"-b", "--body", "-m", "--message", "--description", "-d", "--notes"})
_FILE_OPTS = frozenset({"-F", "--body-file", "--notes-file"})
# Options of these commands that take a value (so that value is not the target).
_VALUE_OPTS = _TITLE_OPTS | _BODY_OPTS | _FILE_OPTS | frozenset(
    {"-R", "--repo", "-B", "--base", "-H", "--head", "-l", "--label", "-a", "--assignee",
     "-r", "--reviewer", "-M", "--milestone", "-p", "--project", "--target-branch",
     "--source-branch", "--template", "-T"}
)  # fmt: skip


def sent_message(program: str, args: list[shell.Word]) -> dict[str, Any] | None:
    """``gh pr comment 12 --body "…"`` → ``{via, to, title, text}`` (None for a command
    that sends no text: ``gh pr list``, ``gh pr view``)."""
    argv = [w.text for w in args]
    if len(argv) < 2 or (argv[0], argv[1]) not in _SENDS:
        return None
    data: dict[str, Any] = {"via": f"{program} {argv[0]} {argv[1]}"}
    repo = number = title = text = ""
    i = 2
    while i < len(argv):
        arg = argv[i]
        name, eq, inline = arg.partition("=")
        value = inline if eq and name.startswith("--") else None
        key = name if value is not None else arg
        if key in _VALUE_OPTS:
            if value is None:
                i += 1
                value = (args[i].value() or args[i].text) if i < len(args) else ""
            if key in _TITLE_OPTS:
                title = value
            elif key in _BODY_OPTS:
                text = value
            elif key in _FILE_OPTS:
                text = text or f"(from the file {value})"
            elif key in ("-R", "--repo"):
                repo = value
        elif not arg.startswith("-") and not number:
            number = args[i].value() or arg  # the pull request, issue or tag it is about
        i += 1
    target = f"{repo} {number}".strip()
    if not (title or text):
        return None
    if target:
        data["to"] = clip(target, 200)
    if title:
        data["title"] = clip(title, 300)
    if text:
        data["text"] = clip(text, SENT_CHARS)
    return data


def _dash_c(args: list[shell.Word]) -> str | None:
    """The script of ``bash -c SCRIPT`` / ``bash -lc SCRIPT`` (None when not that form)."""
    i = 0
    while i < len(args):
        text = args[i].text
        if text in ("-o", "+o", "-O", "+O"):
            i += 2  # `bash -o pipefail -c …`
            continue
        if text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
            return args[i + 1].value() if i + 1 < len(args) else None
        if not text.startswith(("-", "+")):
            return None  # a script file: not looked into
        i += 1
    return None


# -- git ----------------------------------------------------------------------------------------

_GIT_VALUE_OPTS = frozenset(
    {
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
        "--super-prefix",
        "--list-cmds",
    }
)
_GIT_NO_SUBCOMMAND = frozenset(
    {"--version", "-v", "--help", "-h", "--html-path", "--man-path", "--info-path", "--exec-path"}
)
GIT_QUERIES = frozenset(
    {
        "status", "log", "diff", "show", "blame", "annotate", "rev-parse", "ls-files", "ls-tree",
        "ls-remote", "describe", "shortlog", "grep", "cat-file", "rev-list", "show-ref",
        "for-each-ref", "name-rev", "merge-base", "whatchanged", "check-ignore", "check-attr",
        "var", "count-objects", "fsck", "help", "version", "diff-tree", "diff-files",
        "diff-index", "range-diff", "cherry", "show-branch", "verify-commit", "verify-tag",
    }
)  # fmt: skip
# Subcommands whose first argument decides: these ones only read.
_QUERY_ACTIONS = {
    "stash": {"list", "show"},
    "worktree": {"list"},
    "remote": {"show", "get-url"},
    "submodule": {"status", "summary"},
    "notes": {"list", "show"},
    "bisect": {"log", "view", "visualize"},
    "reflog": {"show", "exists"},
    "sparse-checkout": {"list"},
    "lfs": {"ls-files", "status", "env", "logs"},
}


def git_command(argv: list[str]) -> tuple[str, int, list[str]] | None:
    """``(subcommand, its index, -C directories)`` of a ``git …`` argv, past global options."""
    dirs: list[str] = []
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "-C":
            if i + 1 < len(argv):
                dirs.append(argv[i + 1])
            i += 2
        elif arg in _GIT_VALUE_OPTS:
            i += 2
        elif arg in _GIT_NO_SUBCOMMAND:
            return None
        elif arg.startswith("-"):
            i += 1  # --no-pager, -P, -p, --bare, --git-dir=…, --work-tree=…, -c… etc.
        else:
            return arg, i, dirs
    return None


def _args(argv: list[str]) -> str:
    return clip(shell.join(argv), ARGS_CHARS)


def _positionals(argv: list[str], value_opts: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Non-option arguments (those after ``--`` included), skipping option values."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            out.extend(argv[i + 1 :])
            break
        if arg.startswith("-") and len(arg) > 1:
            i += 2 if arg in value_opts else 1
            continue
        out.append(arg)
        i += 1
    return out


def git_facts(
    sub: str, argv: list[str], words: list[shell.Word], cmd: shell.Command
) -> list[Draft]:
    """The events of one git subcommand (``argv``: its arguments)."""
    if sub == "commit":
        found = _commit(argv, words, cmd)
        return [found] if found else []
    if sub in ("checkout", "switch"):
        return [_checkout(sub, argv)]
    if sub == "branch":
        return [_branch(argv)]
    if sub in GIT_QUERIES:
        return [("git_query", {"op": sub, "args": _args(argv)})]
    if sub in _QUERY_ACTIONS:
        positional = _positionals(argv)
        # Alone, each of them lists, except `git stash`, which stashes.
        reads = positional[0] in _QUERY_ACTIONS[sub] if positional else sub != "stash"
        return [("git_query" if reads else "git_op", {"op": sub, "args": _args(argv)})]
    if sub == "tag":
        creating = {"-a", "-s", "-m", "-F", "-d", "--delete", "-f", "--annotate", "--sign", "-u"}
        listing = {"-l", "--list", "-n", "--contains", "--no-contains", "--points-at", "--merged"}
        reads = not (set(argv) & creating) and (
            bool(set(argv) & listing) or not _positionals(argv, {"--sort", "--format"})
        )
        return [("git_query" if reads else "git_op", {"op": sub, "args": _args(argv)})]
    if sub == "config":
        getters = {
            "--get",
            "--get-all",
            "--get-regexp",
            "--list",
            "-l",
            "get",
            "list",
            "--show-origin",
        }
        scopes = {"--global", "--local", "--system", "--worktree", "--file", "-f"}
        positional = _positionals(argv, {"--file", "-f", "--type", "--default"})
        reads = bool(set(argv) & getters) or (
            len(positional) == 1 and not (set(argv) - scopes - getters - {positional[0]})
        )
        return [("git_query" if reads else "git_op", {"op": sub, "args": _args(argv)})]
    return [("git_op", {"op": sub, "args": _args(argv)})]


_COMMIT_VALUE_LONG = frozenset(
    {
        "--message", "--file", "--reuse-message", "--reedit-message", "--template", "--author",
        "--date", "--fixup", "--squash", "--cleanup", "--trailer", "--pathspec-from-file",
    }
)  # fmt: skip


def _commit(argv: list[str], words: list[shell.Word], cmd: shell.Command) -> Draft | None:
    """``git commit`` → ``git_commit {message}`` (sha and directory are added later)."""
    messages: list[str] = []
    source = ""
    i = 0
    while i < len(argv):
        arg = argv[i]
        value: str | None = None
        option = ""
        if arg == "--":
            break
        if arg.startswith("--"):
            name, eq, _ = arg.partition("=")
            if name == "--dry-run":
                return None
            if name in _COMMIT_VALUE_LONG:
                option = name
                if eq:
                    value = _word_value(words[i], len(name) + 1)
                elif i + 1 < len(argv):
                    i += 1
                    value = _word_value(words[i], 0)
        elif arg.startswith("-") and len(arg) > 1:
            for j, flag in enumerate(arg[1:], start=1):
                if flag in "mFCct":
                    option = "-" + flag
                    if j + 1 < len(arg):
                        value = _word_value(words[i], j + 1)
                    elif i + 1 < len(argv):
                        i += 1
                        value = _word_value(words[i], 0)
                    break
                if flag in "Su":
                    break  # -S[<keyid>], -u[<mode>]: the rest is their value
        i += 1
        if value is None:
            continue
        if option in ("-m", "--message"):
            messages.append(value)
        elif option in ("-F", "--file") and not source:
            if value in ("-", "/dev/stdin"):
                bodies = [r.body for r in cmd.redirects if r.body is not None]
                source = bodies[0].rstrip("\n") if bodies else "file:-"
            else:
                source = "file:" + value
        elif option in ("-C", "-c", "--reuse-message", "--reedit-message") and not source:
            source = "reuse:" + value
        elif option == "--fixup" and not source:
            source = "fixup:" + value
        elif option == "--squash" and not source:
            source = "squash:" + value
    message = "\n\n".join(m.strip() for m in messages) if messages else source
    return ("git_commit", {"message": clip(message, MESSAGE_CHARS)})


def _word_value(word: shell.Word, skip: int) -> str:
    """A word's value (its text when that depends on the shell), minus ``skip`` leading chars."""
    value = word.value()
    return (word.text if value is None else value)[skip:]


# What git commit prints when it makes no commit (wt-status.c): a call that printed one
# of these and no ``[branch sha]`` line committed nothing.
COMMIT_REFUSALS = (
    "nothing to commit",  # "…, working tree clean", "(use -u to show untracked files)", …
    "nothing added to commit",  # "… but untracked files present"
    "no changes added to commit",
)


def commit_lines(stdout: str) -> list[tuple[str, str, str]]:
    """``(sha, subject, printed)`` of each ``[branch abc1234] subject`` line git commit
    prints; ``printed``: that line as printed, with the ``N files changed, …`` line after
    it when there is one (what is asked of a commit: its branch, how much it changed)."""
    found: list[tuple[str, str, str]] = []
    lines = stdout[:SCAN_CHARS].splitlines()
    for n, line in enumerate(lines):
        if not line.startswith("[") or "] " not in line:
            continue
        inside, _, subject = line[1:].partition("] ")
        parts = inside.split()
        if (
            len(parts) >= 2
            and 7 <= len(parts[-1]) <= 64
            and all(c in "0123456789abcdef" for c in parts[-1])
        ):
            printed = line.rstrip()
            if n + 1 < len(lines) and _stat_line(lines[n + 1]):
                printed += "\n" + lines[n + 1].rstrip()
            found.append((parts[-1], subject.strip(), clip(printed, PRINTED_CHARS)))
    return found


def _stat_line(line: str) -> bool:
    """git's summary of what a commit changed: `` 3 files changed, 10 insertions(+)``."""
    count, _, rest = line.strip().partition(" ")
    return count.isdigit() and rest.startswith(("files changed", "file changed"))


def _looks_like_path(arg: str) -> bool:
    if arg in (".", "..") or arg.startswith(("./", "../", "/", ":/")) or "*" in arg:
        return True
    last = arg.rsplit("/", 1)[-1]
    ext = last.rsplit(".", 1)[-1] if "." in last[1:] else ""
    return 1 <= len(ext) <= 5 and ext.isalpha()


def _checkout(sub: str, argv: list[str]) -> Draft:
    """``git checkout``/``git switch`` → ``git_branch`` (or ``git_op`` when restoring files)."""
    create = (
        {"-b", "-B", "--orphan"}
        if sub == "checkout"
        else {"-c", "-C", "--create", "--force-create", "--orphan"}
    )
    value_opts = {"--conflict", "--pathspec-from-file", "--inter-hunk-context"}
    branch = ""
    created = False
    positional: list[str] = []
    files = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        name = arg.partition("=")[0]
        if arg == "--":
            files = True
            break
        if name in create:
            created = True
            if "=" in arg:
                branch = arg.partition("=")[2]
            elif i + 1 < len(argv):
                i += 1
                branch = argv[i]
        elif arg in ("-p", "--patch"):
            files = True
        elif arg in value_opts:
            i += 1
        elif arg == "-" or not arg.startswith("-"):
            positional.append(arg)
        i += 1
    if not branch:
        if files or len(positional) != 1 or (sub == "checkout" and _looks_like_path(positional[0])):
            return ("git_op", {"op": sub, "args": _args(argv)})
        branch = positional[0]
    data: dict[str, Any] = {"op": sub, "branch": branch}
    if created:
        data["created"] = True
    return ("git_branch", data)


def _branch(argv: list[str]) -> Draft:
    """``git branch``: NAME creates, -d/-m/… change, anything else lists."""
    changes = {"-d", "-D", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-u",
               "--set-upstream-to", "--unset-upstream", "--edit-description", "--track", "-t"}  # fmt: skip
    lists = {"-l", "--list", "-a", "--all", "-r", "--remotes", "--show-current", "--contains",
             "--no-contains", "--merged", "--no-merged", "--points-at", "-v", "-vv", "--verbose"}  # fmt: skip
    flags = {a.partition("=")[0] for a in argv if a.startswith("-")}
    if flags & changes:
        return ("git_op", {"op": "branch", "args": _args(argv)})
    positional = _positionals(
        argv, {"--sort", "--format", "--contains", "--merged", "--points-at", "--color", "--column"}
    )
    if flags & lists or not positional:
        return ("git_query", {"op": "branch", "args": _args(argv)})
    return ("git_branch", {"op": "branch", "branch": positional[0], "created": True})


# -- environment setup -----------------------------------------------------------------------

_INSTALL = {
    "pip": {"install"},
    "pipx": {"install", "inject"},
    "pipenv": {"install", "sync"},
    "poetry": {"install", "add"},
    "pdm": {"install", "add", "sync"},
    "npm": {"install", "i", "ci", "add", "in", "isntall"},
    "pnpm": {"install", "i", "add"},
    "yarn": {"", "install", "add"},
    "bun": {"install", "i", "add"},
    "cargo": {"install", "add"},
    "go": {"install", "get"},
    "gem": {"install"},
    "bundle": {"", "install"},
    "bundler": {"", "install"},
    "apt": {"install"},
    "apt-get": {"install"},
    "dnf": {"install"},
    "yum": {"install"},
    "apk": {"add"},
    "brew": {"install"},
    "composer": {"install", "require"},
    "conda": {"install"},
    "mamba": {"install"},
    "micromamba": {"install"},
}
_TOOLCHAIN = {
    "nvm": {"use", "install", "alias"},
    "fnm": {"use", "install", "default"},
    "pyenv": {"install", "local", "global", "shell"},
    "nodenv": {"install", "local", "global", "shell"},
    "goenv": {"install", "local", "global", "shell"},
    "rbenv": {"install", "local", "global", "shell"},
    "asdf": {"install", "local", "global", "shell", "set"},
    "volta": {"install", "pin"},
    "mise": {"use", "install", "local", "global", "shell", "activate"},
    "rtx": {"use", "install", "local", "global", "shell"},
    "rustup": {"default", "install", "toolchain", "override", "target", "component"},
    "sdk": {"use", "install", "default"},
    "corepack": {"enable", "prepare", "use"},
}
_VENV = {
    "conda": {"activate", "deactivate", "create"},
    "mamba": {"activate", "create"},
    "micromamba": {"activate", "create"},
    "pyenv": {"virtualenv", "activate"},
    "poetry": {"env", "shell"},
    "pipenv": {"shell"},
}
_VIEWERS = frozenset(
    {
        "cat", "head", "tail", "less", "more", "bat", "grep", "egrep", "fgrep", "rg", "ag", "ack",
        "git", "ls", "find", "fd", "tree", "wc", "sed", "awk", "jq", "diff", "file", "stat", "du",
    }
)  # fmt: skip
# Shell plumbing that shows nothing of its own.
_QUIET = frozenset(
    {"cd", "pushd", "popd", "export", "source", ".", "set", "unset", "true", ":", "exit", "sleep"}
)


def _first_positional(args: list[str]) -> str:
    for arg in args:
        if not arg.startswith("-"):
            return arg
    return ""


def _is_python(name: str) -> bool:
    """python, python3, python3.11, py, pypy3."""
    if name in ("py", "pypy", "pypy3"):
        return True
    return name.startswith("python") and all(c.isdigit() or c == "." for c in name[6:])


def _python_module(args: list[str]) -> tuple[str, list[str]] | None:
    """``(module, its args)`` of ``python [opts] -m MODULE …``."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-m":
            return (args[i + 1], args[i + 2 :]) if i + 1 < len(args) else None
        if arg.startswith("-m") and len(arg) > 2:
            return arg[2:], args[i + 1 :]
        if arg in ("-X", "-W"):
            i += 2
        elif arg.startswith("-") and arg != "-c":
            i += 1
        else:
            return None
    return None


def env_setup(argv: list[str], whole: list[str]) -> dict[str, Any] | None:
    """``env_setup {kind, tool, detail}`` for a command that sets up the environment."""
    name = prog(argv[0])
    args = argv[1:]
    detail = clip(shell.join(whole), DETAIL_CHARS)
    if name in ("source", "."):
        if not args:
            return None
        script = args[0].replace("\\", "/")
        last = script.rsplit("/", 1)[-1]
        if last == "activate" or last.startswith("activate."):
            return {"kind": "venv", "tool": "venv", "detail": detail}
        return {"kind": "source", "tool": "source", "detail": detail}
    if name in ("export", "declare", "typeset"):
        if name != "export" and "-x" not in args:
            return None
        names = [a.split("=", 1)[0] for a in args if not a.startswith("-")]
        names = [n for n in names if shell.is_name(n)]
        if not names or "-p" in args:
            return None
        # Never the values: only which variables were set.
        return {"kind": "export", "tool": "export", "detail": "export " + " ".join(names)}
    if _is_python(name):
        found = _python_module(args)
        if found is None:
            return None
        module, rest = found
        if module in ("venv", "virtualenv"):
            return {"kind": "venv", "tool": module, "detail": detail}
        if module == "pip" and _first_positional(rest) == "install":
            return {"kind": "install", "tool": "pip", "detail": detail}
        return None
    if name == "virtualenv":
        return {"kind": "venv", "tool": "virtualenv", "detail": detail}
    if name == "pip-sync":
        return {"kind": "install", "tool": "pip", "detail": detail}
    sub = _first_positional(args)
    if name.startswith("pip") and name[3:].replace(".", "").isdigit():
        name = "pip"
    if name == "uv":
        rest = args[args.index(sub) + 1 :] if sub else []
        sub2 = _first_positional(rest)
        if sub == "venv":
            return {"kind": "venv", "tool": "uv", "detail": detail}
        if (
            (sub in ("sync", "add"))
            or (sub == "pip" and sub2 in ("install", "sync"))
            or (sub == "tool" and sub2 == "install")
        ):
            return {"kind": "install", "tool": "uv", "detail": detail}
        if sub == "python" and sub2 in ("install", "pin"):
            return {"kind": "toolchain", "tool": "uv", "detail": detail}
        return None
    if name == "yarn" and sub == "global":
        sub = _first_positional(args[args.index("global") + 1 :])
        if sub == "add":
            return {"kind": "install", "tool": "yarn", "detail": detail}
    if name in _VENV and (sub in _VENV[name]):
        return {"kind": "venv", "tool": name, "detail": detail}
    if name in _INSTALL and sub in _INSTALL[name]:
        return {"kind": "install", "tool": name, "detail": detail}
    if name in _TOOLCHAIN and sub in _TOOLCHAIN[name]:
        return {"kind": "toolchain", "tool": name, "detail": detail}
    return None


def _only_viewers(programs: list[str]) -> bool:
    """Whether every program that ran only displays files (their text is not an outcome)."""
    shown = [p for p in programs if p not in _QUIET]
    return bool(shown) and all(p in _VIEWERS for p in shown)


# -- failures visible in the output -----------------------------------------------------------

_COUNT_WORDS = frozenset({"failed", "failing", "failures", "failure", "errors", "error", "errored"})
_PUNCT = ",;:.=()[]|*!✖×"


def _sample(text: str) -> str:
    if len(text) <= 2 * SCAN_CHARS:
        return text
    return text[:SCAN_CHARS] + "\n" + text[-SCAN_CHARS:]


def _count_line(line: str) -> bool:
    """A summary line with a non-zero count of failures/errors ("2 failed", "errors=1")."""
    tokens = line.replace("|", " ").replace(",", " ").split()
    for i, token in enumerate(tokens):
        word = token.strip(_PUNCT).lower()
        if "=" in word:  # unittest: FAILED (failures=2, errors=1)
            key, _, num = word.partition("=")
            if key in _COUNT_WORDS and num.isdigit() and int(num) > 0:
                return True
            continue
        if word in _COUNT_WORDS and i > 0:
            prev = tokens[i - 1].strip(_PUNCT)
            if prev.isdigit() and int(prev) > 0:
                return True
    return False


def _error_line(line: str) -> bool:
    stripped = line.strip()
    low = stripped.lower()
    if stripped.startswith(
        (
            "error:",
            "error[",
            "ERROR:",
            "fatal error:",
            "fatal: ",
            "npm ERR!",
            "npm error ",
        )
    ):
        return True
    if stripped.startswith("FAILED ") and not stripped.startswith("FAILED ("):
        return True  # pytest's "FAILED tests/x.py::test_y - …" (unittest's counts are below)
    if ": error:" in stripped or ": error TS" in stripped or "): error " in stripped:
        return True
    if "command not found" in low or low.endswith(": not found"):
        return True
    if "panicked at" in stripped or stripped.startswith("Segmentation fault"):
        return True
    # go test: "FAIL", "FAIL\tpkg 0.1s", "--- FAIL: TestX"; cargo: "test result: FAILED."
    return (
        stripped == "FAIL"
        or stripped.startswith(("FAIL\t", "FAIL ", "--- FAIL:"))
        or "test result: FAILED" in stripped
    )


def _traceback(lines: list[str]) -> str:
    """The exception line of the last Python traceback, with where it was raised."""
    start = -1
    for i in range(len(lines) - 1, -1, -1):
        if "Traceback (most recent call last):" in lines[i]:
            start = i
            break
    if start < 0:
        return ""
    where = ""
    for line in lines[start + 1 :]:
        stripped = line.strip()
        if stripped.startswith('File "'):
            where = stripped
        elif stripped and not line[:1].isspace():
            return f"{stripped} ({where})" if where else stripped
    return "Traceback: " + where if where else "Traceback"


def output_error(stdout: str, stderr: str) -> str:
    """The telling lines of a failure shown in a successful command's output ("" if none)."""
    found: list[str] = []
    summary = ""
    for text in (stdout, stderr):
        if not text:
            continue
        sample = _sample(text)
        low = sample.lower()
        if not (
            "fail" in low
            or "error" in low
            or "traceback" in low
            or "not found" in low
            or "panicked" in low
            or "err!" in low
            or "segmentation" in low
        ):
            continue
        lines = sample.splitlines()
        tb = _traceback(lines)
        if tb and tb not in found:
            found.insert(0, tb)
        for line in lines:
            stripped = " ".join(line.strip().strip("=").split())
            if len(found) < 3 and _error_line(line) and stripped[:200] not in found:
                found.append(stripped[:200])
            elif _count_line(line):
                summary = stripped[:200]
    if summary and summary not in found:
        found.append(summary)
    return "\n".join(found)
