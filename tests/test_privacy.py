"""Privacy: secrets and private spans never reach a byte on disk or the model; files are
private; nothing touches the network; the log holds no payload content; purge is real.

Secrets are planted where they occur in real sessions (commands, outputs, errors,
prompts, MCP arguments, URLs, file paths) and looked for in the RAW bytes of the store
file, its ``-wal`` (kept alive by an open reader), the log, the spool and everything
the hooks printed.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode import hookrun, paths
from ctxmode.events import make
from ctxmode.store import Store
from tests.hooktools import FIXTURES, hook_command, hook_env, run_hook

PROJECT = "/home/dev/proj"

# Fake but well-formed, one per secret class of redact.py, each unique so a hit is certain.
# Tokens that identify themselves (a provider prefix) are also planted where nothing
# else gives them away: in file names.
SELF_EVIDENT = {
    "anthropic-key": "sk-ant-api03-Zq7Xw2Lm9Pt4Rv8Ns1Kd6Hb3Jf5Gc0Ya2Ue7Io",
    "openai-key": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    "github-token": "ghp_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8",
    "github-pat": "github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
    "gitlab-token": "glpat-Zx9Cv8Bn7Mq6Wr5Et4Yu",
    "slack-token": "xoxb-2048-4096-Qm7Tn3Vb8Zc1Xa",
    "aws-access-key-id": "AKIAQWERTYUIOP123456",
    "google-api-key": "AIzaSyD4-9xQ2vR7tP1mN8bK3jH6gF5dS0aL2wE",
    "stripe-key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.Xk3dP9qLm2Rt7Vw1Zy5Ab8Cd",
}
# Secrets only their context reveals (a header, a variable name, a URL's userinfo).
CONTEXTUAL = {
    "aws-secret-key": "Wj4lrXUtnFEMI7K7MDENGbPxRfiCYzQ9KEYabc",
    "private-key": "MIIEowIBAAKCAQEAplantedPEMbodyQ7w8e9r0",
    "authorization": "planTEDbearer0987654321xyz",
    "url-credentials": "s3cr3tUserinfoP4ss",
    "password-var": "hunter2plantedPW",
    "api-key-var": "plantedApiKeyValue77",
    "token-var": "plantedTokenValue99x",
    "curl-password": "Pa55curlPlanted",
    "url-param": "qwertyPlantedParam1234",
}
SECRETS = {**SELF_EVIDENT, **CONTEXTUAL}
S = SECRETS
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{S['private-key']}\n-----END RSA PRIVATE KEY-----"
TEXTS = [
    f"export ANTHROPIC_API_KEY={S['anthropic-key']}",
    f"echo {S['openai-key']} {S['github-token']} {S['github-pat']} {S['gitlab-token']}",
    f"SLACK={S['slack-token']} AWS_ACCESS_KEY_ID={S['aws-access-key-id']} "
    f"aws_secret_access_key={S['aws-secret-key']} aws s3 ls",
    f"curl -H 'Authorization: Bearer {S['authorization']}' "
    f"https://deploy:{S['url-credentials']}@git.example.com/r.git",
    f"DB_PASSWORD={S['password-var']} API_KEY={S['api-key-var']} "
    f"MY_SERVICE_TOKEN={S['token-var']} ./run",
    f"curl -u admin:{S['curl-password']} "
    f"'https://api.example.com/v1?access_token={S['url-param']}&key={S['google-api-key']}'",
    f"stripe login --api-key {S['stripe-key']} && echo {S['jwt']}",
    f"printf '{PEM}'",
]


def _env(root: Path) -> dict[str, str]:
    return hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=PROJECT)


def _store_path(root: Path) -> Path:
    return Path(paths.store_path(PROJECT, {"CTXMODE_HOME": str(root)}))


def _session_calls(session: str) -> list[tuple[str, dict]]:
    """Every place a secret shows up in a session, as real hook payloads."""
    base = {"session_id": session, "cwd": PROJECT}
    calls: list[tuple[str, dict]] = []
    for text in TEXTS:
        calls += [
            ("UserPromptSubmit", {**base, "prompt": f"please run: {text}"}),
            ("PostToolUse", {**base, "tool_name": "Bash",
                             "tool_input": {"command": text, "description": text[:40]},
                             "tool_response": {"stdout": text, "stderr": f"error: {text}"}}),
            ("PostToolUseFailure", {**base, "tool_name": "Bash", "tool_input": {"command": text},
                                    "error": f"Exit code 1\n{text}"}),
            ("PostToolUse", {**base, "tool_name": "mcp__vault__put",
                             "tool_input": {"api_key": text, "query": text, "password": text},
                             "tool_response": [{"type": "text", "text": text}]}),
        ]  # fmt: skip
    for value in SELF_EVIDENT.values():
        path = f"{PROJECT}/keys/{value}.txt"
        calls += [
            ("PostToolUse", {**base, "tool_name": "Write",
                             "tool_input": {"file_path": path, "content": value},
                             "tool_response": {"type": "create", "filePath": path}}),
            ("PostToolUse", {**base, "tool_name": "Read", "tool_input": {"file_path": path},
                             "tool_response": {"type": "text",
                                               "file": {"filePath": path, "content": value}}}),
        ]  # fmt: skip
    url = f"https://bob:{S['url-credentials']}@example.com/p?token={S['url-param']}"
    calls += [
        ("PostToolUse", {**base, "tool_name": "WebFetch", "tool_input": {"url": url, "prompt": TEXTS[0]},
                         "tool_response": {"result": TEXTS[1], "code": 200, "url": url}}),
        ("PostToolUseFailure", {**base, "tool_name": "WebFetch", "tool_input": {"url": url},
                                "error": f"Request to {url} failed: {TEXTS[3]}"}),
        ("PostToolUse", {**base, "tool_name": "WebSearch", "tool_input": {"query": TEXTS[2]},
                         "tool_response": {"results": [TEXTS[3]]}}),
        ("PostToolUse", {**base, "tool_name": "TaskCreate",
                         "tool_input": {"subject": TEXTS[4], "description": TEXTS[5]},
                         "tool_response": {"task": {"id": "1", "subject": TEXTS[4]}}}),
        ("PostToolUse", {**base, "tool_name": "Agent",
                         "tool_input": {"description": TEXTS[6], "prompt": TEXTS[1],
                                        "subagent_type": "general-purpose"},
                         "tool_response": {"content": [{"type": "text", "text": TEXTS[0]}]}}),
        ("PostToolUse", {**base, "tool_name": "Edit",
                         "tool_input": {"file_path": f"{PROJECT}/.env", "old_string": TEXTS[4],
                                        "new_string": TEXTS[5]},
                         "tool_response": {"filePath": f"{PROJECT}/.env"}}),
        ("PostToolUse", {**base, "tool_name": "ExitPlanMode", "tool_input": {"plan": "\n".join(TEXTS)},
                         "tool_response": {"plan": "\n".join(TEXTS)}}),
    ]  # fmt: skip
    return [(event, {**payload, "hook_event_name": event}) for event, payload in calls]


def _run_parallel(calls: list[tuple[str, dict]], env: dict[str, str], width: int = 8) -> bytes:
    """Run the hooks, ``width`` at a time, all fed at once; return everything they printed."""
    printed = b""
    for start in range(0, len(calls), width):
        batch = calls[start : start + width]
        procs = []
        for event, payload in batch:
            proc = subprocess.Popen(hook_command(event), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)  # fmt: skip
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(payload).encode())  # small: fits the pipe buffer
            proc.stdin.close()
            procs.append(proc)
        for proc, (event, _) in zip(procs, batch, strict=True):
            out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
            assert (proc.wait(60), err) == (0, b""), (event, err)
            printed += out
    return printed


def _raw(root: Path) -> dict[str, bytes]:
    """Every file under the data root, raw."""
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _leaks(blobs: dict[str, bytes], needles: dict[str, str]) -> list[tuple[str, str]]:
    return [
        (kind, name)
        for kind, needle in needles.items()
        for name, blob in blobs.items()
        if needle.encode() in blob
    ]


def test_planted_secrets_never_reach_any_byte(tmp_path: Path) -> None:
    env = _env(tmp_path)
    calls = _session_calls("priv-1")
    assert run_hook(*calls[0], env=env).returncode == 0  # the store exists
    # A reader held open all along: the WAL is neither checkpointed away nor deleted.
    reader = sqlite3.connect(_store_path(tmp_path))
    reader.execute("SELECT count(*) FROM session_events").fetchone()
    try:
        # Some calls meet a locked store and go to the spool: its bytes are checked too.
        holder = sqlite3.connect(_store_path(tmp_path), isolation_level=None, timeout=0)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            printed = _run_parallel(calls[1:5], env)
            spooled = _raw(tmp_path / "spool")
            assert spooled and b"[REDACTED:" in b"".join(spooled.values())
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        printed += _run_parallel(calls[5:], env)
        base = {"session_id": "priv-1", "cwd": PROJECT}
        pre = {**base, "hook_event_name": "PreCompact", "trigger": "manual",
               "custom_instructions": TEXTS[0]}  # fmt: skip
        printed += _run_parallel([("PreCompact", pre)], env)
        start = {**base, "hook_event_name": "SessionStart", "source": "compact"}
        snapshot = run_hook("SessionStart", start, env=env).stdout
        assert b"session_resume" in snapshot
        printed += snapshot
        # A payload the hook refuses (with secrets in it) and a log record about it.
        run_hook("PostToolUse", b'{"session_id": "' + TEXTS[3].encode() + b'", ', env=env)
        blobs = _raw(tmp_path)
        assert any(name.endswith(".db-wal") for name in blobs)
    finally:
        reader.close()
    blobs["printed"] = printed
    blobs.update({f"spool@lock/{k}": v for k, v in spooled.items()})
    assert "logs/ctxmode.log" in blobs
    assert _leaks(blobs, SECRETS) == []
    # Not vacuous: the session was recorded, with masks where the secrets were.
    with Store.open(str(_store_path(tmp_path)), readonly=True) as store:
        events = store.session_events("priv-1")
    assert len(events) >= 40
    masks = "".join(e.data for e in events)
    for kind in ("anthropic-key", "github-token", "aws-access-key-id", "private-key", "jwt"):
        assert f"[REDACTED:{kind}]" in masks, kind


PRIVATE_PROMPTS = [
    "review it. <private>PRIVMARK-A one</private> thanks",
    "a <PRIVATE>PRIVMARK-B upper</Private> b",
    "x <private>outer <private>PRIVMARK-C nested</private> PRIVMARK-D</private> y",
    "keep this part <private>PRIVMARK-E never closed\nand the lines after it",
    "line one\n<private>\nPRIVMARK-F multi\nline\n</private>\nline two",
]


def test_private_spans_are_never_stored_nor_printed(tmp_path: Path) -> None:
    env = _env(tmp_path)
    fixture = FIXTURES / "more" / "UserPromptSubmit.private_multiline.json"
    prompts = list(PRIVATE_PROMPTS)
    secret_in_fixture = "tok-FAKE-123456"
    prompts.append(json.loads(fixture.read_text())["payload"]["prompt"])
    assert secret_in_fixture in prompts[-1]
    base = {"session_id": "pv", "cwd": PROJECT}
    reader = None
    printed = b""
    for n, prompt in enumerate(prompts):
        call = {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}
        result = run_hook("UserPromptSubmit", call, env=env)
        assert (result.returncode, result.stderr) == (0, b"")
        printed += result.stdout
        if n == 0:
            reader = sqlite3.connect(_store_path(tmp_path))  # keeps the WAL for the grep
            reader.execute("SELECT 1 FROM session_events").fetchone()
    try:
        run_hook("PreCompact", {**base, "hook_event_name": "PreCompact", "trigger": "auto"},
                 env=env)  # fmt: skip
        printed += run_hook("SessionStart", {**base, "hook_event_name": "SessionStart",
                                             "source": "compact"}, env=env).stdout  # fmt: skip
        blobs = _raw(tmp_path)
    finally:
        assert reader is not None
        reader.close()
    blobs["printed"] = printed
    markers = {f"m{c}": f"PRIVMARK-{c}" for c in "ABCDEF"} | {"fixture": secret_in_fixture}
    assert _leaks(blobs, markers) == []
    # What was around the spans is kept.
    with Store.open(str(_store_path(tmp_path)), readonly=True) as store:
        texts = [json.loads(e.data)["text"] for e in store.session_events("pv")
                 if e.type == "user_prompt"]  # fmt: skip
    assert texts[0] == "review it. [REDACTED:private] thanks"
    assert texts[3] == "keep this part [REDACTED:private]"
    assert b"keep this part [REDACTED:private]" in printed


def test_private_spans_in_tool_fields_are_not_stored(tmp_path: Path) -> None:
    env = {"CTXMODE_HOME": str(tmp_path), "CLAUDE_PROJECT_DIR": PROJECT}
    base = {"session_id": "pt", "cwd": PROJECT}
    calls = [
        ("PostToolUseFailure", {**base, "tool_name": "Bash", "tool_input": {"command": "make"},
                                "error": "failed: <private>PRIVMARK-T1</private>"}),
        ("PostToolUse", {**base, "tool_name": "TaskCreate",
                         "tool_input": {"subject": "do <private>PRIVMARK-T2</private>",
                                        "description": "x"}, "tool_response": {}}),
    ]  # fmt: skip
    for event, payload in calls:
        payload["hook_event_name"] = event
        hookrun.run_hook(event, io.BytesIO(json.dumps(payload).encode()), env)
    data = _store_path(tmp_path).read_bytes()
    assert b"PRIVMARK-T1" not in data and b"PRIVMARK-T2" not in data


# ---------------------------------------------------------------- file modes


def test_files_are_0600_and_folders_0700_even_with_umask_0(tmp_path: Path) -> None:
    root = tmp_path / "data"
    env = _env(root)

    def open_umask() -> None:
        os.umask(0)

    def hook(event: str, payload: bytes | dict) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        done = subprocess.run(hook_command(event), input=data, capture_output=True, env=env,
                              preexec_fn=open_umask, timeout=30, check=False)  # fmt: skip
        assert done.returncode == 0

    write = {"session_id": "m", "cwd": PROJECT, "hook_event_name": "PostToolUse",
             "tool_name": "Write", "tool_input": {"file_path": f"{PROJECT}/a.py"},
             "tool_response": {"type": "create"}}  # fmt: skip
    hook("PostToolUse", write)
    hook("PostToolUse", b"{broken")  # a log record
    store = _store_path(root)
    holder = sqlite3.connect(store, isolation_level=None, timeout=0)
    holder.execute("BEGIN EXCLUSIVE")
    hook("PostToolUse", {**write, "tool_input": {"file_path": f"{PROJECT}/b.py"}})  # spooled
    try:  # modes read while the -wal, -shm and the spool exist
        modes = {p: (p.is_dir(), stat.S_IMODE(p.stat().st_mode)) for p in [root, *root.rglob("*")]}
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    names = {p.name for p in modes}
    assert {"sessions", "logs", "spool", "ctxmode.log", store.name, f"{store.name}-wal",
            f"{store.name}-shm", paths.LOCK_NAME} <= names  # fmt: skip
    assert any(n.endswith(".jsonl") for n in names)
    for entry, (is_dir, mode) in modes.items():
        assert mode == (0o700 if is_dir else 0o600), (str(entry), oct(mode))


# ---------------------------------------------------------------- no network


_NETWORK_EVENTS = ("socket.__new__", "socket.bind", "socket.connect", "socket.getaddrinfo",
                   "socket.sendto", "socket.gethostbyname", "urllib.Request",
                   "http.client.connect", "ftplib.connect", "smtplib.connect")  # fmt: skip
_audit: dict[str, list[str]] = {"seen": [], "active": []}


def _audit_hook(event: str, args: tuple) -> None:
    # Installed once per process (audit hooks cannot be removed); records only while active.
    if _audit["active"] and event.startswith(
        ("socket.", "urllib.", "http.", "ftplib.", "smtplib.")
    ):
        _audit["seen"].append(event)


def test_no_socket_is_opened_in_process(tmp_path: Path) -> None:
    """A whole session in process under an audit hook, plus the CLI readers."""
    if not _audit.get("installed"):
        sys.addaudithook(_audit_hook)
        _audit["installed"] = ["yes"]
    env = {"CTXMODE_HOME": str(tmp_path), "CLAUDE_PROJECT_DIR": PROJECT}
    from click.testing import CliRunner

    from ctxmode.cli import main as cli_main

    _audit["seen"].clear()
    _audit["active"].append("on")
    try:
        for event, payload in _session_calls("net-1")[:12]:
            out = hookrun.run_hook(event, io.BytesIO(json.dumps(payload).encode()), env)
            assert out == b"" or event == "UserPromptSubmit"
        runner = CliRunner()
        for args in (["dump", "--json", "--project", PROJECT],
                     ["search", "curl", "--project", PROJECT]):  # fmt: skip
            result = runner.invoke(cli_main, args, env={"CTXMODE_HOME": str(tmp_path)})
            assert result.exit_code == 0, result.output
        # The hook is not blind: a socket made here is seen.
        import socket

        socket.socket().close()
    finally:
        _audit["active"].clear()
    assert _audit["seen"] == ["socket.__new__"]
    assert set(_NETWORK_EVENTS) >= {"socket.__new__"}


def test_no_network_syscall_in_a_hook_process(tmp_path: Path) -> None:
    """strace -f: no socket, connect, bind or listen in any hook process or the CLI."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed")
    env = _env(tmp_path)
    calls = _session_calls("net-2")[:4]
    calls.append(("PreCompact", {"session_id": "net-2", "cwd": PROJECT,
                                 "hook_event_name": "PreCompact", "trigger": "auto"}))  # fmt: skip
    calls.append(("SessionStart", {"session_id": "net-2", "cwd": PROJECT,
                                   "hook_event_name": "SessionStart", "source": "compact"}))  # fmt: skip
    commands = [(hook_command(event), json.dumps(payload).encode()) for event, payload in calls]
    commands.append(([sys.executable, "-m", "ctxmode", "dump", "--project", PROJECT], b""))
    for number, (argv, data) in enumerate(commands):
        trace = tmp_path / f"trace{number}.txt"
        done = subprocess.run([strace, "-f", "-qq", "-e", "trace=network", "-e", "signal=none",
                               "-o", str(trace), *argv], input=data, capture_output=True,
                              env=env, timeout=60, check=False)  # fmt: skip
        if done.returncode != 0 and b"ptrace" in done.stderr:
            pytest.skip(f"strace cannot trace here: {done.stderr.decode().strip()}")
        assert done.returncode == 0, done.stderr
        calls_seen = [line for line in trace.read_text().splitlines() if "(" in line]
        assert calls_seen == [], (argv, calls_seen[:5])


# ---------------------------------------------------------------- the log


def test_the_log_holds_no_payload_content(tmp_path: Path) -> None:
    """Payloads with a marker in every field, each made to fail a different way."""
    marker = "LOGMARK7f3a"
    root = tmp_path / "data"
    env = _env(root)
    fields = {"session_id": f"{marker}-sid", "cwd": f"/tmp/{marker}", "prompt": marker,
              "tool_name": f"mcp__{marker}__x", "tool_input": {"command": marker, marker: marker},
              "error": marker, "source": marker, "reason": marker,
              "transcript_path": f"/tmp/{marker}.jsonl"}  # fmt: skip
    as_json = json.dumps(fields).encode()
    inputs = [
        ("PostToolUse", b'{"session_id": "' + marker.encode() + b'", "cwd": "' + marker.encode()),
        ("UserPromptSubmit", as_json[:-1] + b', "' + marker.encode() + b'": }'),
        ("PostToolUse", b"[" * 100_000 + marker.encode()),
        (
            "PostToolUse",
            b'{"tool_name": "' + marker.encode() + b'", "x": "' + b"y" * 9_000_000 + b'"}',
        ),
        ("SessionStart", as_json),
    ]
    for event, data in inputs:
        assert run_hook(event, data, env=env).returncode == 0
    # A store this version cannot use: every hook now fails inside, traceback logged.
    assert run_hook("PostToolUse", {**fields, "cwd": PROJECT}, env=env).returncode == 0
    conn = sqlite3.connect(_store_path(root))
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    for event in ("PostToolUse", "UserPromptSubmit", "PreCompact", "SessionStart", "SessionEnd"):
        assert run_hook(event, {**fields, "hook_event_name": event}, env=env).returncode == 0
    log = (root / "logs" / "ctxmode.log").read_bytes()
    records = [line for line in log.splitlines() if line[:1] != b" "]
    assert len(records) >= 9  # all logged...
    assert log.count(b"store written by a newer ctxmode") == 5
    assert marker.encode() not in log  # ...without a byte of what the payloads held


def test_unexpected_exceptions_are_logged_without_their_message(
    tmp_path: Path, monkeypatch
) -> None:
    """A bug whose exception quotes the payload: type and frames logged, the text withheld."""
    import io

    from ctxmode import handlers, hookrun

    marker = "LOGMARK9c1e"

    def explode(inp, ctx):
        raise KeyError(f"{marker} {inp.prompt}")

    monkeypatch.setattr(handlers, "handle", explode)
    root = tmp_path / "data"
    payload = json.dumps(
        {
            "session_id": "s",
            "cwd": str(tmp_path),
            "prompt": marker,
            "hook_event_name": "UserPromptSubmit",
        }
    ).encode()
    out = hookrun.run_hook("UserPromptSubmit", io.BytesIO(payload), {"CTXMODE_HOME": str(root)})
    assert out == b""
    log = (root / "logs" / "ctxmode.log").read_text()
    assert "\tERROR\tUserPromptSubmit\tKeyError (message withheld" in log
    assert "Traceback (most recent call last):" in log and "in explode" in log
    assert marker not in log


# ---------------------------------------------------------------- purge


def _fill(store: Store, session: str, marker: str, now: str) -> None:
    events = [make("file_edit", {"path": f"src/{marker}_{n}.py", "note": f"{marker} {n} " * 12})
              for n in range(300)]  # fmt: skip
    store.add_events(session, events, source_hook="PostToolUse", project_dir=PROJECT, now=now)
    store.save_resume(session, f"<session_resume>{marker}</session_resume>", 300)


def _trigrams(text: str) -> set[str]:
    low = text.lower()
    return {low[i : i + 3] for i in range(len(low) - 2)}


def test_purge_removes_rows_index_entries_and_space(tmp_path: Path) -> None:
    path = tmp_path / "purge.db"
    gone_a, gone_b, kept = "qqgoneAAjjkk", "wwgoneBBmmvv", "keptCCxxzzyy"
    store = Store.open(str(path))
    try:
        _fill(store, "A", gone_a, "2026-11-30T10:00:00.000Z")
        _fill(store, "B", gone_b, "2025-01-01T10:00:00.000Z")  # idle for long
        _fill(store, "C", kept, "2026-11-30T10:00:00.000Z")
        store.vacuum()
        size_before = path.stat().st_size

        assert store.purge_session("A") == 300
        assert store.purge_older_than(90, now=1796000000.0) == 1  # 2026-12: B is old, C not
        store.vacuum(optimize_fts=True)

        assert [m["session_id"] for m in store.sessions()] == ["C"]
        assert store.search(gone_a) == [] and store.search(gone_b) == []
        assert len(store.search(kept)) == 20  # search's default limit: C is all there
        conn = store.conn
        conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, events_fts, 'row')")
        terms = {row[0] for row in conn.execute("SELECT term FROM temp.vocab")}
        remaining = "".join(e.data for e in store.session_events("C"))
        for marker in (gone_a, gone_b):
            only_gone = _trigrams(marker) - _trigrams(remaining)
            assert only_gone and only_gone.isdisjoint(terms), sorted(only_gone & terms)
        assert int(conn.execute("PRAGMA freelist_count").fetchone()[0]) == 0
    finally:
        store.close()
    raw = path.read_bytes() + (
        Path(f"{path}-wal").read_bytes() if Path(f"{path}-wal").exists() else b""
    )
    assert gone_a.encode() not in raw and gone_b.encode() not in raw
    assert kept.encode() in raw
    # Two thirds of the data gone, and the file shrank with it.
    assert path.stat().st_size < size_before * 0.5, (path.stat().st_size, size_before)
