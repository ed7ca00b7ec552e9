"""A scripted mock of the OpenAI Responses API, for driving the real Codex CLI offline.

Stdlib only (http.server + threading), the sibling of ``mock_api.py`` (Claude Code's). Codex
with a custom provider (``wire_api="responses"``) sends ``POST /v1/responses`` with a JSON body
(``input``: developer/user messages, ``function_call``/``function_call_output``,
``custom_tool_call``/``custom_tool_call_output`` items) and reads a ``text/event-stream`` of
``response.created``, ``response.output_item.done`` and ``response.completed`` events.

Replies come from a *script*: a callable that sees each request and returns a ``Reply`` — text,
shell commands (``exec_command``), patches (``apply_patch``) and the usage to report (the usage
drives Codex's auto-compaction: ``model_auto_compact_token_limit``). A compaction request (its
last user message asks for a CONTEXT CHECKPOINT COMPACTION) is answered with the summary text.
Every request body is kept and appended to a JSONL file. The server binds 127.0.0.1 on a free
port and stops by itself after a bounded number of requests.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

COMPACTION_ASK = "CONTEXT CHECKPOINT COMPACTION"
SUMMARY_TEXT = "Summary: the ledger helper was added and committed; its test still fails."


@dataclass
class Shell:
    """An ``exec_command`` call (``extra``: more arguments, e.g. sandbox_permissions)."""

    cmd: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Patch:
    """An ``apply_patch`` call (the freeform patch text)."""

    text: str


@dataclass
class Call:
    """A call of any other function tool (``create_goal``, ``update_goal``, ...)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class Reply:
    text: str = ""
    calls: list[Shell | Patch | Call] = field(default_factory=list)
    input_tokens: int = 50
    output_tokens: int = 20


def say(text: str, **usage: int) -> Reply:
    return Reply(text=text, **usage)


def shell(cmd: str, **usage: int) -> Reply:
    return Reply(calls=[Shell(cmd)], **usage)


def patch(text: str, **usage: int) -> Reply:
    return Reply(calls=[Patch(text)], **usage)


class Request:
    """One request as the mock received it."""

    def __init__(self, seq: int, body: dict[str, Any]) -> None:
        self.seq = seq
        self.body = body

    @property
    def items(self) -> list[dict[str, Any]]:
        value = self.body.get("input")
        return [i for i in value if isinstance(i, dict)] if isinstance(value, list) else []

    def texts(self, role: str | None = None) -> Iterator[str]:
        """The text of every message item (of ``role`` when given), in order."""
        for item in self.items:
            if item.get("type") not in (None, "message"):
                continue
            if role is not None and item.get("role") != role:
                continue
            content = item.get("content")
            if isinstance(content, str):
                yield content
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        yield part["text"]

    def last_user_text(self) -> str:
        texts = list(self.texts("user"))
        return texts[-1] if texts else ""

    @property
    def is_compaction(self) -> bool:
        return COMPACTION_ASK in self.last_user_text()

    def outputs(self) -> list[dict[str, Any]]:
        """The tool outputs (function_call_output / custom_tool_call_output) sent back."""
        return [i for i in self.items if str(i.get("type", "")).endswith("_call_output")]

    def tool_turns(self) -> int:
        """How many tool outputs follow the last user message (the script's position)."""
        count = 0
        for item in reversed(self.items):
            if item.get("type") == "message" and item.get("role") == "user":
                break
            if str(item.get("type", "")).endswith("_call_output"):
                count += 1
        return count

    def contains(self, needle: str) -> bool:
        return needle in json.dumps(self.body, ensure_ascii=False)


Script = Callable[[Request], Reply]


class Steps:
    """Reply i to the i-th request after the last user message; then ``final``."""

    def __init__(self, *steps: Reply, final: str = "Done.", summary: str = SUMMARY_TEXT) -> None:
        self.steps = steps
        self.final = final
        self.summary = summary

    def __call__(self, req: Request) -> Reply:
        if req.is_compaction:
            return say(self.summary)
        index = req.tool_turns()
        return self.steps[index] if index < len(self.steps) else say(self.final)


class MockResponses:
    """The server: ``with MockResponses(script, log_path) as api: api.base_url``."""

    def __init__(self, script: Script, log_path: Path | None = None, max_requests: int = 200):
        self.script = script
        self.log_path = log_path
        self.max_requests = max_requests
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> MockResponses:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    def record(self, body: dict[str, Any]) -> Request | None:
        with self._lock:
            if len(self.requests) >= self.max_requests:
                return None
            req = Request(len(self.requests), body)
            self.requests.append(req)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(body, ensure_ascii=False) + "\n")
            return req

    def events(self, reply: Reply) -> list[bytes]:
        resp_id = self.new_id("resp")
        items: list[dict[str, Any]] = []
        if reply.text:
            items.append(
                {
                    "type": "message",
                    "id": self.new_id("msg"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
                }
            )
        for c in reply.calls:
            if isinstance(c, Shell):
                items.append(
                    {
                        "type": "function_call",
                        "id": self.new_id("fc"),
                        "call_id": self.new_id("call"),
                        "name": "exec_command",
                        "arguments": json.dumps({"cmd": c.cmd, **c.extra}),
                        "status": "completed",
                    }
                )
            elif isinstance(c, Call):
                items.append(
                    {
                        "type": "function_call",
                        "id": self.new_id("fc"),
                        "call_id": self.new_id("call"),
                        "name": c.name,
                        "arguments": json.dumps(c.arguments),
                        "status": "completed",
                    }
                )
            else:
                items.append(
                    {
                        "type": "custom_tool_call",
                        "id": self.new_id("ctc"),
                        "call_id": self.new_id("call"),
                        "name": "apply_patch",
                        "input": c.text,
                        "status": "completed",
                    }
                )
        out = [_sse("response.created", {"response": {"id": resp_id, "status": "in_progress"}})]
        for index, item in enumerate(items):
            out.append(_sse("response.output_item.added", {"output_index": index, "item": item}))
            out.append(_sse("response.output_item.done", {"output_index": index, "item": item}))
        usage = {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }
        out.append(_sse("response.completed", {"response": {"id": resp_id, "usage": usage}}))
        return out


def _sse(kind: str, data: dict[str, Any]) -> bytes:
    body = json.dumps({"type": kind, **data}, ensure_ascii=False)
    return f"event: {kind}\ndata: {body}\n\n".encode()


def _make_handler(api: MockResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the test reports
            pass

        def _plain(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._plain(404, b'{"error":"not here"}')

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not self.path.rstrip("/").endswith("/responses"):
                self._plain(404, b'{"error":"not here"}')
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._plain(400, b'{"error":"bad json"}')
                return
            req = api.record(body)
            if req is None:
                self._plain(429, b'{"error":"request budget spent"}')
                return
            payload = b"".join(api.events(api.script(req)))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
