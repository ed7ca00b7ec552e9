"""Plant a generated corpus of fake secrets through the installed hooks of all three hosts,
compact, claim and end, then look for each secret everywhere ctxmode keeps or shows data.

    python benchmarks/plant_secrets.py [--seed N] [--per-family N] [--keep]

The corpus is ``tests/plant_corpus.py`` (random values, seeded). Each case rides in a
payload of the real shape of one host, rotating through the carriers a session has:
Claude Code (prompt, Bash command and output, failed command, Write, Edit, TaskCreate,
an MCP call), Codex (prompt, shell command and output, apply_patch) and Gemini (prompt,
shell command and output, write_file, replace). Every hook runs as a subprocess with its
host's command line and environment; each session is then compacted (PreCompact /
PreCompress), resumed (its snapshot claimed) and ended. Later payloads use secrets given
earlier bare (the ``repeat`` family: the secret memory's work).

Searched for each secret, for each of its 10-character pieces and for its base64, hex
and %-encoded forms: every file under the data root (stores, WAL, spool, in-flight
files, logs, caches, backups, the secret memory), everything the hooks printed, and
the output of ``dump --json``, ``show-snapshot`` and ``search``. Prints, per family,
"N planted, M found raw", and exits 1 when anything was found.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests import plant_corpus as corpus  # noqa: E402
from tests.hooktools import hook_command  # noqa: E402

Planted = tuple[str, list[str]]  # family, parts


def _claude(
    session: str, project: str, n: int, text: str, out: str | None = None
) -> list[tuple[str, dict[str, Any]]]:
    base = {"session_id": session, "cwd": project, "transcript_path": f"{project}/.t.jsonl",
            "permission_mode": "default"}  # fmt: skip
    tid = f"toolu_{n:05d}"
    kind = n % 7
    if kind == 0:
        return [
            ("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": text})
        ]
    if kind == 1:
        return [("PostToolUse", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                 "tool_input": {"command": text, "description": "Run it"}, "tool_use_id": tid,
                 "tool_response": {"stdout": f"ok\n{text}\n" if out is None else out, "stderr": "",
                                   "interrupted": False,
                                   "isImage": False}})]  # fmt: skip
    if kind == 2:
        return [("PostToolUseFailure", {**base, "hook_event_name": "PostToolUseFailure",
                 "tool_name": "Bash", "tool_input": {"command": text}, "tool_use_id": tid,
                 "error": f"Exit code 1\n{text}\nfatal: failed", "is_interrupt": False})]  # fmt: skip
    path = f"{project}/conf/f{n}.txt"
    if kind == 3:
        return [("PostToolUse", {**base, "hook_event_name": "PostToolUse", "tool_name": "Write",
                 "tool_input": {"file_path": path, "content": text}, "tool_use_id": tid,
                 "tool_response": {"type": "create", "filePath": path, "content": text,
                                   "structuredPatch": []}})]  # fmt: skip
    if kind == 4:
        lines = ["-old"] + [f"+{line}" for line in text.splitlines()]
        return [("PostToolUse", {**base, "hook_event_name": "PostToolUse", "tool_name": "Edit",
                 "tool_input": {"file_path": path, "old_string": "old", "new_string": text},
                 "tool_use_id": tid,
                 "tool_response": {"filePath": path, "oldString": "old", "newString": text,
                                   "originalFile": "old", "structuredPatch": [
                                       {"oldStart": 1, "oldLines": 1, "newStart": 1,
                                        "newLines": len(lines) - 1, "lines": lines}]}})]  # fmt: skip
    if kind == 5:
        return [("PostToolUse", {**base, "hook_event_name": "PostToolUse", "tool_name": "TaskCreate",
                 "tool_input": {"subject": text.splitlines()[0][:80], "description": text},
                 "tool_use_id": tid,
                 "tool_response": {"task": {"id": str(n), "subject": "follow up"}}})]  # fmt: skip
    return [("PostToolUse", {**base, "hook_event_name": "PostToolUse", "tool_name": "mcp__vault__query",
             "tool_input": {"query": text}, "tool_use_id": tid,
             "tool_response": [{"type": "text", "text": f"result:\n{text}"}]})]  # fmt: skip


def _codex(
    session: str, project: str, n: int, text: str, out: str | None = None
) -> list[tuple[str, dict[str, Any]]]:
    base = {"session_id": session, "turn_id": f"turn-{n}", "transcript_path": None, "cwd": project,
            "model": "gpt-5.5", "permission_mode": "default"}  # fmt: skip
    kind = n % 3
    if kind == 0:
        return [
            ("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": text})
        ]
    if kind == 1:
        return [("PostToolUse", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                 "tool_input": {"command": text}, "tool_use_id": f"call_{n:06d}",
                 "tool_response": f"{text}\n" if out is None else out})]  # fmt: skip
    patch = f"*** Begin Patch\n*** Add File: conf/c{n}.txt\n" + "".join(
        f"+{line}\n" for line in text.splitlines()) + "*** End Patch"  # fmt: skip
    return [("PostToolUse", {**base, "hook_event_name": "PostToolUse", "tool_name": "apply_patch",
             "tool_input": {"command": patch}, "tool_use_id": f"call_{n:06d}",
             "tool_response": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the "
                              f"following files:\nA conf/c{n}.txt\n"})]  # fmt: skip


def _gemini(
    session: str, project: str, n: int, text: str, out: str | None = None
) -> list[tuple[str, dict[str, Any]]]:
    base = {"session_id": session, "transcript_path": f"{project}/.g.jsonl", "cwd": project,
            "timestamp": "2026-12-05T08:38:38.632Z"}  # fmt: skip
    kind = n % 4
    if kind == 0:
        return [("UserPromptSubmit", {**base, "hook_event_name": "BeforeAgent", "prompt": text})]
    if kind == 1:
        return [("PostToolUse", {**base, "hook_event_name": "AfterTool", "tool_name": "run_shell_command",
                 "tool_input": {"command": text},
                 "tool_response": {"llmContent": f"<untrusted_context>\nOutput: {out or text}\n"
                                                 "Process Group PGID: 8263\n</untrusted_context>",
                                   "returnDisplay": out or text}})]  # fmt: skip
    path = f"conf/g{n}.txt"
    if kind == 2:
        return [("PostToolUse", {**base, "hook_event_name": "AfterTool", "tool_name": "write_file",
                 "tool_input": {"file_path": path, "content": text},
                 "tool_response": {"llmContent": f"Successfully created and wrote to new file: "
                                                 f"{project}/{path}. Here is the updated code:\n{text}",
                                   "returnDisplay": {"fileName": f"g{n}.txt", "filePath": f"{project}/{path}",
                                                     "originalContent": "", "newContent": text}}})]  # fmt: skip
    return [("PostToolUse", {**base, "hook_event_name": "AfterTool", "tool_name": "replace",
             "tool_input": {"file_path": path, "old_string": "old", "new_string": text},
             "tool_response": {"llmContent": f"Successfully modified file: {project}/{path} (1 replacements).",
                               "returnDisplay": {"fileName": f"g{n}.txt", "originalContent": "old",
                                                 "newContent": text}}})]  # fmt: skip


CARRIERS = {"claude": _claude, "codex": _codex, "gemini": _gemini}
# Which of a carrier's kinds (n modulo) is its shell call.
SHELL_EVERY = {"claude": 7, "codex": 3, "gemini": 4}


def carry(
    host: str, session: str, project: str, n: int, text: str
) -> list[tuple[str, dict[str, Any]]]:
    """``text`` in ``host``'s carrier for ``n``; a ``generated`` case (a command and what it
    printed, apart) always in its shell call."""
    if corpus.SEP in text:
        command, out = text.split(corpus.SEP, 1)
        return CARRIERS[host](session, project, n * SHELL_EVERY[host] + 1, command, out)
    return CARRIERS[host](session, project, n, text)


COMPACT = {"claude": "PreCompact", "codex": "PreCompact", "gemini": "PreCompact"}


def _env(host: str, root: Path, home: Path, project: str, session: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "GEMINI", "CODEX"))}
    env.update(HOME=str(home), CTXMODE_HOME=str(root), NO_COLOR="1")
    if host == "claude":
        env["CLAUDE_PROJECT_DIR"] = project
    elif host == "gemini":
        env.update(GEMINI_SESSION_ID=session, GEMINI_PROJECT_DIR=project, GEMINI_CWD=project,
                   CLAUDE_PROJECT_DIR=project, GEMINI_CLI_NO_RELAUNCH="true")  # fmt: skip
    return env


def _hook(host: str, event: str, payload: dict[str, Any], env: dict[str, str], cwd: str) -> bytes:
    proc = subprocess.run(hook_command(event, host=None if host == "claude" else host),
                          input=json.dumps(payload).encode(), capture_output=True, env=env,
                          cwd=cwd, timeout=120, check=False)  # fmt: skip
    if proc.returncode or proc.stderr:
        raise SystemExit(
            f"hook contract broken: {host} {event}: {proc.returncode} {proc.stderr[-500:]!r}"
        )
    return proc.stdout


def _session_end(host: str, session: str, project: str) -> list[tuple[str, dict[str, Any]]]:
    base = {"session_id": session, "cwd": project, "transcript_path": None}
    if host == "gemini":
        return [("PreCompact", {**base, "hook_event_name": "PreCompress", "trigger": "manual"}),
                ("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "resume"}),
                ("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "exit"})]  # fmt: skip
    trigger = {"trigger": "manual", "custom_instructions": ""}
    return [("PreCompact", {**base, "hook_event_name": "PreCompact", **trigger}),
            ("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "compact"}),
            ("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "other"})]  # fmt: skip


def _cli(args: list[str], env: dict[str, str], cwd: str) -> bytes:
    proc = subprocess.run([sys.executable, "-m", "ctxmode", *args], capture_output=True, env=env,
                          cwd=cwd, timeout=300, check=False)  # fmt: skip
    return proc.stdout + proc.stderr


def plant(base: Path, seed: int, per_family: int) -> tuple[Counter[str], Counter[str], list[str]]:
    """Plant the corpus under ``base``; (planted per family, found raw per family, where)."""
    root, home = base / "data", base / "home"
    home.mkdir(parents=True, exist_ok=True)
    cases = corpus.cases(seed, per_family)
    repeats = corpus.repeats(seed, max(3, per_family // 2))
    planted: list[Planted] = []
    blobs: dict[str, bytes] = {}
    projects = {}
    for h, host in enumerate(CARRIERS):
        project = base / f"proj-{host}"
        project.mkdir(exist_ok=True)
        projects[host] = str(project)
        session = f"plant-{host}-{seed}"
        env = _env(host, root, home, str(project), session)
        mine = [c for i, c in enumerate(cases) if i % 3 == h]
        printed = b""
        n = 0
        for family, text, parts in mine:
            for event, payload in carry(host, session, str(project), n, text):
                printed += _hook(host, event, payload, env, str(project))
            planted.append((family, parts))
            n += 1
        for first, later, secret in repeats:
            for text in (first, later):
                for event, payload in carry(host, session, str(project), n, text):
                    printed += _hook(host, event, payload, env, str(project))
                n += 1 + (n % 2)  # the later use rides in another carrier
            planted.append(("repeat", [secret]))
        for event, payload in _session_end(host, session, str(project)):
            printed += _hook(host, event, payload, env, str(project))
        blobs[f"{host}: hook stdout"] = printed
        outputs = [["dump", "--json"], ["show-snapshot"], ["show-snapshot", "--raw"], ["sessions"]]
        outputs += [
            ["search", w, "--limit", "200"]
            for w in ("password", "token", "key", "secret", "REDACTED", "admin")
        ]
        for args in outputs:
            blobs[f"{host}: {' '.join(args)}"] = _cli(
                [*args, "--project", str(project)], env, str(project)
            )
    for path in root.rglob("*"):
        if path.is_file():
            blobs[str(path.relative_to(root))] = path.read_bytes()
    for path in home.rglob("*"):
        if path.is_file():
            blobs[f"HOME/{path.relative_to(home)}"] = path.read_bytes()
    texts = {}
    for name, blob in blobs.items():
        text = blob.decode("utf-8", "replace")
        texts[name] = text + "\n" + html.unescape(text).replace("\\/", "/")
    total, found, where = Counter[str](), Counter[str](), []
    for family, parts in planted:
        total[family] += 1
        hit = None
        for part in parts:
            for needle in [*corpus.pieces(part), *corpus.decodable(part)]:
                hit = next((name for name, text in texts.items() if needle in text), None)
                if hit:
                    where.append(f"{family}: {part!r} ({needle!r}) in {hit}")
                    break
            if hit:
                break
        if hit:
            found[family] += 1
    return total, found, where


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--per-family", type=int, default=12)
    parser.add_argument("--keep", action="store_true", help="keep the data root and print where")
    parser.add_argument("--show", type=int, default=10, help="leaks to show")
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="ctxmode-plant-"))
    total, found, where = plant(base, args.seed, args.per_family)
    for family in total:
        print(f"{family:11} {total[family]:4} planted, {found[family]:3} found raw")
    print(f"{'all':11} {sum(total.values()):4} planted, {sum(found.values()):3} found raw")
    for line in where[: args.show]:
        print("  " + line)
    if args.keep:
        print(f"kept: {base}")
    else:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    return 1 if where else 0


if __name__ == "__main__":
    sys.exit(main())
