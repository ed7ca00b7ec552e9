"""Issue 29, the audit's held-out corpus: families the masking was not tuned on.

``tests/plant_corpus.py`` is a second generator, written apart from the corpora the
rules were built on (other tools, other carriers, other languages, passwords that start
with a symbol, passphrases, secrets split or encoded differently). Each run draws new
values (an unseeded seed, printed on failure). Each family is checked at the choke point
(``extract.masked``, a command and a prompt), then the whole corpus is planted through the
installed hooks of Claude Code, Codex and Gemini (``benchmarks/plant_secrets.py``):
nothing may be found raw, as a 10-character piece or encoded, under the data root, in
``dump``, a snapshot or ``search``. The last tests hold the new rules' false positives down.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ctxmode import redact
from ctxmode.extract import masked
from ctxmode.payload import from_dict
from tests import plant_corpus
from tests.helpers import generation_seed

SEED = generation_seed()
_SPEC = importlib.util.spec_from_file_location(
    "plant_secrets", Path(__file__).resolve().parents[1] / "benchmarks" / "plant_secrets.py"
)
assert _SPEC is not None and _SPEC.loader is not None
plant_secrets = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(plant_secrets)


def _carried(text: str) -> str:
    if plant_corpus.SEP in text:  # a command that makes a secret, and what it printed
        command, output = text.split(plant_corpus.SEP, 1)
        shell = {"session_id": "s", "cwd": "/p", "hook_event_name": "PostToolUse",
                 "tool_name": "Bash", "tool_input": {"command": command},
                 "tool_response": {"stdout": output, "stderr": ""}}  # fmt: skip
        return json.dumps(masked(from_dict(shell, "PostToolUse")).raw, default=str)
    out = []
    for raw in (
        {"session_id": "s", "cwd": "/p", "hook_event_name": "PostToolUse", "tool_name": "Bash",
         "tool_input": {"command": text}, "tool_response": {"stdout": f"ok\n{text}\n"}},
        {"session_id": "s", "cwd": "/p", "hook_event_name": "UserPromptSubmit",
         "prompt": f"look at this:\n{text}"},
    ):  # fmt: skip
        inp = masked(from_dict(raw, str(raw["hook_event_name"])))
        out.append(json.dumps(inp.raw, default=str, ensure_ascii=False))
    return "\n".join(out)


@pytest.mark.parametrize("family", sorted(plant_corpus.FAMILIES))
def test_each_family_of_the_held_out_corpus_is_masked(family: str) -> None:
    found = [c for c in plant_corpus.cases(SEED, per_family=80) if c[0] == family]
    missed = []
    for _family, text, parts in found:
        out = _carried(text)
        needles = [
            n for part in parts for n in [*plant_corpus.pieces(part), *plant_corpus.decodable(part)]
        ]
        if any(n in out for n in needles):
            missed.append(text)
    assert missed == [], f"seed {SEED}: {len(missed)} of {len(found)} missed: {missed[:5]}"


def test_the_held_out_corpus_never_lands_through_any_host(tmp_path: Path) -> None:
    total, _found, where = plant_secrets.plant(tmp_path, SEED, per_family=3)
    assert sum(total.values()) >= 30 and total["repeat"] >= 9, total
    assert where == [], f"seed {SEED}: {where[:10]}"


def test_the_plant_check_finds_a_leak(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The negative control: with masking off, the same run reports leaks."""
    monkeypatch.setattr(plant_secrets, "_hook", _raw_hook(tmp_path))
    total, found, _where = plant_secrets.plant(tmp_path, 7, per_family=1)
    assert sum(found.values()) >= len(plant_corpus.FAMILIES), (total, found)


def _raw_hook(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A stand-in hook that writes each payload raw under the data root."""
    counter = iter(range(10**6))

    def hook(host: str, event: str, payload: dict, env: dict, cwd: str) -> bytes:  # type: ignore[type-arg]
        root = Path(env["CTXMODE_HOME"])
        root.mkdir(parents=True, exist_ok=True)
        (root / f"raw-{next(counter)}.json").write_text(json.dumps(payload))
        return b""

    return hook


@pytest.mark.parametrize(
    "text",
    [
        "def login(self, user2Name, getPassword2):\n    pass",
        "login with alice@example.com, see docs/login2.md and https://sso.example.com/v2/login",
        "git push --no-verify  # the password prompt hangs in CI-2024",
        "export DB_PASSWORD_FILE=./secrets/db_pw2.txt  # the password stays in a file",
        "set the password to $NEW_PASS, then %APP_PW% on Windows",
        "the login page (LoginForm2.tsx) shows a password field",
        "the password policy of RFC-9110 and ISO-27001 (see PolicyV2.md)",
        "password -> String",
        "sk-proj-ogBzjhQC0HQ8Znknrx is the key, Then we rotate it",
        "- name: PORT\n  value: '8080'",
        'sock.bind(("0.0.0.0", 8080)); bind("0.0.0.0", "8080")',
    ],
)
def test_the_new_rules_keep_what_is_no_secret(text: str) -> None:
    masked_text = redact.mask(text)
    kept = masked_text.replace("[REDACTED:openai-key]", "sk-proj-ogBzjhQC0HQ8Znknrx")
    assert kept == text, masked_text


def test_what_a_command_prints_is_masked_only_when_it_makes_secrets() -> None:
    listing = "total 8\n-rw-r--r-- 1 dev dev 4096 Jan 1 report_2024Q3.xlsx\nSUM=9fA3kq81Zx\n"
    assert _carried(f"ls -la{plant_corpus.SEP}{listing}").count("[REDACTED:") == 0
    assert "9fA3kq81Zx" not in _carried(f"openssl rand -base64 12{plant_corpus.SEP}9fA3kq81Zx\n")
