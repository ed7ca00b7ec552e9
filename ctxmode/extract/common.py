"""Helpers shared by the extractors: paths, trimming, rule files, lenient field access.

Pure and import-light (no ``os``/``posixpath``/``re``: a hook started with ``-S`` has not
loaded them, and path handling here must also work on Windows-style paths recorded on
another machine, which ``posixpath`` would get wrong).
"""

from __future__ import annotations

from ctxmode import fastjson, redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    # One extracted fact before masking and fitting: (event type, data object).
    Draft = tuple[str, dict[str, Any]]

# Every event's encoded ``data`` stays within this many characters; the dispatcher
# enforces it after masking. The approved plan is the one fact worth more room.
DATA_BUDGET = 1000
# The approved plan; a shell call's whole command line with the head and tail of its
# output; a message the agent sent (a pull request's body).
BUDGETS = {
    "plan_exit": 1600,
    "shell_call": 2800,
    "message_sent": 2400,
    "subagent": 4200,  # with the excerpt of its report (extract.agents.REPORT_HEAD)
    "assistant_reply": 2800,
    # A long prompt's head, tail and standout lines (extract.prompts); a log's excerpt
    # as of a command's output (extract.files.output_read) with its path.
    "user_prompt": 2000,
    "file_read": 2000,
    "mcp_call": 2000,  # names, and the excerpt of what the tool returned
    "job_end": 3200,  # a background agent's report (extract.ongoing.notification)
}

ELLIPSIS = "…"

# Responses above this size are not JSON-decoded just to look for a field or two.
MAX_DECODE_CHARS = 1_000_000


# -- text ------------------------------------------------------------------------------


def trim(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, marked with an ellipsis when cut.

    A cut never splits a ``[REDACTED:…]`` mask: it goes before the mask instead.
    """
    text = text.strip()
    if len(text) <= limit:
        return text
    if limit <= 1:
        return text[: max(limit, 0)]
    return text[: redact.cut_at(text, limit - 1)].rstrip() + ELLIPSIS


def clip(text: str, limit: int) -> str:
    """Mask secrets, then trim: trimming first could cut a token so it no longer matches.

    The payload is masked whole before any extractor runs (ctxmode.extract.masked); this
    masks again what is kept, for callers that skip the dispatcher. It masks a head that
    ends at a line boundary past the cut (redact.safe_head), never a head cut through a
    secret; the margin covers masks that shorten the text (a PEM block becomes a marker).
    """
    return trim(redact.mask(redact.safe_head(text, limit * 4 + 256)), limit)


def one_line(text: str) -> str:
    """Whitespace runs (newlines included) collapsed to single spaces."""
    return " ".join(text.split())


def masked_excerpt(
    text: str, head: int, tail: int, middle: int = 0, keys: Sequence[str] = ()
) -> str:
    """:func:`output_excerpt` of ``text`` masked first: of a long text, a head and a tail
    larger than the excerpt's, each cut where no secret is cut (redact.safe_head/tail),
    are masked whole before the excerpt is cut from them; the lines kept from the middle
    (``middle`` > 0, :func:`standout_lines`) are masked one by one. (Extractors get the
    payload masked already; this keeps a direct caller's excerpt safe too.)"""
    text = text.strip("\n")
    picked: list[str] = []
    if len(text) > head + tail + 40:
        first = redact.safe_head(text, head * 2 + 256)
        last = redact.safe_tail(text, tail * 2 + 256)
        if middle > 0:
            # Lines out of the part between the two excerpts: from the line the head's
            # excerpt stops before (output_excerpt ends it at a line end) to the one the
            # tail's starts after, so a line cut in two by either is still one line here.
            inner = text[_inner_start(text, head) : _inner_end(text, tail)]
            picked = [redact.mask(line) for line in standout_lines(inner, keys, middle)]
        text = first + "\n" + last
    return output_excerpt(redact.mask(text), head, tail, picked)


def _inner_start(text: str, head: int) -> int:
    """Where the part between a head and a tail excerpt starts: the start of the line the
    head's excerpt leaves out (see :func:`output_excerpt`), else ``head``."""
    line_end = text.rfind("\n", 0, head)
    return line_end + 1 if line_end >= head // 2 else head


def _inner_end(text: str, tail: int) -> int:
    """Where that part ends: the end of the line the tail's excerpt leaves out."""
    start = len(text) - tail
    line_start = text.find("\n", start)
    return line_start if 0 <= line_start - start <= tail // 2 else max(start, 0)


def output_excerpt(text: str, head: int, tail: int, middle: Sequence[str] = ()) -> str:
    """The first ``head`` and last ``tail`` characters of ``text``, each cut at a line end
    when one is near (never inside a ``[REDACTED:…]`` mask), joined by a line "…" (with
    ``middle``, lines kept from between them, after it and before another "…"): what a
    command printed, what a tool wrote. Cut from text masked whole already."""
    text = text.strip("\n")
    if len(text) <= head + tail + 40:
        return text
    first = text[: redact.cut_at(text, head)]
    line_end = first.rfind("\n")
    if line_end >= head // 2:
        first = first[:line_end]
    last = text[redact.cut_from(text, len(text) - tail) :]
    line_start = last.find("\n")
    if 0 <= line_start <= tail // 2:
        last = last[line_start + 1 :]
    kept = [line for line in middle if line not in first and line not in last]
    inner = "\n…\n" + "\n".join(kept) if kept else ""
    return f"{first.rstrip()}{inner}\n…\n{last.lstrip(chr(10))}"


# The words of a line that says why a command failed: a compiler's message, the error
# under a traceback, git's "rejected", a tool's "unrecognized option" (lower case,
# substrings). Error codes without the word "error" too: Node's and npm's (ERR_…, npm
# ERR!) and the POSIX errno names a tool prints for a failed system call.
FAILURE_MARKERS = (
    "error", "fail", "\u2717", "\u2718", "\u2716", "denied", "refused", "not found",
    "cannot", "can't", "unable", "invalid", "exception", "fatal", "panic", "does not exist",
    "already exists", "in use", "no such", "undefined", "missing", "unexpected", "timed out",
    "timeout", "killed", "locked", "exit code", "rejected", "unrecognized", "abort",
    "err_", "err!", "enoent", "eacces", "eperm", "ebusy", "eexist", "enospc", "emfile",
    "eaddrinuse", "econnrefused", "econnreset", "etimedout", "enotfound", "eresolve",
)  # fmt: skip

# What makes a line from the middle of a long output worth keeping: it says why a step
# failed, or warns (a build's one failing module among hundreds of compiled ones, "port
# 3000 is in use" between a dev server's banner and its request log), or it says what came
# of a step (two commands' outputs run together: the first's "15 files changed", a build's
# bundle size in kB, "2098 packages installed").
STANDOUT_MARKERS = (
    *FAILURE_MARKERS, "warn", "\u26a0", "deprecated", "traceback",
    "expected", "received",  # an assertion's two sides (Jest's, pytest's, a diff's)
    "passed", "files changed", " kb", "installed", "total",
)  # fmt: skip
STANDOUT_LINE = 200  # a kept line's characters at most
STANDOUT_HITS = 8  # lines taken per marker or key at most (a log of one warning repeated)
_UNBROKEN = 60  # a line this long without a space is data (base64, a hash list): skipped


def standout_lines(text: str, keys: Sequence[str], budget: int) -> list[str]:
    """The lines of ``text`` that look like an error or a warning, or that hold one of
    ``keys`` (the identifiers a command named: what a ``grep`` or a ``cat`` of a long
    file was after), each once, at most ``budget`` characters in all, in their order.
    The lines of the rarest markers and keys are taken first: a word on every line
    tells nothing of any."""
    if budget <= 0 or not text:
        return []
    low = text.lower()
    rarity: dict[int, int] = {}  # line start → the fewest lines a needle it holds is on
    for needle in (*STANDOUT_MARKERS, *(k.lower() for k in keys)):
        found: list[int] = []
        pos = low.find(needle)
        while pos != -1 and len(found) <= STANDOUT_HITS:
            found.append(low.rfind("\n", 0, pos) + 1)
            end = low.find("\n", pos)
            if end == -1:
                break
            pos = low.find(needle, end)
        for start in found[:STANDOUT_HITS]:
            rarity[start] = min(rarity.get(start, len(found)), len(found))
    chosen: list[tuple[int, str]] = []
    used = 0
    for start in sorted(rarity, key=lambda at: (rarity[at], at)):
        end = text.find("\n", start)
        line = text[start : end if end != -1 else len(text)].strip()
        if not line or any(line == kept for _, kept in chosen):
            continue
        if " " not in line and len(line) >= _UNBROKEN:
            continue
        line = trim(line, STANDOUT_LINE)
        if used + len(line) > budget:
            continue
        chosen.append((start, line))
        used += len(line) + 1
    return [line for _, line in sorted(chosen)]


# The turn Claude Code writes when background work ends (a command, an agent, a workflow):
# ``<task-notification>``, in some 2.0.x ``<bash-notification>`` (extract.ongoing reads it,
# the transcript reader passes it on as the prompt 2.1.3xx submits with it).
NOTIFICATION_TAGS = ("<task-notification>", "<bash-notification>")


def tag_text(text: str, tag: str) -> str:
    """The text inside the first ``<tag>…</tag>`` of ``text``, ``""`` when there is none."""
    start = text.find(f"<{tag}>")
    end = text.find(f"</{tag}>", start + 1)
    return text[start + len(tag) + 2 : end] if 0 <= start < end else ""


# -- lenient field access ----------------------------------------------------------------


def s(value: Any) -> str:
    """``value`` if it is a string, else ``""``: payload fields may be null or any type."""
    return value if isinstance(value, str) else ""


def id_str(value: Any) -> str:
    """A task/cell id as a string (clients send ``"1"`` or ``1``)."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return ""


def as_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def as_dict(value: Any) -> dict[str, Any]:
    """A response as a dict: dicts as is, JSON-object strings decoded, anything else ``{}``."""
    if isinstance(value, dict):
        return value
    decoded = decode(value)
    return decoded if isinstance(decoded, dict) else {}


def decode(value: Any) -> Any:
    """A JSON string decoded (when it looks like an object or array), else ``value``."""
    if isinstance(value, str) and len(value) <= MAX_DECODE_CHARS:
        head = value[:64].lstrip()[:1]  # no copy of a large string just to peek
        if head in ("{", "["):
            try:
                return fastjson.loads(value)
            except fastjson.JSONDecodeError:
                return value
    return value


def block_text(value: Any, limit: int) -> str:
    """The text of a response: a string, content blocks, or a dict holding either.

    Collects at most ``limit`` characters so a huge response costs nothing extra.
    """
    parts: list[str] = []
    size = 0

    def add(text: str) -> None:
        nonlocal size
        if size < limit and text.strip():
            parts.append(text[: limit - size])
            size += len(parts[-1])

    def walk(node: Any, depth: int) -> None:
        if depth > 3 or size >= limit:
            return
        if isinstance(node, str):
            decoded = decode(node) if depth == 0 else node
            if decoded is node or isinstance(decoded, str):
                add(node)
            else:
                walk(decoded, depth + 1)
        elif isinstance(node, list):
            for item in node[:50]:
                walk(item, depth + 1)
        elif isinstance(node, dict):
            if isinstance(node.get("text"), str):
                add(node["text"])
                return
            for key in ("content", "result", "output", "message"):
                if key in node:
                    walk(node[key], depth + 1)
                    return

    walk(value, 0)
    return "\n".join(parts)


# -- paths -----------------------------------------------------------------------------


def _split_root(path: str) -> tuple[str, str]:
    """``(root, rest)`` of a ``/``-separated path; root is ``""`` for a relative one."""
    if len(path) >= 2 and path[1] == ":" and path[0].isalpha():
        # Drive paths: "C:/x" is absolute; "C:x" is drive-relative, treated as absolute too
        # (there is no per-drive cwd to resolve it against here).
        return path[0].upper() + ":/", path[2:].lstrip("/")
    if path.startswith("//") and not path.startswith("///"):
        return "//", path[2:]  # UNC share (\\server\share) or POSIX's implementation-defined //
    if path.startswith("/"):
        return "/", path.lstrip("/")
    return "", path


def is_windows(path: str) -> bool:
    return (len(path) >= 2 and path[1] == ":" and path[0].isalpha()) or path.startswith("\\\\")


def normalize(path: str, cwd: str = "") -> str:
    """``/``-separated, ``.``/``..`` resolved, no trailing slash; relative paths joined to cwd."""
    p = path.strip().replace("\\", "/")
    root, rest = _split_root(p)
    if not root and cwd:
        base = cwd.strip().replace("\\", "/")
        if base:
            root, base_rest = _split_root(base)
            rest = base_rest.rstrip("/") + "/" + rest if base_rest else rest
    parts: list[str] = []
    for seg in rest.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not root:
                parts.append("..")  # a relative path may climb; an absolute one stops at /
            continue
        parts.append(seg)
    joined = "/".join(parts)
    if root:
        return root + joined if joined or root != "//" else "/"
    return joined or "."


def rel_path(path: str, project_dir: str, cwd: str = "") -> str:
    """``path`` relative to the project when inside it, else absolute (both normalised)."""
    if not path.strip():
        return ""
    full = normalize(path, cwd or project_dir)
    if not project_dir.strip():
        return full
    proj = normalize(project_dir)
    # Windows file systems are case-insensitive: compare lower-cased, return original case
    # (unless lower-casing changes the length, which would misplace the cut).
    a, b = full, proj
    if is_windows(project_dir.strip()) or is_windows(path.strip()):
        la, lb = full.lower(), proj.lower()
        if len(la) == len(full) and len(lb) == len(proj):
            a, b = la, lb
    if a == b:
        return "."
    prefix = b if b.endswith("/") else b + "/"
    if a.startswith(prefix):
        return full[len(prefix) :]
    return full


# -- rule files --------------------------------------------------------------------------

RULE_NAMES = frozenset({"CLAUDE.md", "CLAUDE.local.md", "AGENTS.md"})
# Folders directly under a ``.claude/`` folder whose every file is an instruction.
RULE_DIRS = frozenset({"rules", "commands", "agents"})
# Under ``.claude/``: transcripts and memory of other projects, never rules of this one.
NOT_RULE_DIRS = frozenset({"projects"})


# A file a program wrote its output to (a log, a background task's output, a captured
# stream): reading one is reading what a command printed, kept like a command's output.
OUTPUT_SUFFIXES = (".log", ".output", ".out", ".err", ".stderr", ".stdout")


def is_output_file(path: str) -> bool:
    """Whether ``path`` names a log or a captured output (``server.log``, ``app.log.1``,
    a client's ``tasks/<id>.output``), by its name alone."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name.endswith(OUTPUT_SUFFIXES) or ".log." in name


def is_rule_file(path: str) -> bool:
    """Whether ``path`` is an instruction file Claude Code loads into the model's context."""
    parts = [seg for seg in path.replace("\\", "/").split("/") if seg]
    if not parts:
        return False
    name = parts[-1]
    # The innermost ``.claude`` decides: a worktree under .claude/worktrees/ has its own.
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == ".claude":
            below = parts[i + 1 :]
            top = below[0]
            if top in NOT_RULE_DIRS:
                return False
            if len(below) >= 2 and top in RULE_DIRS:
                return True
            if len(below) >= 3 and top == "skills" and name == "SKILL.md":
                return True
            return name in RULE_NAMES
    return name in RULE_NAMES


# -- fitting data into its budget ----------------------------------------------------------


def _strings(node: Any, out: list[int], protect: frozenset[str] = frozenset()) -> None:
    if isinstance(node, str):
        out.append(len(node))
    elif isinstance(node, dict):
        for key, value in node.items():
            if key not in protect:
                _strings(value, out)
    elif isinstance(node, list):
        for value in node:
            _strings(value, out)


def _cap(node: Any, cap: int, protect: frozenset[str] = frozenset()) -> Any:
    if isinstance(node, str):
        return node if len(node) <= cap else node[: redact.cut_at(node, cap - 1)] + ELLIPSIS
    if isinstance(node, dict):
        return {k: v if k in protect else _cap(v, cap) for k, v in node.items()}
    if isinstance(node, list):
        return [_cap(value, cap) for value in node]
    return node


def _drop_last(node: Any) -> bool:
    """Remove the last item of the longest list inside ``node``; False if there is none."""
    best: list[Any] | None = None
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            stack.extend(cur.values())
        elif isinstance(cur, list):
            if cur and (best is None or len(cur) > len(best)):
                best = cur
            stack.extend(cur)
    if best is None:
        return False
    best.pop()
    return True


MIN_CAP = 12
# Top-level fields trimmed only when nothing else can give: an error's ``key`` must stay
# exactly what :func:`ctxmode.extract.errors.failure_key` computes, or a later success
# could not be matched to it.
PROTECTED = frozenset({"key"})


def fit(data: dict[str, Any], budget: int) -> str:
    """``data`` as compact JSON of at most ``budget`` characters.

    Shortens the longest strings first (water-filling, so several long fields share the
    cut; protected fields last), then drops trailing list items; as a last resort an
    empty object.
    """
    out = fastjson.dumps(data)
    if len(out) <= budget:
        return out
    for protect in (PROTECTED, frozenset()):
        data, out = _water_fill(data, out, budget, protect)
        if len(out) <= budget:
            return out
    while len(out) > budget and _drop_last(data):
        out = fastjson.dumps(data)
    return out if len(out) <= budget else "{}"


def _water_fill(
    data: dict[str, Any], out: str, budget: int, protect: frozenset[str]
) -> tuple[dict[str, Any], str]:
    for _ in range(6):
        excess = len(out) - budget
        lengths: list[int] = []
        _strings(data, lengths, protect)
        lengths = [n for n in lengths if n > MIN_CAP]
        if excess <= 0 or not lengths:
            break
        # The largest cap that removes at least ``excess`` characters: each string longer
        # than the cap loses (len - cap) characters, and its encoding at least as many.
        lo, hi = MIN_CAP, max(lengths)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if sum(n - mid for n in lengths if n > mid) >= excess:
                lo = mid
            else:
                hi = mid - 1
        data = _cap(data, lo, protect)
        out = fastjson.dumps(data)
    return data, out
