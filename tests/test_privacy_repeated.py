"""A secret recognised anywhere in a payload is masked at every occurrence in it: the
same value repeated bare (in prose, in another field of the call) is not left behind.

The values are made up here at random (``secrets``), never a list of test values: what
recognises them is their place (a docker ``auth`` field, a ``-p`` flag, a header)."""

from __future__ import annotations

import base64
import json
import random
import secrets
import sqlite3
import string
from pathlib import Path

import pytest

from ctxmode import redact
from ctxmode.extract import masked
from ctxmode.payload import from_dict
from tests.helpers import generation_seed
from tests.hooktools import hook_env, run_hook


def _auth() -> str:
    user_pass = f"ci-bot:{secrets.token_urlsafe(18)}"
    return base64.b64encode(user_pass.encode()).decode()


def _docker_output(value: str) -> str:
    config = {"auths": {"registry.example.com": {"auth": value}}}
    return (
        json.dumps(config, indent=2)
        + f"\nError: pull failed for auth {value}\n"
        + f"retrying with {value}, same result"
    )


def test_a_value_masked_in_json_is_masked_where_it_comes_again_bare() -> None:
    value = _auth()
    inp = from_dict(
        {
            "session_id": "s",
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {
                "command": "cat ~/.docker/config.json && docker pull registry.example.com/app"
            },
            "tool_response": {
                "stdout": _docker_output(value) + "\npassword: release\nthe release is out",
                "stderr": f"denied: {value}",
            },
        },
        "PostToolUse",
    )
    out = masked(inp)
    everything = json.dumps(out.raw, default=str)
    assert value not in everything
    assert value[:12] not in everything
    assert everything.count(redact.PREFIX) >= 4  # the field, the prose twice, stderr
    # A plain word masked as a value is not hunted down elsewhere: words stay words.
    assert "the release is out" in everything


def _password(shape: str) -> str:
    """A generated password of a shape that once slipped through: ``-p-x`` is mysql's
    password ``-x``; a value of letters alone (no digit) is still a generated one."""
    rng = random.Random(generation_seed())
    body = "".join(rng.choice(string.ascii_letters + string.digits + "-_") for _ in range(20))
    if shape == "dash first":
        return "-" + body
    if shape == "letters only":
        pairs = (rng.choice(string.ascii_lowercase) + rng.choice(string.ascii_uppercase)
                 for _ in range(11))  # fmt: skip
        return "".join(pairs)
    return secrets.token_urlsafe(16)


@pytest.mark.parametrize("shape", ["urlsafe", "dash first", "letters only"])
def test_a_password_given_on_a_command_line_is_masked_in_the_output_too(shape: str) -> None:
    password = _password(shape)
    inp = from_dict(
        {
            "session_id": "s",
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": f"mysql -u root -p{password} -e 'select 1'"},
            "tool_response": {
                "stdout": f"warning: using {password} on the command line",
                "stderr": "",
            },
        },
        "PostToolUse",
    )
    assert password not in json.dumps(masked(inp).raw, default=str)


def test_the_repeated_secret_never_reaches_the_store(tmp_path: Path) -> None:
    value = _auth()
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    env = hook_env(CTXMODE_HOME=str(tmp_path / "data"), CLAUDE_PROJECT_DIR=str(project))
    payload = {
        "session_id": "sess-repeat",
        "cwd": str(project),
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_use_id": "toolu_1",
        "tool_input": {
            "command": "cat ~/.docker/config.json && docker pull registry.example.com/app"
        },
        "error": "Exit code 1\n" + _docker_output(value),
        "is_interrupt": False,
    }
    done = run_hook("PostToolUseFailure", payload, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    stores = list((tmp_path / "data" / "sessions").glob("*.db"))
    assert stores
    for store in stores:
        for chunk in (value, value[:16], value[-16:]):
            assert chunk.encode() not in store.read_bytes()
        with sqlite3.connect(store) as conn:
            rows = conn.execute("SELECT data FROM session_events").fetchall()
        assert rows and all(value not in r[0] for r in rows)
