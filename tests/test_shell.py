"""The shell parser: simple commands, the way a POSIX shell splits a command line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmode.extract import shell
from ctxmode.extract.shell import parse, parse_strict


def runs(text: str) -> list[tuple[list[str], bool]]:
    """``(argv, runs in the main shell)`` of every simple command, in order."""
    return [(c.argv, c.persistent) for c in parse_strict(text)]


# (command line, [(argv, persistent)]) — what runs, and whether in the main shell.
SPLITS = [
    ("ls -la", [(["ls", "-la"], True)]),
    ("cd src && ls", [(["cd", "src"], True), (["ls"], True)]),
    ("make || echo failed; echo done", [(["make"], True), (["echo", "failed"], True), (["echo", "done"], True)]),
    ("a\nb\n\nc", [(["a"], True), (["b"], True), (["c"], True)]),
    ("sleep 1 & wait", [(["sleep", "1"], False), (["wait"], True)]),
    ("ls | grep x | wc -l", [(["ls"], False), (["grep", "x"], False), (["wc", "-l"], False)]),
    ("make 2>&1 |& tee log", [(["make"], False), (["tee", "log"], False)]),
    # quotes: single, double with escapes, ANSI-C, locale
    ("echo 'a b' \"c d\"", [(["echo", "a b", "c d"], True)]),
    ('echo "say \\"hi\\" \\$HOME \\q"', [(["echo", 'say "hi" $HOME \\q'], True)]),
    ("echo $'tab\\there\\nnew\\x41\\u00e9\\101'", [(["echo", "tab\there\nnewAéA"], True)]),
    ("echo $'\\0101'", [(["echo", "\x081"], True)]),  # octal takes 1-3 digits, as in bash
    ('echo $"locale"', [(["echo", "locale"], True)]),
    ("echo a\\ b c\\\nd", [(["echo", "a b", "cd"], True)]),
    ("git \\\n  status", [(["git", "status"], True)]),
    ("echo ''", [(["echo", ""], True)]),
    ("echo a'b'\"c\"d", [(["echo", "abcd"], True)]),
    # text that only mentions commands runs nothing
    ('echo "cd /tmp && git push"', [(["echo", "cd /tmp && git push"], True)]),
    ("echo 'git commit -m x; cd /'", [(["echo", "git commit -m x; cd /"], True)]),
    ("grep -r 'cd ..' .  # cd /etc", [(["grep", "-r", "cd ..", "."], True)]),
    ("echo a#b", [(["echo", "a#b"], True)]),
    # subshells, groups, substitutions
    ("(cd sub && make) && ls", [(["cd", "sub"], False), (["make"], False), (["ls"], True)]),
    ("{ cd a; git status; } > out", [(["cd", "a"], True), (["git", "status"], True)]),
    ("echo $(cd /tmp && pwd)", [(["cd", "/tmp"], False), (["pwd"], False), (["echo", "$(cd /tmp && pwd)"], True)]),
    ("echo `git rev-parse HEAD`", [(["git", "rev-parse", "HEAD"], False), (["echo", "`git rev-parse HEAD`"], True)]),
    ("echo \"$(git log -1 --format=%s)\"", [(["git", "log", "-1", "--format=%s"], False), (["echo", "$(git log -1 --format=%s)"], True)]),
    ("echo `echo \\`git log\\``", [(["git", "log"], False), (["echo", "`git log`"], False), (["echo", "`echo \\`git log\\``"], True)]),
    ("diff <(git show HEAD:a) b", [(["git", "show", "HEAD:a"], False), (["diff", "<(git show HEAD:a)", "b"], True)]),
    ("echo $((1 + 2)) ${x:-y} $HOME", [(["echo", "$((1 + 2))", "${x:-y}", "$HOME"], True)]),
    ("((i++)); echo $i", [(["echo", "$i"], True)]),
    # compound commands: the commands inside them
    ("if [ -d x ]; then cd x; else cd y; fi", [(["[", "-d", "x", "]"], True), (["cd", "x"], True), (["cd", "y"], True)]),
    ("for f in *.py; do git add \"$f\"; done", [(["for", "f", "in", "*.py"], True), (["git", "add", "$f"], True)]),
    ("while read l; do echo $l; done < f", [(["read", "l"], True), (["echo", "$l"], True)]),
    ("! grep -q x f", [(["grep", "-q", "x", "f"], True)]),
    ("f() { cd /x; }; f", [(["cd", "/x"], False), (["f"], True)]),
    ("a=(1 2 3); echo ${a[0]}", [([], True), (["echo", "${a[0]}"], True)]),
    # Windows-style paths in quotes keep their backslashes
    ("cd 'C:\\Users\\dev' && dir", [(["cd", "C:\\Users\\dev"], True), (["dir"], True)]),
    ('cd "C:\\Program Files\\Git"', [(["cd", "C:\\Program Files\\Git"], True)]),
    ("cd C:\\\\work", [(["cd", "C:\\work"], True)]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), SPLITS)
def test_split_into_simple_commands(text: str, expected: list[tuple[list[str], bool]]) -> None:
    assert runs(text) == expected


@pytest.mark.parametrize(
    ("text", "assignments", "argv"),
    [
        ("FOO=1 BAR='two words' make -j4", [("FOO", "1"), ("BAR", "two words")], ["make", "-j4"]),
        ("A=1", [("A", "1")], []),
        ("PATH+=:/x cmd", [("PATH", ":/x")], ["cmd"]),
        ("env A=1 cmd", [], ["env", "A=1", "cmd"]),  # an argument of env, not an assignment
        ("cmd A=1", [], ["cmd", "A=1"]),
        ("'A=1' cmd", [], ["A=1", "cmd"]),
        ("export TOKEN=abc", [], ["export", "TOKEN=abc"]),
    ],
)
def test_assignments(text: str, assignments: list[tuple[str, str]], argv: list[str]) -> None:
    (cmd,) = parse_strict(text)
    assert cmd.assignments == assignments
    assert cmd.argv == argv


@pytest.mark.parametrize(
    ("text", "redirects"),
    [
        ("make >out 2>&1", [("", ">", "out"), ("2", ">&", "1")]),
        ("cat < in >> log", [("", "<", "in"), ("", ">>", "log")]),
        ("cmd &>all.log", [("", "&>", "all.log")]),
        ("cmd 2> 'err file'", [("2", ">", "err file")]),
        ("cmd >| f 3<>g", [("", ">|", "f"), ("3", "<>", "g")]),
        ("echo a2>f", [("", ">", "f")]),
    ],
)
def test_redirections(text: str, redirects: list[tuple[str, str, str]]) -> None:
    (cmd,) = parse_strict(text)
    assert [(r.fd, r.op, r.target) for r in cmd.redirects] == redirects
    assert "f" not in cmd.argv[1:] or text.startswith("echo a2")


@pytest.mark.parametrize(
    ("text", "owner", "bodies", "after"),
    [
        ("cat <<EOF\nline $x\nEOF\nls", ["cat"], ["line $x\n"], [["ls"]]),
        ("cat <<'EOF'\nraw `x`\nEOF", ["cat"], ["raw `x`\n"], []),
        ('cat <<"END" > f\na\nb\nEND', ["cat"], ["a\nb\n"], []),
        ("cat <<-EOF\n\tindented\n\tEOF\necho ok", ["cat"], ["indented\n"], [["echo", "ok"]]),
        # the body belongs to the command that owns the redirection, wherever the line ends
        (
            "cat <<EOF | grep x\nx1\nEOF\necho done",
            ["cat"],
            ["x1\n"],
            [["grep", "x"], ["echo", "done"]],
        ),
        ("cat <<A; cat <<B\n1\nA\n2\nB", ["cat"], ["1\n"], [["cat"]]),
        # unterminated: the body runs to the end
        ("cat <<EOF\nno end", ["cat"], ["no end"], []),
        # a line that merely starts with the delimiter does not end the body
        ("cat <<EOF\nEOFX\nEOF", ["cat"], ["EOFX\n"], []),
    ],
)
def test_heredocs(text: str, owner: list[str], bodies: list[str], after: list[list[str]]) -> None:
    cmds = parse_strict(text)
    assert cmds[0].argv == owner
    assert cmds[0].heredocs == bodies
    assert [c.argv for c in cmds[1:]] == after


def test_two_heredocs_on_one_line_take_the_following_lines_in_order() -> None:
    first, second = parse_strict("cat <<A; cat <<B\n1\nA\n2\nB")
    assert (first.heredocs, second.heredocs) == (["1\n"], ["2\n"])


def test_here_string() -> None:
    (cmd,) = parse_strict("git commit -F - <<<'the message'")
    assert [(r.op, r.body) for r in cmd.redirects] == [("<<<", "the message\n")]


CLAUDE_COMMIT = "git commit -m \"$(cat <<'EOF'\nFix the parser (issue 3)\n\nCloses #3.\nEOF\n)\""


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # Claude Code's commit idiom, with a ")" inside the heredoc body
        (CLAUDE_COMMIT, "Fix the parser (issue 3)\n\nCloses #3."),
        ('git commit -m "$(cat <<EOF\nplain\nEOF\n)"', "plain"),
        (
            "git commit -m \"$(cat <<'EOF'\nclosed on the delimiter line\nEOF)\"",
            "closed on the delimiter line",
        ),
        ('git commit -m "prefix: $(echo hello world)"', "prefix: hello world"),
        ("git commit -m \"$(cat <<<'here string')\"", "here string"),
        ("git commit -m `cat <<EOF\nbackticks\nEOF\n`", "backticks"),
        ('git commit -m "$(git log -1 --format=%s)"', None),  # needs running git
        ('git commit -m "$MSG"', None),
        ("git commit -m '$MSG'", "$MSG"),
    ],
)
def test_word_value_resolves_the_common_substitutions(text: str, value: str | None) -> None:
    git = next(c for c in parse_strict(text) if c.argv[:2] == ["git", "commit"])
    assert git.words[3].value() == value


def test_words_keep_their_substitutions() -> None:
    git = parse_strict(CLAUDE_COMMIT)[-1]
    (subst,) = git.words[3].substs
    assert subst.source.startswith("$(cat <<'EOF'") and subst.source.endswith(")")
    assert [c.argv for c in subst.commands] == [["cat"]]


def test_tilde_is_marked_only_when_unquoted() -> None:
    (a,) = parse_strict("cd ~/x")
    (b,) = parse_strict("cd '~/x'")
    assert (a.words[1].tilde, b.words[1].tilde) == (True, False)
    assert a.argv == b.argv == ["cd", "~/x"]


def test_scopes_say_which_shell_runs_a_command() -> None:
    cmds = parse_strict("cd a; (cd b; (cd c)); x | y; cd d")
    scopes = {tuple(c.argv): c.scope for c in cmds}
    assert scopes[("cd", "a")] == scopes[("cd", "d")] == (0,)
    inner = scopes[("cd", "c")]
    assert inner[: len(scopes[("cd", "b")])] == scopes[("cd", "b")]  # nested in the subshell
    assert scopes[("x",)] != scopes[("y",)]  # each side of a pipe is its own process


@pytest.mark.parametrize(
    ("text", "seps"),
    [
        ("a && b || c; d & e | f\ng", ["&&", "||", ";", "&", "|", "\n", ""]),
        ("a;;", [";;"]),
    ],
)
def test_separators(text: str, seps: list[str]) -> None:
    assert [c.sep for c in parse_strict(text)] == seps


@pytest.mark.parametrize(
    "text",
    [
        "echo 'unterminated",
        'echo "unterminated $(',
        "echo $(unterminated",
        "echo `unterminated",
        "cat <<",
        "cat <<EOF",
        ")))(((",
        "}}}{{{",
        "&& || ;; | &",
        "\\",
        "$",
        "${",
        "$((",
        "a=(",
        "<(",
        "\x00\x01\xff\ud800",
        "case $x in a) cd /x;; esac",
        "\r\n\r\n",
    ],
)
def test_malformed_input_never_raises(text: str) -> None:
    cmds = parse_strict(text)
    assert all(isinstance(c, shell.Command) for c in cmds)


def test_unterminated_quote_keeps_the_rest_as_one_word() -> None:
    assert runs("echo 'a && cd /tmp") == [(["echo", "a && cd /tmp"], True)]


def test_parse_is_bounded_on_huge_and_adversarial_input() -> None:
    inputs = [
        "a" * 1_000_000,
        "cd a && " * 20_000,
        "$(" * 40_000,
        "`" * 60_000,
        "'\"" * 40_000,
        "&&||;;|&" * 10_000,
        "cat <<EOF " * 8_000 + "\n" + "x\n" * 20_000,
    ]
    for text in inputs:  # each parses (timings: benchmarks/shell_bench.py)
        assert isinstance(parse(text), list), text[:20]
    assert len(parse("true;" * 40_000)) <= shell.MAX_TOKENS


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["git", "commit", "-m", "it's done"], "git commit -m 'it'\\''s done'"),
        (["ls", "-la", "src/app.py"], "ls -la src/app.py"),
        (["echo", ""], "echo ''"),
        (["if", "x"], "'if' x"),
        (["A=1", "x"], "'A=1' x"),
    ],
)
def test_join_quotes_for_display(argv: list[str], line: str) -> None:
    assert shell.join(argv) == line
    assert parse_strict(line)[0].argv == argv


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_never_raises_on_arbitrary_text(text: str) -> None:
    for cmd in parse_strict(text):
        assert isinstance(cmd.argv, list) and all(isinstance(a, str) for a in cmd.argv)
        assert cmd.scope and cmd.scope[0] == 0
        for word in cmd.words:
            value = word.value()
            assert value is None or isinstance(value, str)


_SHELLISH = st.text(alphabet="ab $()`'\"\\\n;&|<>{}#~=-\tEOF", max_size=300)


@settings(max_examples=300, deadline=None)
@given(_SHELLISH)
def test_never_raises_on_shell_like_text(text: str) -> None:
    parse_strict(text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.characters(exclude_characters="\x00"), max_size=20),
        min_size=1,
        max_size=6,
    )
)
def test_join_reads_back_as_the_same_argv(argv: list[str]) -> None:
    (cmd,) = parse_strict(shell.join(argv))
    assert cmd.argv == argv
