"""A POSIX shell command-line parser: which simple commands does a Bash line run?

Enough of the shell grammar to tell ``cd src && git commit -m "$(cat <<'EOF' … EOF)"``
apart from ``echo "cd /tmp && git push"``: quotes (``'…'``, ``"…"``, ``$'…'``),
backslash escapes and line continuations, the operators ``&& || ; & | |&``, newlines,
subshells ``( … )``, brace groups ``{ …; }``, command substitutions ``$(…)`` and
backticks (nested), process substitutions ``<(…)``, here-documents (``<<EOF``,
``<<'EOF'``, ``<<-EOF``; the body is attached to the command that owns it), here-strings,
redirections, leading ``NAME=value`` assignments and comments.

Nothing is expanded or run: ``$VAR`` stays as written. A word holding a command
substitution keeps the parsed commands, so the common ``"$(cat <<'EOF' … EOF)"`` form
can be resolved to its text (:meth:`Word.value`).

Hand-written rather than :mod:`shlex` (which knows neither operators nor heredocs, and
costs an import on the hook path). Pure, no ``re``, and it never raises: malformed input
(unterminated quotes, stray parentheses, binary garbage) yields a best-effort parse.
Work is bounded: input beyond :data:`MAX_INPUT` characters is ignored and nesting deeper
than :data:`MAX_DEPTH` is kept as literal text.

Long on purpose (~750 lines): it is one recursive-descent parser, whose parts (words,
quotes, operators, here-documents, substitutions) call each other; split, a reader
would have to hold several files to follow one token.
"""

from __future__ import annotations

# Commands longer than this are parsed only up to here: real ones are far shorter, and a
# hook must not spend its budget on a pasted megabyte.
MAX_INPUT = 64 * 1024
# Deeper nesting of subshells/substitutions is kept as literal text.
MAX_DEPTH = 24
# Words and operators parsed at most; the rest of a longer line is ignored. Real commands
# have a few dozen (a heredoc body, however long, counts as nothing), and this bounds
# the worst case (64 KB of `;;;;` or `a a a …`) to a few tens of milliseconds.
MAX_TOKENS = 2000

_BLANKS = " \t\r"
# Characters that end an unquoted word.
_META = " \t\r\n;&|()<>"
# Characters that end a run of plain characters inside a word.
_WORD_STOP = _META + "\\'\"$`("
# Words dropped from the front of a command: they introduce or close a compound command,
# and the command after them is what runs (`then cd x`, `do git add "$f"`, `! grep …`).
_RESERVED_PREFIX = frozenset(
    {"if", "then", "elif", "else", "do", "while", "until", "!", "time", "{", "}"}
)
_RESERVED_ALONE = frozenset({"fi", "done", "esac", "}", "{", "then", "else", "do"})
_ANSI_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "e": "\x1b",
    "E": "\x1b",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_HEX = "0123456789abcdefABCDEF"


class Subst:
    """A command substitution ``$(…)``/backticks, or a process substitution ``<(…)``."""

    __slots__ = ("commands", "source")

    def __init__(self, source: str, commands: list[Command]) -> None:
        self.source = source  # as written, e.g. "$(git rev-parse HEAD)"
        self.commands = commands  # the simple commands it runs, in order

    def output(self) -> str | None:
        """What it prints, when that is knowable without running anything.

        Covers ``cat <<EOF … EOF`` (Claude Code's commit-message idiom), ``cat <<<word``
        and a plain ``echo``; trailing newlines are removed as the shell does.
        """
        runs = [c for c in self.commands if c.argv or c.redirects]
        if len(runs) != 1:
            return None
        cmd = runs[0]
        argv = cmd.argv
        if not argv:
            return None
        if argv[0] == "cat" and (len(argv) == 1 or argv[1:] == ["-"]):
            bodies = [r.body for r in cmd.redirects if r.body is not None and r.fd in ("", "0")]
            if len(bodies) == 1 and bodies[0] is not None:
                return bodies[0].rstrip("\n")
            return None
        if argv[0] == "echo" and not cmd.redirects:
            args = argv[1:]
            newline = True
            while args and args[0] in ("-n", "-E"):
                newline = newline and args[0] != "-n"
                args = args[1:]
            if args and args[0].startswith("-e"):
                return None  # escapes would be interpreted: not worth emulating
            values = [w.value() for w in cmd.words[len(argv) - len(args) :]]
            if any(v is None for v in values):
                return None
            return " ".join(v for v in values if v is not None).rstrip("\n")
        return None


class Word:
    """One word after quote removal: literal text and command substitutions, in order."""

    __slots__ = ("expanded", "parts", "quoted", "tilde")

    def __init__(self) -> None:
        self.parts: list[str | Subst] = []
        self.quoted = False  # some part of it was quoted or escaped
        self.expanded = False  # holds $NAME, ${…} or $((…)): its value depends on the shell
        self.tilde = False  # starts with an unquoted "~" (home directory expansion)

    @property
    def text(self) -> str:
        """The word with quotes removed and substitutions as written."""
        return "".join(p if isinstance(p, str) else p.source for p in self.parts)

    @property
    def substs(self) -> list[Subst]:
        return [p for p in self.parts if isinstance(p, Subst)]

    def value(self) -> str | None:
        """The word's value if it is known without running anything, else ``None``."""
        if self.expanded:
            return None
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
            else:
                text = part.output()
                if text is None:
                    return None
                out.append(text)
        return "".join(out)

    def __repr__(self) -> str:
        return f"Word({self.text!r})"


class Redirect:
    """``[fd]op target``; heredocs and here-strings carry their ``body``."""

    __slots__ = ("body", "fd", "op", "target")

    def __init__(self, fd: str, op: str, target: str) -> None:
        self.fd = fd  # "" when not given ("2" in "2>&1")
        self.op = op  # one of < > >> >| <> <& >& &> &>> << <<- <<<
        self.target = target  # file, fd, or the heredoc delimiter (quotes removed)
        self.body: str | None = None  # heredoc text (each line with its newline) / here-string

    def __repr__(self) -> str:
        return f"Redirect({self.fd}{self.op}{self.target!r})"


class Command:
    """One simple command: assignments, argv, redirections, and where it runs.

    ``scope`` names the shell process that runs it: ``(0,)`` is the main shell; a
    subshell, command substitution, backgrounded command or element of a pipeline
    gets a longer tuple (its parent's scope plus its own number). Only commands in the
    main shell change the session's working directory.
    """

    __slots__ = ("assignments", "redirects", "scope", "sep", "words")

    def __init__(self, scope: tuple[int, ...]) -> None:
        self.scope = scope
        self.words: list[Word] = []
        self.assignments: list[tuple[str, str]] = []  # leading NAME=value, value unquoted
        self.redirects: list[Redirect] = []
        self.sep = ""  # the operator after it: && || ; & | |& ;; or "\n" ("" at the end)

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]

    @property
    def heredocs(self) -> list[str]:
        """Bodies of its here-documents, in order."""
        return [r.body or "" for r in self.redirects if r.op in ("<<", "<<-")]

    @property
    def persistent(self) -> bool:
        """Runs in the main shell (so ``cd`` or ``export`` there outlives the command)."""
        return len(self.scope) == 1

    def __repr__(self) -> str:
        return f"Command({self.argv!r}, scope={self.scope!r}, sep={self.sep!r})"


def parse(text: str) -> list[Command]:
    """Every simple command in ``text``, in the order the shell would run them.

    Commands inside ``$(…)``, backticks and subshells are included (before the command
    whose word holds them). Never raises.
    """
    try:
        return _Parser(text[:MAX_INPUT] if isinstance(text, str) else "", 0, [0, MAX_TOKENS]).run()
    except Exception:  # pragma: no cover - defence in depth; the parser is written not to raise
        return []


def parse_strict(text: str) -> list[Command]:
    """:func:`parse` without the safety net (for tests: a bug must show, not be hidden)."""
    return _Parser(text[:MAX_INPUT], 0, [0, MAX_TOKENS]).run()


def quote(word: str) -> str:
    """``word`` as the shell would need it written (for display)."""
    if word and all(c.isalnum() or c in "@%+=:,./-_~^" for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def join(argv: list[str]) -> str:
    """A command line that reads back as ``argv`` (for display)."""
    words = [quote(a) for a in argv]
    if words and words[0] == argv[0]:
        first = argv[0]
        eq = first.find("=")
        # A bare first word that the shell would read as a keyword or an assignment.
        if (
            first in _RESERVED_PREFIX
            or first in _RESERVED_ALONE
            or (eq > 0 and is_name(first[:eq].removesuffix("+")))
        ):
            words[0] = "'" + first + "'"
    return " ".join(words)


def is_name(text: str) -> bool:
    """A shell variable name (``[A-Za-z_][A-Za-z0-9_]*``)."""
    return bool(text) and (text[0].isalpha() or text[0] == "_") and text.replace("_", "a").isalnum()


class _Parser:
    """Recursive descent over one string; ``i`` is the read position."""

    def __init__(self, text: str, depth: int, counter: list[int]) -> None:
        self.s = text
        self.n = len(text)
        self.i = 0
        self.depth = depth
        # Shared with nested parsers (backticks re-parse): [last scope number, tokens left].
        self.counter = counter
        self.pending: list[Redirect] = []  # heredocs whose body starts at the next newline

    def run(self) -> list[Command]:
        return self.seq((0,), "")

    def new_scope(self, scope: tuple[int, ...]) -> tuple[int, ...]:
        self.counter[0] += 1
        return (*scope, self.counter[0])

    # -- blanks, comments, heredoc bodies -----------------------------------------------

    def skip(self, newlines: bool) -> None:
        """Skip blanks, line continuations and comments (and newlines when asked)."""
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c in _BLANKS:
                self.i += 1
            elif c == "\\" and s.startswith("\n", self.i + 1):
                self.i += 2
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c == "\n" and newlines:
                self.i += 1
                self.read_heredocs()
            else:
                return

    def read_heredocs(self) -> None:
        """Read the bodies of pending heredocs; the position is just after a newline."""
        pending, self.pending = self.pending, []
        s, n = self.s, self.n
        for redirect in pending:
            delim = redirect.target
            strip_tabs = redirect.op == "<<-"
            lines: list[str] = []
            while self.i < n:
                start = self.i
                end = s.find("\n", start)
                line = s[start:] if end < 0 else s[start:end]
                self.i = n if end < 0 else end + 1
                check = line.lstrip("\t") if strip_tabs else line
                if check.rstrip("\r") == delim:
                    break
                if (
                    self.depth
                    and check.startswith(delim)
                    and check[len(delim) :].lstrip().startswith(")")
                ):
                    # "EOF)" closing a substitution on the delimiter line: bash accepts it.
                    self.i = start + (len(line) - len(check)) + len(delim)
                    break
                lines.append(check if end < 0 else check + "\n")
            redirect.body = "".join(lines)

    # -- lists and pipelines --------------------------------------------------------------

    def seq(self, scope: tuple[int, ...], close: str) -> list[Command]:
        """A command list up to ``close`` (")" or "}") or the end; consumes ``close``."""
        items: list[tuple[list[Command], str]] = []
        s, n = self.s, self.n
        while True:
            self.skip(newlines=True)
            if self.counter[1] <= 0:
                self.i = n  # over budget: the rest is not parsed
            if self.i >= n:
                break
            c = s[self.i]
            if c == ")" and close == ")":
                self.i += 1
                break
            if c == "}" and close == "}" and (self.i + 1 >= n or s[self.i + 1] in _META):
                self.i += 1
                break
            start = self.i
            cmds = self.item(scope)
            op = self.operator()
            if cmds:
                cmds[-1].sep = op
            items.append((cmds, op))
            if self.i == start:
                self.i += 1  # a character no rule consumes (stray ")" or "}"): skip it
        self.fork_pipelines(items, scope)
        return [c for cmds, _ in items for c in cmds]

    def fork_pipelines(
        self, items: list[tuple[list[Command], str]], scope: tuple[int, ...]
    ) -> None:
        """Give each element of a pipeline, and each backgrounded item, its own scope."""
        k = 0
        while k < len(items):
            end = k
            while end < len(items) - 1 and items[end][1] in ("|", "|&"):
                end += 1
            group = items[k : end + 1]
            if len(group) > 1 or group[-1][1] == "&":
                for cmds, _ in group:
                    forked = self.new_scope(scope)
                    for cmd in cmds:
                        cmd.scope = forked + cmd.scope[len(scope) :]
            k = end + 1

    def operator(self) -> str:
        self.skip(newlines=False)
        s, i = self.s, self.i
        if i >= self.n or s[i] not in ";&|\n":
            return ""
        self.counter[1] -= 1
        for op in (";;&", "&&", "||", ";;", ";&", "|&", ";", "|", "&"):
            if s.startswith(op, i):
                self.i += len(op)
                return op
        if s[i] == "\n":
            self.i += 1
            self.read_heredocs()
            return "\n"
        return ""

    def item(self, scope: tuple[int, ...]) -> list[Command]:
        """One pipeline element: a subshell, a brace group or a simple command."""
        self.skip(newlines=False)
        s, i, n = self.s, self.i, self.n
        if i >= n:
            return []
        if s.startswith("((", i):  # arithmetic command: nothing runs
            self.i = self.balanced(i + 1, "(", ")")
            self.trailing_redirects([], scope)
            return []
        if s[i] == "(":
            self.i += 1
            if self.depth >= MAX_DEPTH:
                self.i = self.balanced(i, "(", ")")
                return []
            self.depth += 1
            cmds = self.seq(self.new_scope(scope), ")")
            self.depth -= 1
            self.trailing_redirects(cmds, scope)
            return cmds
        if s[i] == "{" and (i + 1 >= n or s[i + 1] in " \t\r\n"):
            self.i += 1
            if self.depth >= MAX_DEPTH:
                self.i = self.balanced(i, "{", "}")
                return []
            self.depth += 1
            cmds = self.seq(scope, "}")
            self.depth -= 1
            self.trailing_redirects(cmds, scope)
            return cmds
        return self.simple(scope)

    def trailing_redirects(self, cmds: list[Command], scope: tuple[int, ...]) -> None:
        """Redirections after ``)``/``}`` apply to the group: read them past (kept on none)."""
        holder = Command(scope)
        nested: list[Command] = []
        while True:
            self.skip(newlines=False)
            if not self.at_redirect():
                return
            self.redirect(holder, nested, scope)
            cmds.extend(nested)
            nested.clear()

    def balanced(self, i: int, open_: str, close: str) -> int:
        """Position after the ``close`` matching the ``open_`` at ``i`` (quotes skipped)."""
        s, n = self.s, self.n
        depth = 0
        while i < n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == "'" or c == '"':
                end = s.find(c, i + 1)
                i = n if end < 0 else end + 1
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth <= 0:
                    return i + 1
            i += 1
        return n

    # -- simple commands --------------------------------------------------------------------

    def at_redirect(self) -> bool:
        s, i, n = self.s, self.i, self.n
        j = i
        while j < n and s[j].isdigit():
            j += 1
        if j < n and s[j] in "<>":
            # "<(" / ">(" at the start of a word is a process substitution, not a redirection.
            return not (j == i and s.startswith("(", j + 1))
        return s.startswith("&>", i)

    def simple(self, scope: tuple[int, ...]) -> list[Command]:
        cmd = Command(scope)
        nested: list[Command] = []  # commands of its substitutions: they run first
        s, n = self.s, self.n
        while True:
            self.skip(newlines=False)
            if self.i >= n or self.counter[1] <= 0:
                break
            c = s[self.i]
            if self.at_redirect():
                self.redirect(cmd, nested, scope)
                continue
            if c in ";&|)\n":
                break
            if c == "(":
                if len(cmd.words) == 1 and s.startswith("()", self.i):
                    # "name() { …; }" defines a function: its body does not run here and
                    # now, so it gets a scope of its own (its cd changes nothing).
                    self.i += 2
                    cmd.words.clear()
                    self.skip(newlines=True)
                    nested.extend(self.item(self.new_scope(scope)))
                    return nested
                break
            start = self.i
            word = self.word(scope, nested)
            if self.i == start:  # nothing consumed: should not happen, but never loop
                self.i += 1
                continue
            raw = s[start : self.i]
            eq = raw.find("=")
            name = raw[: eq - 1] if eq > 0 and raw[eq - 1] == "+" else raw[:eq]
            if not cmd.words and eq > 0 and is_name(name):
                text = word.text
                cmd.assignments.append((name, text[text.find("=") + 1 :]))
            else:
                cmd.words.append(word)
        # Reserved words that open a compound command leave the command that follows them;
        # a closing one (`done < f`) leaves nothing that runs.
        closing = False
        while cmd.words and not cmd.words[0].quoted and cmd.words[0].text in _RESERVED_PREFIX:
            if len(cmd.words) == 1 and cmd.words[0].text in _RESERVED_ALONE:
                break
            del cmd.words[0]
        if len(cmd.words) == 1 and cmd.words[0].text in _RESERVED_ALONE and not cmd.words[0].quoted:
            cmd.words.clear()
            closing = True
        if cmd.words or cmd.assignments or (cmd.redirects and not closing):
            nested.append(cmd)
        return nested

    def redirect(self, cmd: Command, nested: list[Command], scope: tuple[int, ...]) -> None:
        s, n = self.s, self.n
        start = self.i
        while self.i < n and s[self.i].isdigit():
            self.i += 1
        fd = s[start : self.i]
        op = ""
        for candidate in ("<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">&", ">|", ">", "&>>", "&>"):
            if s.startswith(candidate, self.i):
                op = candidate
                break
        self.i += len(op)
        self.skip(newlines=False)
        target = ""
        word: Word | None = None
        if self.i < n and s[self.i] not in _META:
            word = self.word(scope, nested)
            target = word.text
        redirect = Redirect(fd, op, target)
        if op in ("<<", "<<-"):
            self.pending.append(redirect)
        elif op == "<<<":
            value = word.value() if word is not None else None
            redirect.body = (target if value is None else value) + "\n"
        cmd.redirects.append(redirect)

    # -- words ---------------------------------------------------------------------------------

    def word(self, scope: tuple[int, ...], nested: list[Command]) -> Word:
        """Read one word at ``i`` (which is not a blank or an operator)."""
        s, n = self.s, self.n
        self.counter[1] -= 1
        w = Word()
        buf: list[str] = []
        start = self.i
        if s.startswith("~", self.i):
            w.tilde = True
        while self.i < n:
            if self.counter[1] <= 0:
                self.i = n
                break
            c = s[self.i]
            if c in "<>" and self.i == start and s.startswith("(", self.i + 1):
                self.i += 1  # process substitution <(…) / >(…)
                self.substitution(w, buf, scope, nested, self.i - 1)
                continue
            if c == "(":
                # Array assignment a=(…) and extended globs @(…) !(…): literal text.
                prev = s[self.i - 1] if self.i > start else ""
                if prev and prev in "=@!+*?":
                    end = self.balanced(self.i, "(", ")")
                    buf.append(s[self.i : end])
                    self.i = end
                    continue
                break
            if c in _META:
                break
            if c in "\\'\"$`":
                self.counter[1] -= 1  # each quoted or expanded segment costs as a token
            if c == "\\":
                nxt = s[self.i + 1 : self.i + 2]
                self.i += 2
                if nxt == "\n":
                    continue  # line continuation
                w.quoted = True
                buf.append(nxt or "\\")
            elif c == "'":
                end = s.find("'", self.i + 1)
                end = n if end < 0 else end
                buf.append(s[self.i + 1 : end])
                self.i = end + 1
                w.quoted = True
            elif c == '"':
                self.i += 1
                w.quoted = True
                self.double_quoted(w, buf, scope, nested)
            elif c == "$":
                self.dollar(w, buf, scope, nested, quoted=False)
            elif c == "`":
                self.backticks(w, buf, scope, nested)
            else:
                j = self.i + 1
                while j < n and s[j] not in _WORD_STOP:
                    j += 1
                buf.append(s[self.i : j])
                self.i = j
        if buf:
            w.parts.append("".join(buf))
        return w

    def double_quoted(
        self, w: Word, buf: list[str], scope: tuple[int, ...], nested: list[Command]
    ) -> None:
        s, n = self.s, self.n
        while self.i < n:
            if self.counter[1] <= 0:
                self.i = n
                return
            c = s[self.i]
            if c == '"':
                self.i += 1
                return
            if c in "\\$`":
                self.counter[1] -= 1
            if c == "\\":
                nxt = s[self.i + 1 : self.i + 2]
                self.i += 2
                if nxt == "\n":
                    continue
                if nxt in ("$", "`", '"', "\\"):
                    buf.append(nxt)
                else:
                    buf.append("\\" + nxt)
            elif c == "$":
                self.dollar(w, buf, scope, nested, quoted=True)
            elif c == "`":
                self.backticks(w, buf, scope, nested)
            else:
                j = self.i + 1
                while j < n and s[j] not in '"\\$`':
                    j += 1
                buf.append(s[self.i : j])
                self.i = j

    def dollar(
        self, w: Word, buf: list[str], scope: tuple[int, ...], nested: list[Command], quoted: bool
    ) -> None:
        """``$…`` at ``i``: ANSI-C string, substitution, or an expansion kept as written."""
        s, n, i = self.s, self.n, self.i
        nxt = s[i + 1 : i + 2]
        if nxt == "'" and not quoted:
            self.i = i + 2
            buf.append(self.ansi_c())
            w.quoted = True
        elif nxt == '"' and not quoted:
            self.i = i + 2
            w.quoted = True
            self.double_quoted(w, buf, scope, nested)
        elif s.startswith("((", i + 1):
            end = self.balanced(i + 1, "(", ")")
            buf.append(s[i:end])
            self.i = end
            w.expanded = True
        elif nxt == "(":
            self.i = i + 1
            self.substitution(w, buf, scope, nested, i)
        elif nxt == "{":
            end = self.balanced(i + 1, "{", "}")
            buf.append(s[i:end])
            self.i = end
            w.expanded = True
        elif nxt and (nxt.isalnum() or nxt in "_@*#?$!-"):
            j = i + 2
            if nxt.isalpha() or nxt == "_":
                while j < n and (s[j].isalnum() or s[j] == "_"):
                    j += 1
            buf.append(s[i:j])
            self.i = j
            w.expanded = True
        else:
            buf.append("$")
            self.i = i + 1

    def substitution(
        self, w: Word, buf: list[str], scope: tuple[int, ...], nested: list[Command], start: int
    ) -> None:
        """``(`` at ``i`` opens a substitution whose source starts at ``start``."""
        if buf:
            w.parts.append("".join(buf))
            buf.clear()
        if self.depth >= MAX_DEPTH:
            self.i = self.balanced(self.i, "(", ")")
            w.parts.append(self.s[start : self.i])
            w.expanded = True
            return
        self.i += 1
        self.depth += 1
        commands = self.seq(self.new_scope(scope), ")")
        self.depth -= 1
        w.parts.append(Subst(self.s[start : self.i], commands))
        nested.extend(commands)

    def backticks(
        self, w: Word, buf: list[str], scope: tuple[int, ...], nested: list[Command]
    ) -> None:
        """`…` at ``i``: its text, unescaped, is parsed on its own (that is how bash does it)."""
        s, n = self.s, self.n
        start = self.i
        self.i += 1
        inner: list[str] = []
        while self.i < n and s[self.i] != "`":
            c = s[self.i]
            if c == "\\" and s[self.i + 1 : self.i + 2] in ("`", "$", "\\"):
                inner.append(s[self.i + 1])
                self.i += 2
            else:
                inner.append(c)
                self.i += 1
        self.i = min(self.i + 1, n)
        if buf:
            w.parts.append("".join(buf))
            buf.clear()
        source = s[start : self.i]
        if self.depth >= MAX_DEPTH:
            w.parts.append(source)
            w.expanded = True
            return
        sub = _Parser("".join(inner), self.depth + 1, self.counter)
        commands = sub.seq(self.new_scope(scope), "")
        w.parts.append(Subst(source, commands))
        nested.extend(commands)

    def ansi_c(self) -> str:
        """The body of ``$'…'`` from ``i`` (just past the quote), escapes decoded."""
        s, n = self.s, self.n
        out: list[str] = []
        while self.i < n:
            c = s[self.i]
            if c == "'":
                self.i += 1
                break
            if c != "\\" or self.i + 1 >= n:
                out.append(c)
                self.i += 1
                continue
            e = s[self.i + 1]
            self.i += 2
            if e in _ANSI_ESCAPES:
                out.append(_ANSI_ESCAPES[e])
            elif e in "xuU":
                limit = {"x": 2, "u": 4, "U": 8}[e]
                j = self.i
                while j < n and j - self.i < limit and s[j] in _HEX:
                    j += 1
                if j == self.i:
                    out.append("\\" + e)
                else:
                    code = int(s[self.i : j], 16)
                    out.append(chr(code) if code <= 0x10FFFF else "\ufffd")
                    self.i = j
            elif e in "01234567":
                j = self.i
                while j < n and j - self.i < 2 and s[j] in "01234567":
                    j += 1
                out.append(chr(int(e + s[self.i : j], 8) & 0xFF))
                self.i = j
            elif e == "c" and self.i < n:
                out.append(chr(ord(s[self.i]) & 0x1F))
                self.i += 1
            else:
                out.append("\\" + e)
        return "".join(out)
