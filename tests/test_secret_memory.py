"""Issue 29: a secret masked once stays masked for the session and the project.

A user gives a password in a prompt (masked there); later the agent runs a command with
it, commits "reset db pass to X", searches for it: where nothing says it is a secret.
ctxmode remembers the values it masked (keyed digests, ``ctxmode/secret_memory.py``)
and masks them in every later payload of any session of the project's store, through
the hooks and through ``ctxmode import``. The values are generated here at random, by
structure (letters, digits, symbols), never listed.
"""

from __future__ import annotations

import json
import os
import random
import stat
import string
from pathlib import Path
from typing import Any

import pytest

from ctxmode import handlers, paths, redact, secret_memory
from ctxmode.extract import masked
from ctxmode.payload import from_dict
from tests.helpers import cli, generation_seed, hook_payload, make_project, tool_payload
from tests.hooktools import hook_env, run_hook

SYMBOLS = "!@#%^*-_+=~"


def password(rng: random.Random) -> str:
    """Letters, digits and a symbol or two: what a person picks for a staging database."""
    body = "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(5, 9)))
    return body + rng.choice(SYMBOLS) + "".join(rng.choice(string.digits) for _ in range(3))


@pytest.fixture
def rng() -> random.Random:
    return random.Random(generation_seed())


def _hook(event: str, payload: dict[str, Any], env: dict[str, str]) -> None:
    done = run_hook(event, payload, env=env)
    assert (done.returncode, done.stderr) == (0, b""), (event, done.stderr)


def _everything(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


def test_a_secret_masked_once_stays_masked_in_later_payloads_and_sessions(
    tmp_path: Path, rng: random.Random
) -> None:
    secret = password(rng)
    project = make_project(tmp_path)
    root = tmp_path / "data"
    env = hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=str(project))
    first, second = "sess-mem-1", "sess-mem-2"
    cwd = str(project)
    # Masked where it is given: the prose rule knows "the password is X".
    _hook("UserPromptSubmit", hook_payload("UserPromptSubmit", session_id=first, cwd=cwd,
          prompt=f"The staging db password is {secret} - log in and fix the ledger"), env)  # fmt: skip
    # Then bare, where nothing marks it: a failing login, a commit, a todo, a search.
    _hook("PostToolUseFailure", tool_payload(
        "Bash", {"command": f"./bin/login admin {secret}"}, event="PostToolUseFailure",
        session_id=first, cwd=cwd, tool_use_id="toolu_a",
        error=f"Exit code 1\nlogin failed for admin/{secret}", is_interrupt=False), env)  # fmt: skip
    _hook("PostToolUse", tool_payload(
        "Bash", {"command": f'git commit -am "staging works again with {secret}"'},
        {"stdout": f"[main 1a2b3c4] staging works again with {secret}.", "stderr": ""},
        session_id=first, cwd=cwd, tool_use_id="toolu_b"), env)  # fmt: skip
    _hook("PostToolUse", tool_payload(
        "TaskCreate", {"subject": f"Rotate {secret} before Friday", "description": "(it leaked)"},
        {"task": {"id": "1"}}, session_id=first, cwd=cwd, tool_use_id="toolu_c"), env)  # fmt: skip
    # Another session of the same project, days later.
    _hook("PostToolUse", tool_payload(
        "Bash", {"command": f'grep -rn "{secret}" config/'},
        {"stdout": f"config/db.yml:3:  staging: '{secret}'", "stderr": ""},
        session_id=second, cwd=cwd, tool_use_id="toolu_d"), env)  # fmt: skip
    _hook("UserPromptSubmit", hook_payload("UserPromptSubmit", session_id=second, cwd=cwd,
          prompt=f"use ({secret}) again, then summarise"), env)  # fmt: skip
    for sid in (first, second):
        _hook("PreCompact", hook_payload("PreCompact", session_id=sid, cwd=cwd, trigger="manual",
              custom_instructions=None), env)  # fmt: skip
    start = run_hook("SessionStart", hook_payload("SessionStart", session_id=first, cwd=cwd,
                     source="compact"), env=env)  # fmt: skip
    assert b"session_resume" in start.stdout
    dump = cli("dump", "--json", "--project", cwd, env={"CTXMODE_HOME": str(root)}).output
    shown = cli("show-snapshot", "--project", cwd, env={"CTXMODE_HOME": str(root)}).output

    for where, blob in (("data root", _everything(root)), ("snapshot", start.stdout),
                        ("dump", dump.encode()), ("show-snapshot", shown.encode())):  # fmt: skip
        assert secret.encode() not in blob, where
    data = json.loads(dump)
    events = [e for s in data["sessions"] for e in s["events"]]
    remembered = [e for e in events if "[REDACTED:remembered]" in json.dumps(e["data"])]
    # Each later call was recorded, its secret masked from memory (not dropped); the
    # failed login's line names a login, so the password-line rule may mask it first.
    assert {e["type"] for e in remembered} >= {"git_commit", "task_create"}
    assert any(e["type"] == "tool_error" and "[REDACTED:" in json.dumps(e["data"]) for e in events)
    assert any(s["session_id"] == second and any("remembered" in json.dumps(e["data"])
               for e in s["events"]) for s in data["sessions"])  # fmt: skip

    # What is kept: digests, in private files, never the value.
    folder = root / secret_memory.FOLDER
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    files = sorted(p.name for p in folder.iterdir())
    assert files == ["key", paths.repo_store_name(str(project)) + ".bin"], files
    for name in files:
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    records = (folder / files[1]).read_bytes()
    assert records and len(records) % secret_memory.RECORD == 0
    assert secret.encode() not in records


def test_a_secret_remembered_by_the_hooks_is_masked_in_an_import(
    tmp_path: Path, rng: random.Random
) -> None:
    """``ctxmode import`` goes through the same choke point, memory included."""
    secret = password(rng)
    cwd = "/home/dev/proj"
    root = tmp_path / "data"
    env = hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=cwd)
    _hook("UserPromptSubmit", hook_payload("UserPromptSubmit", session_id="hooked", cwd=cwd,
          prompt=f"my password is {secret}"), env)  # fmt: skip
    stamp = "2026-12-01T10:00:00.000Z"
    base = {"sessionId": "imported", "cwd": cwd, "timestamp": stamp}
    use = {"type": "tool_use", "id": "toolu_imp", "name": "Bash",
           "input": {"command": f"./deploy --as admin {secret}"}}  # fmt: skip
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_imp",
        "is_error": True,
        "content": f"Exit code 1\nrejected: admin/{secret}",
    }
    records = [
        {**base, "uuid": "u1", "type": "assistant", "message": {"role": "assistant",
         "content": [use]}},
        {**base, "uuid": "u2", "type": "user", "message": {"role": "user", "content": [result]}},
    ]  # fmt: skip
    folder = tmp_path / "claude" / "projects" / "-home-dev-proj"
    folder.mkdir(parents=True)
    (folder / "imported.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    done = cli("import", "--all", env={"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
                                       "CTXMODE_HOME": str(root)})  # fmt: skip
    # The failure and the shell call it was (its command line and output excerpt).
    assert done.exit_code == 0 and "2 events added" in done.output, done.output
    assert secret.encode() not in _everything(root)
    dump = cli("dump", "--json", "--session", "imported", "--project", cwd,
               env={"CTXMODE_HOME": str(root)}).output  # fmt: skip
    assert "[REDACTED:remembered]" in dump


class _Memory:
    """A memory that knows some values (secret_memory.Memory's interface)."""

    def __init__(self, *values: str) -> None:
        self.known = set(values)
        self.lengths = frozenset(len(v) for v in values)
        self.asked: list[str] = []

    def knows(self, value: str) -> bool:
        self.asked.append(value)
        return value in self.known


@pytest.mark.parametrize(
    "around",
    [
        "{v}", "login admin {v}", 'pass="{v}"', "--password={v}", "user:{v}@db.internal",
        "({v}),", "「{v}」。", "reset to {v}.", "`{v}`", "echo -n {v}|base64", "['{v}']",
    ],
)  # fmt: skip
def test_a_remembered_value_is_found_beside_any_punctuation(
    around: str, rng: random.Random
) -> None:
    value = password(rng)
    text = f"first line\n{around.format(v=value)} and more"
    out = redact.mask_known(text, _Memory(value))
    assert value not in out and "[REDACTED:remembered]" in out
    assert out.startswith("first line\n") and out.endswith(" and more")


def test_only_words_of_a_remembered_length_are_hashed(rng: random.Random) -> None:
    value = password(rng)
    memory = _Memory(value)
    same = "".join(rng.choice(string.ascii_lowercase) for _ in range(len(value)))
    text = f"a short text with words of many lengths, paths/like/this.py, x={same};y=22"
    assert redact.mask_known(text, memory) == text
    assert memory.asked and all(len(w) == len(value) for w in memory.asked)
    empty = _Memory()
    assert redact.mask_known(text, empty) == text and not empty.asked


@pytest.mark.parametrize(
    "value",
    [
        "DB_PASSWORD", "os.environ", "get_password", "process.env.TOKEN", "${DB_PASS",
        "%APP_SECRET%", "/etc/app/secret.key", "~/.ssh/id_ed25519", "https://x.example.com/a",
        "release", "development", "x-amz-date", "us-east-1", "a1b2",
    ],
)  # fmt: skip
def test_names_references_paths_and_words_are_not_remembered(value: str) -> None:
    kind = "authorization" if value in ("x-amz-date", "us-east-1") else "credential"
    assert not redact.memorable(value, kind)


def test_what_a_secret_looks_like_is_remembered(rng: random.Random) -> None:
    token = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(32))
    for value in (password(rng), token, "hunter" + str(rng.randint(2, 9)), "48291375"):
        assert redact.memorable(value), value


def test_the_memory_is_per_store_keyed_and_forgets_a_purged_session(tmp_path: Path) -> None:
    root = str(tmp_path)
    store = os.path.join(root, "sessions", "repo-0123456789abcdef.db")
    one = secret_memory.fresh(root, "s1")
    assert one is not None
    one.remember({"Vq7#kLm2x": "credential", "release": "credential"})
    assert len(one.new) == 1  # the plain word is not remembered
    secret_memory.save(root, store, one)
    two = secret_memory.fresh(root, "s2")
    assert two is not None
    two.remember({"Zt4!pQw9e": "password"})
    secret_memory.save(root, store, two)
    loaded = secret_memory.load(root, store, "s3")
    assert loaded is not None and loaded.knows("Vq7#kLm2x") and loaded.knows("Zt4!pQw9e")
    assert secret_memory.load(root, store.replace("0123", "9999"), "s3") is None
    # Another root has another key: the same value has another digest there.
    other = secret_memory.fresh(str(tmp_path / "other"), "s1")
    assert other is not None and other.digest("Vq7#kLm2x") != loaded.digest("Vq7#kLm2x")
    assert secret_memory.forget_sessions(root, store, ["s1"]) == 1
    after = secret_memory.load(root, store, "s3")
    assert after is not None and not after.knows("Vq7#kLm2x") and after.knows("Zt4!pQw9e")


def test_the_hook_names_the_memory_folder_as_the_module_does() -> None:
    assert handlers.SECRETS_DIR == secret_memory.FOLDER


def test_a_payload_masks_what_the_memory_knows_and_notes_what_is_new(
    tmp_path: Path, rng: random.Random
) -> None:
    old, new = password(rng), password(rng)
    root = str(tmp_path)
    memory = secret_memory.fresh(root, "s")
    assert memory is not None
    memory.remember({old: "credential"})
    memory.new = []
    inp = from_dict(
        {"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Bash",
         "tool_input": {"command": f"psql -c 'select 1' # {old}"},
         "tool_response": {"stdout": f"export DB_PASSWORD={new}\nthen {new} again", "stderr": ""}},
        "PostToolUse",
    )  # fmt: skip
    out = json.dumps(masked(inp, (), memory).raw, default=str)
    assert old not in out and new not in out
    assert memory.knows(new) and len(memory.new) == 1


def test_codexs_rollout_state_keeps_no_remembered_secret(
    project: Path, tmp_path: Path, data_root: Path, rng: random.Random
) -> None:
    """The state a Codex session keeps beside the store (the calls whose outcome its
    rollout file has not shown yet) is masked for what the store remembers too."""
    from ctxmode.hosts.codex import rollout as codex_rollout
    from tests import test_host_codex as codex_t

    secret = password(rng)
    session = codex_t.load("PostToolUse.Bash.json")["session_id"]
    prompt = codex_t.moved(codex_t.load("UserPromptSubmit.json"), project, None)
    prompt["prompt"] = f"the staging password is {secret}, keep it"
    codex_t.hook("UserPromptSubmit", prompt)
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(codex_t._call("c1", f"./bin/login admin {secret}"))  # no outcome yet
    codex_t._post(project, rollout, "true", "c0")
    state = Path(codex_rollout.state_path(str(data_root), session)).read_text()
    assert "c1" in state and "login admin" in state
    assert secret not in state
    assert secret.encode() not in b"".join(
        p.read_bytes() for p in data_root.rglob("*") if p.is_file()
    )


def test_a_root_that_cannot_be_written_costs_the_memory_never_the_call(tmp_path: Path) -> None:
    from ctxmode.context import Context

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the data root should be")
    ctx = Context({}, str(blocked), str(blocked / "sessions" / "repo-x.db"), deadline=5.0)
    noted = handlers._Noted("s")
    noted.remember({"Vq7#kLm2x9": "credential"})
    handlers._remember(ctx, noted)  # no exception: the hook goes on and stores its events
    assert not (tmp_path / "not-a-folder" / "masked").exists()
