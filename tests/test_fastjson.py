"""fastjson behaves like json for what hooks read and write, without importing json."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxmode import fastjson

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=30,
)


@given(JSON_VALUES)
def test_round_trip_matches_json(value: object) -> None:
    encoded = fastjson.dumps(value)
    assert encoded == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert fastjson.loads(encoded) == json.loads(encoded)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "{",
        '{"a": "x',
        '{"a": tru',
        "[1,",
        '{"a" 1}',
        "{} {}",
        "nul",
        "[" * 50_000,
        b"\xff\xfe{}",
    ],
)
def test_malformed_documents_raise_jsondecodeerror(text: str | bytes) -> None:
    with pytest.raises(fastjson.JSONDecodeError):
        fastjson.loads(text)
    if isinstance(text, str):  # the snapshot's fast path refuses the same
        with pytest.raises(fastjson.JSONDecodeError):
            fastjson.loads_data(text)


@given(JSON_VALUES, st.sampled_from(["", " ", "\n", " \t"]), st.sampled_from(["", " ", "\n "]))
def test_loads_data_reads_what_loads_reads(value: object, before: str, after: str) -> None:
    text = before + fastjson.dumps(value) + after
    assert fastjson.loads_data(text) == fastjson.loads(text) == json.loads(text)


def test_malformed_is_a_decode_error_even_without_the_json_package() -> None:
    """In a hook process json is never imported; _json then reports SystemError."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from ctxmode import fastjson\n"
        "for text in ['{\"a\": \"x', '{\"a\" 1}', '[1,']:\n"
        "    try: fastjson.loads(text)\n"
        "    except fastjson.JSONDecodeError: pass\n"
        "assert 'json' not in sys.modules\n"
        "print('ok')"
    )
    root = str(__import__("pathlib").Path(__file__).resolve().parents[1])
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, root], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stdout.strip(), result.stderr) == (0, "ok", "")


def test_utf8_bom_and_surrounding_whitespace() -> None:
    assert fastjson.loads(b'\xef\xbb\xbf \n{"a": [1, 2.5, null]}\n ') == {"a": [1, 2.5, None]}
