"""Issue 12: mask first, cut later, mask by structure — the pieces, one by one.

The end-to-end proof is ``tests/test_privacy_corpus.py``; these pin down the parts: the
choke point (``ctxmode.extract.masked``), cuts that never split a mask nor leave the head
of a secret, ``<private>`` in every spelling, JSON that stays valid, and patterns that
stay linear on hostile input.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmode import fastjson, payload, redact
from ctxmode.extract import BULK_FIELDS, HEAD_CHARS, RESPONSE_HALF, extract, masked
from ctxmode.extract.bash import SCAN_CHARS
from ctxmode.extract.common import clip, fit, trim
from ctxmode.redact import cut_at, cut_from, mask, safe_head, safe_tail, strip_private

MARK = redact.PRIVATE_MARK  # what stands where a <private> span was removed

REPO = Path(__file__).resolve().parents[1]
TOKEN = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0" * 2  # a fake GitHub token
PIECES = [TOKEN[i : i + 10] for i in range(4, len(TOKEN) - 9)]  # its random part, by tens


def _clean_of_token(text: str) -> bool:
    return not any(piece in text for piece in PIECES)


def _inp(event: str, **fields: Any) -> payload.HookInput:
    inp = payload.from_dict({"session_id": "s", "cwd": "/p", **fields}, event)
    inp.project_dir = "/p"
    return inp


# ---------------------------------------------------------------- <private>


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('a <private reason="secret">X</private> b', f"a {MARK} b"),
        ("a <private class='x' id=1>X</private> b", f"a {MARK} b"),
        ("a < private >X</ private > b", f"a {MARK} b"),
        ("a <private\n>X\n</private\n> b", f"a {MARK} b"),
        ("a <PrIvAtE>X</pRiVaTe> b", f"a {MARK} b"),
        ("a <private>X", f"a {MARK}"),
        ("a <private reason=x", f"a {MARK}"),  # a tag never closed hides the rest as well
        ("a <private/> b", "a  b"),
        ("a <private>X <private>Y</private> Z</private> b", f"a {MARK} b"),
        ("a </private> b", "a </private> b"),
        ("<privateer> and <private_notes> stay", "<privateer> and <private_notes> stay"),
        ("x <private>1</private> y <private>2</private> z", f"x {MARK} y {MARK} z"),
    ],
)
def test_private_spans_in_every_spelling(text: str, expected: str) -> None:
    assert strip_private(text) == expected


def test_nothing_of_a_private_span_reaches_any_event() -> None:
    secret = "PRIVmark7Qz"
    prompt = f"Please refactor the parser. <private note='x'>my key is {secret}, use it"
    events = extract(_inp("UserPromptSubmit", prompt=prompt))
    assert events and all(secret not in e.data and "my key" not in e.data for e in events)
    tool = _inp("PostToolUse", tool_name="Bash",
                tool_input={"command": f"echo '< private >{secret}</private>'"},
                tool_response={"stdout": f"<PRIVATE>{secret}</PRIVATE>", "stderr": ""})  # fmt: skip
    assert all(secret not in e.data for e in extract(tool))


# ---------------------------------------------------------------- cuts


def test_cut_at_and_cut_from_never_split_a_mask() -> None:
    text = "abc [REDACTED:github-token] xyz"
    start, end = text.index("["), text.index("]") + 1
    for n in range(len(text) + 1):
        i = cut_at(text, n)
        assert i <= n and not (start < i < end)
        j = cut_from(text, n)
        assert j >= n and not (start < j < end)


@pytest.mark.parametrize("limit", range(5, 40))
def test_trim_and_fit_never_split_a_mask(limit: int) -> None:
    text = "error near [REDACTED:credential] and [REDACTED:jwt] done"
    for cut in (trim(text, limit), fit({"a": text, "b": text}, limit * 3)):
        assert cut.count("[REDACTED:") == cut.count("]"), cut


@settings(max_examples=200, deadline=None)
@given(
    before=st.text(alphabet="ab \n=:", max_size=300),
    after=st.text(alphabet="cd \n", max_size=300),
    n=st.integers(1, 400),
)
def test_safe_head_and_tail_keep_a_token_whole_or_not_at_all(
    before: str, after: str, n: int
) -> None:
    text = f"{before} {TOKEN} {after}"
    for part in (safe_head(text, n), safe_tail(text, n)):
        assert TOKEN in part or _clean_of_token(part), part


@pytest.mark.parametrize("at", [0, 3, 9, 20, 35])
@pytest.mark.parametrize("where", ["stdout-error", "failure", "decision", "command"])
def test_a_cut_never_leaves_the_head_of_a_secret(where: str, at: int) -> None:
    """The issue's first class: each extractor's cut placed inside the secret."""
    limit = {"stdout-error": 200, "failure": 400, "decision": 300, "command": 300}[where]
    lead = "x" * (limit - at - 1) + " "
    if where == "stdout-error":
        inp = _inp("PostToolUse", tool_name="Bash", tool_input={"command": "make"},
                   tool_response={"stdout": f"error: {lead}{TOKEN} failed\n", "stderr": ""})  # fmt: skip
    elif where == "failure":
        inp = _inp("PostToolUseFailure", tool_name="Bash", tool_input={"command": "make"},
                   error=f"{lead}{TOKEN} rejected")  # fmt: skip
    elif where == "decision":
        inp = _inp("UserPromptSubmit", prompt=f"No, use the other client and {lead}{TOKEN} instead")
    else:
        inp = _inp("PostToolUseFailure", tool_name="Bash",
                   tool_input={"command": f"{lead}--token {TOKEN}"}, error="Exit code 1")  # fmt: skip
    events = extract(inp)
    assert events
    assert all(_clean_of_token(e.data) for e in events), [e.data for e in events]


def test_clip_masks_a_head_that_ends_at_a_line() -> None:
    for n in range(1, 60):
        assert _clean_of_token(clip("y" * n + " " + TOKEN + " tail", 40))


# ---------------------------------------------------------------- the choke point


def test_masked_masks_every_string_of_the_content_once() -> None:
    inp = _inp(
        "PostToolUse",
        tool_name="mcp__db__query",
        tool_input={"query": f"rotate {TOKEN}", "api_key": "plainlookingvalue",
                    TOKEN: 1, "env": [{"name": "DB_PASSWORD", "value": "plainvalue2"}]},
        tool_response=[{"type": "text", "text": f"ok {TOKEN}"}],
    )  # fmt: skip
    out = masked(inp)
    assert masked(out) is out  # idempotent, and cheap the second time
    text = json.dumps(out.raw, default=str)
    assert _clean_of_token(text)
    assert "plainlookingvalue" not in text and "plainvalue2" not in text  # named values
    # An MCP tool's answer is kept as a command's output is: masked like every string.
    assert out.tool_response == [{"type": "text", "text": "ok [REDACTED:github-token]"}]
    assert out.session_id == "s" and out.project_dir == "/p" and out.tool_name == "mcp__db__query"
    assert json.dumps(inp.raw).count(TOKEN) == 3  # the original is untouched


def test_masked_keeps_a_masked_head_of_file_contents_and_reduces_long_outputs() -> None:
    content = f"TOKEN={TOKEN}\n" * 1000
    read = masked(_inp("PostToolUse", tool_name="Read", tool_input={"file_path": "/p/a.env"},
                       tool_response={"type": "text", "file": {"filePath": "/p/a.env",
                                                               "content": content}}))  # fmt: skip
    kept = read.tool_response["file"]["content"]
    assert kept.startswith("TOKEN=[REDACTED:") and _clean_of_token(kept)
    assert len(kept) < 2 * HEAD_CHARS < len(content)  # a head, never the file
    assert "content" in BULK_FIELDS
    # What an edit replaced is dropped whole: no extractor reads it.
    edit = masked(_inp("PostToolUse", tool_name="Edit", tool_input={"file_path": "/p/a.env",
                       "old_string": content, "new_string": "x"}, tool_response={}))  # fmt: skip
    assert edit.tool_input["old_string"] == ""
    log = "\n".join(f"line {i}" for i in range(20_000))
    bash = masked(_inp("PostToolUse", tool_name="Bash", tool_input={"command": "make"},
                       tool_response={"stdout": log, "stderr": ""}))  # fmt: skip
    stdout = bash.tool_response["stdout"]
    assert len(stdout) < len(log) and RESPONSE_HALF >= SCAN_CHARS
    assert stdout[:SCAN_CHARS] == log[:SCAN_CHARS] and stdout[-SCAN_CHARS:] == log[-SCAN_CHARS:]


def test_masked_applies_the_users_patterns_to_whole_strings() -> None:
    inp = _inp("UserPromptSubmit", prompt="ticket ACME-123456 is done")
    assert masked(inp, [r"ACME-\d{6}"]).prompt == "ticket [REDACTED:custom] is done"


# ---------------------------------------------------------------- JSON and cost

PIECES_JSON = [
    *"ab \n\"\\'=:/@-_.,{}[]()`;&|<>%#?", "TOKEN=", "Cookie: ", "Set-Cookie: ", "machine h login u password ",
    "<password>", "</password>", "mysql -p", "docker login -p ", "?sig=", "&token=", "DB_PASS=",
    "X=Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "signature=", "AccountKey=", "define('DB_PASSWORD', '",
    "')", "<private>", "</private>", "my password is ", "use token ", "PIN: 1234", "\\n", "\\\\", "\\t",
    "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", '<entry key="password">',
    "--password", '", "', "pw: ", "%3D", TOKEN, "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
]  # fmt: skip
FIELD = st.lists(st.sampled_from(PIECES_JSON), max_size=14).map("".join)


@settings(max_examples=400, deadline=None)
@given(fields=st.tuples(FIELD, FIELD, FIELD))
def test_masking_json_text_keeps_it_valid_json(fields: tuple[str, str, str]) -> None:
    data = fastjson.dumps(dict(zip(("tool", "key", "error"), fields, strict=True)))
    out = mask(data)
    assert set(fastjson.loads(out)) == {"tool", "key", "error"}
    assert mask(out) == out or set(fastjson.loads(mask(out))) == {"tool", "key", "error"}


def test_an_encoded_value_right_after_a_json_escape_keeps_the_escape() -> None:
    """A %-encoded secret that follows an escape (``\\n``, ``\\t``, ``\\"``) in JSON text is
    masked without the escape's letter: the text stays JSON (found by the property above)."""
    import secrets
    import string

    for escape in ("\n", "\t", '"', "\\"):
        # a random value with capitals, small letters and digits, as a token is
        body = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(29))
        value = "X=" + "Ab3" + body + "%3D"
        data = fastjson.dumps({"error": escape + value})
        out = mask(data)
        (text,) = fastjson.loads(out).values()  # still JSON
        assert text.startswith(escape) and "[REDACTED:" in text and body not in text, (data, out)


HOSTILE = {
    "letters": "A" * 60_000,
    "spaces": "password" + " " * 60_000 + "x",
    "commas": "password=" + "a," * 30_000,
    "keywords": "password " * 7_000,
    "urls": ("https://" + "a" * 200 + "@") * 280,
    "base64 lines": ("QUJD" * 16 + "\n") * 900 + "-----END PRIVATE KEY-----",
    "logins": "machine x login y " * 3_300 + "password",
    "flags": "-" + "-a" * 30_000,
    "xml": "<password>" + "a " * 30_000,
    "names": "A_" * 30_000 + "=x",
    # The rules for 0.5.0's holes: unclosed calls, connect strings, spaced values, fullwidth.
    "calls": 'connect("a", ' * 10_000 + "login(a, " * 10_000,
    "connect strings": "a/" + "x@" * 30_000,
    "spaced": "PASSWORD=x " + "y " * 30_000,
    "fullwidth": "ｐａｓｓｗｏｒｄ＝ｘ " * 6_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_no_pattern_backtracks_on_hostile_text(name: str) -> None:
    # A regex holds the GIL: a catastrophic one would hang the hook past its watchdog,
    # and this test with it (no clock is read here: a hang is the failure). The cost
    # per character is a benchmark figure, not a test verdict.
    masked = mask(HOSTILE[name])
    assert isinstance(masked, str) and masked


def test_masking_an_ordinary_payload_never_imports_re() -> None:
    code = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
from ctxmode import payload
from ctxmode.extract import masked
for tool, ti, tr in [
    ("Bash", {{"command": "git status"}}, {{"stdout": "On branch main\\nnothing to commit", "stderr": ""}}),
    ("Read", {{"file_path": "/p/a.py"}}, {{"file": {{"filePath": "/p/a.py", "content": "total = x"}}}}),
    ("Glob", {{"pattern": "*.py"}}, {{"filenames": ["/p/a.py"], "numFiles": 1}}),
    ("Edit", {{"file_path": "/p/a.py", "old_string": "api_key = 1", "new_string": "total = 2"}}, {{}}),
]:
    masked(payload.from_dict({{"tool_name": tool, "tool_input": ti, "tool_response": tr}}, "PostToolUse"))
print("re" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert out.stdout.split() == ["False"]


def test_every_rule_compiles_and_names_its_kind() -> None:
    for kind, gate, markers, source, _ in redact._RULES:
        assert kind and isinstance(markers, tuple)
        if gate is not redact._RUN:  # matched against the lower-cased text
            assert gate == gate.lower() and all(m == m.lower() for m in markers), kind
        if source is not redact._KEY_TAILS:
            redact._pattern(source)


# ---------------------------------------------------------------- prechecks


def _texts() -> list[str]:
    from tests import secret_corpus
    from tests.test_redact import CASES, CLEAN

    texts = [text for text, _ in CASES] + list(CLEAN)
    for call in secret_corpus.corpus(seed=3, per_class=4):
        texts += [p.text for p in call.planted]
        texts += [v for v in call.payload.get("tool_input", {}).values() if isinstance(v, str)]
    return texts


def test_prechecks_never_skip_a_rule_that_would_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    """The prechecks only save time: without them every text masks the same."""
    texts = _texts()
    with_checks = [mask(t) for t in texts]
    monkeypatch.setattr(redact, "_READY", {})
    assert [mask(t) for t in texts] == with_checks


@settings(max_examples=300, deadline=None)
@given(fields=st.tuples(FIELD, FIELD))
def test_prechecks_agree_on_generated_text(fields: tuple[str, str]) -> None:
    text = " ".join(fields)
    assert mask(text) == masked_without_prechecks(text)


def masked_without_prechecks(text: str) -> str:
    """``text`` masked with every rule run, none skipped by its precheck."""
    saved = redact._READY
    try:
        redact._READY = {}
        return mask(text)
    finally:
        redact._READY = saved


@pytest.mark.parametrize("width", range(10, 90, 3))
def test_search_snippets_never_split_a_mask(width: int) -> None:
    from ctxmode.store.query import make_snippet

    text = "x" * 50 + " key [REDACTED:github-token] and the error was here " + "y" * 200
    snippet = make_snippet(text, ["error"], width=width)
    assert snippet.count("[REDACTED:") == snippet.count("github-token]"), snippet


def test_a_name_glued_to_its_equals_sign_after_a_credential_word_is_no_value() -> None:
    """``token AccountKey={`` (found at random by the property test above): a name of
    words glued to an ``=`` names what follows it; the prose rule and its precheck agree
    that there is nothing to mask, and a generated word there is still masked."""
    for text in (" use token AccountKey={", "the token apiKeyName=$X"):
        assert masked_without_prechecks(text) == text
        assert mask(text) == text
    assert "zsnfDQWOss" not in mask("pw zsnfDQWOss=Y7")


def test_an_operator_after_a_credential_word_is_no_value() -> None:
    """``token /= a`` (found at random by the property test above): the ``/`` glued to the
    ``=`` holds no letter or digit, so no rule masks it, with or without the prechecks."""
    text = "use token /= a"
    assert masked_without_prechecks(text) == text
    assert mask(text) == text
    assert mask("the token zsnfDQWOss=Y7kP2q") != "the token zsnfDQWOss=Y7kP2q"
