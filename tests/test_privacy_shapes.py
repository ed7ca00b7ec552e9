"""Issue 29: the shapes of secrets the review of 0.4.0 found stored raw, by family.

``tests/shape_corpus.py`` generates each family by structure with random values: a run
with an unseeded generator (``secrets``) sees values no test has seen before. Each
family is checked at the choke point (``extract.masked``, every string of a payload),
then all of them through the real hooks, with the data root, ``dump``, ``search`` and the
snapshots searched for any 10-character piece (as ``tests/test_privacy_corpus.py``
does). The last tests hold down the false positives: the recorded payloads of the real
clients keep every word, and names of code, digests, public keys and certificates stay.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest

from ctxmode import redact
from ctxmode.extract import masked
from ctxmode.payload import from_dict
from tests import shape_corpus
from tests.helpers import generation_seed
from tests.test_privacy_corpus import leaks, run_session

SEED = generation_seed()


def _payloads(text: str) -> list[dict[str, Any]]:
    """The text as a command, its output (short and long), a failure, a prompt, a todo."""
    base = {"session_id": "s", "cwd": "/home/dev/proj"}
    return [
        {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
         "tool_input": {"command": text}, "tool_response": {"stdout": f"ok\n{text}\n"}},
        {**base, "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
         "tool_input": {"command": "./deploy.sh"}, "error": f"Exit code 1\n{text}"},
        {**base, "hook_event_name": "UserPromptSubmit", "prompt": f"look at this:\n{text}"},
        {**base, "hook_event_name": "PostToolUse", "tool_name": "TaskCreate",
         "tool_input": {"subject": "follow up", "description": text}},
        # A long output is masked line by line, where a rule's markers are.
        {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
         "tool_input": {"command": "make check"},
         "tool_response": {"stdout": "compiling module\n" * 300 + text + "\ndone\n"}},
    ]  # fmt: skip


@pytest.mark.parametrize("family", sorted(shape_corpus.FAMILIES))
def test_each_family_is_masked_where_it_is_carried(family: str) -> None:
    found = [c for c in shape_corpus.cases(SEED, per_family=60) if c[0] == family]
    assert sum(len(parts) for _, _, parts in found) >= 30
    missed = []
    for _family, text, parts in found:
        for raw in _payloads(text):
            out = json.dumps(masked(from_dict(raw, raw["hook_event_name"])).raw, default=str,
                             ensure_ascii=False)  # fmt: skip
            if any(part in out for part in parts):
                missed.append(text)
                break
    assert missed == [], f"seed {SEED}: {len(missed)} of {len(found)} missed: {missed[:5]}"


def test_the_shapes_never_land_anywhere(tmp_path: Path) -> None:
    calls = shape_corpus.calls(SEED, per_family=8)
    assert sum(len(p.parts) for c in calls for p in c.planted) >= 40
    blobs = run_session(tmp_path, calls)
    found = leaks(calls, blobs)
    assert found == [], f"seed {SEED}: {len(found)} leaks, first: {found[:10]}"


def _strings(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


def test_the_recorded_payloads_of_the_real_clients_keep_every_word() -> None:
    """The fixtures hold no secret but the few fake keys their sessions typed (masked by
    the provider rules since 0.3): no rule of issue 29 masks anything in them."""
    fixtures = Path(__file__).resolve().parent / "fixtures"
    texts = []
    for path in sorted(fixtures.rglob("*.json*")):
        for doc in (
            path.read_text(errors="replace").splitlines()
            if path.suffix == ".jsonl"
            else [path.read_text(errors="replace")]
        ):
            try:
                texts.extend(_strings(json.loads(doc)))
            except ValueError:
                continue
    assert len(texts) > 10_000
    new_kinds = ("key-material", "encoded", "password-hash", "password]", "remembered")
    changed = [t for t in texts if any(k in redact.mask(t) for k in new_kinds)]
    assert changed == []


def _random(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    rng = random.Random(SEED)
    return "".join(rng.choice(alphabet) for _ in range(n))


@pytest.mark.parametrize(
    "text",
    [
        "class FiberForceLengthPassiveInverseDeGroote2016(CharacteristicCurveFunction):",
        "test_a_capture_hook_loads_exactly_its_modules_and_nothing_else_2024",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8b1c2d3e4f5a6b7c8d9e0f1a2",
        "docker pull app@sha256:" + "ab12" * 16,
        '"integrity": "sha512-' + _random(86, string.ascii_letters + string.digits + "+/") + '=="',
        "github.com/x/y v1.2.3 h1:"
        + _random(43, string.ascii_letters + string.digits + "+/")
        + "=",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + _random(43) + " dev@laptop",
        "/nix/store/" + _random(32, "0123456789abcdfghijklmnpqrsvwxyz") + "-python3-3.11.7",
        "request_id: " + _random(40),
        "AIX filesets are identified by four decimal values: V.R.M.F.",
        "the key is missing; pass the tests; set the value to 42",
        "date +%Y-%m-%dT%H:%M:%S and 100%25 done",
        "uuid=123e4567-e89b-12d3-a456-426614174000 and e30=12",
    ],
)
def test_names_of_code_digests_and_public_keys_are_kept(text: str) -> None:
    assert redact.mask(text) == text


def test_a_certificate_keeps_its_body() -> None:
    rng = random.Random(SEED)
    body = "\n".join(
        "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(64))
        for _ in range(6)
    )
    text = f"-----BEGIN CERTIFICATE-----\n{body}\nAb3=\n-----END CERTIFICATE-----\n"
    assert redact.mask(text) == text
    assert redact.mask("x = 1\n" * 300 + text) == "x = 1\n" * 300 + text  # line by line too
