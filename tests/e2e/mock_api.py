"""A scripted mock of the Anthropic Messages API, for driving the real Claude Code CLI offline.

Stdlib only (http.server + threading). The client sends streaming ``POST /v1/messages`` (with
``?beta=true``) and a ``HEAD /`` probe; everything else gets a 404. Replies are produced by a
*script*: a callable that sees each request (parsed body) and returns a ``Reply`` — text, one or
more tool calls, and the usage to report. Every request body is kept in memory and appended to a
JSONL file, so a test can assert on exactly what the model was sent.

The server binds 127.0.0.1 on a free port, serves from a daemon thread and stops by itself after
a bounded number of requests or seconds, so a hung client can never keep it alive.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# What Claude Code's compaction prompt asks for; the client parses <summary> out of the answer.
_SUMMARY_ASK = re.compile(r"summary of the conversation|<summary> block", re.I)


@dataclass
class ToolCall:
    """One tool_use block the mock "model" emits."""

    name: str
    input: dict[str, Any]
    id: str = ""


@dataclass
class Reply:
    """What the mock answers to one request."""

    text: str = ""
    tools: list[ToolCall] = field(default_factory=list)
    input_tokens: int = 50
    output_tokens: int = 20

    @property
    def stop_reason(self) -> str:
        return "tool_use" if self.tools else "end_turn"


def say(text: str, **usage: int) -> Reply:
    return Reply(text=text, **usage)


def call(name: str, /, text: str = "", input_tokens: int = 50, **tool_input: Any) -> Reply:
    """A reply with a single tool call (keyword arguments are the tool input)."""
    return Reply(text=text, tools=[ToolCall(name, tool_input)], input_tokens=input_tokens)


def calls(*tools: ToolCall, text: str = "", input_tokens: int = 50) -> Reply:
    """A reply with several tool calls in one assistant turn (a parallel batch)."""
    return Reply(text=text, tools=list(tools), input_tokens=input_tokens)


class Request:
    """One recorded ``POST /v1/messages``: the parsed body with helpers for scripts and asserts."""

    def __init__(self, seq: int, path: str, body: dict[str, Any], raw: str) -> None:
        self.seq = seq
        self.path = path
        self.body = body
        self.raw = raw

    @property
    def messages(self) -> list[dict[str, Any]]:
        msgs = self.body.get("messages")
        return msgs if isinstance(msgs, list) else []

    @property
    def has_tools(self) -> bool:
        return bool(self.body.get("tools"))

    def blocks(self, role: str | None = None) -> Iterator[dict[str, Any]]:
        """Every content block of every message (strings become text blocks)."""
        for msg in self.messages:
            if role is not None and msg.get("role") != role:
                continue
            content = msg.get("content")
            if isinstance(content, str):
                yield {"type": "text", "text": content}
            elif isinstance(content, list):
                yield from (b for b in content if isinstance(b, dict))

    def tool_results(self) -> list[dict[str, Any]]:
        return [b for b in self.blocks("user") if b.get("type") == "tool_result"]

    def tool_result_text(self, tool_use_id: str) -> str | None:
        """The text of the tool_result answering ``tool_use_id`` (None if absent)."""
        for b in self.tool_results():
            if b.get("tool_use_id") == tool_use_id:
                return _flatten(b.get("content"))
        return None

    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.blocks("assistant") if b.get("type") == "tool_use"]

    def first_user_text(self) -> str:
        for msg in self.messages:
            if msg.get("role") == "user":
                return _flatten(msg.get("content"))
        return ""

    def last_user_text(self) -> str:
        """The text blocks of the last user/assistant message, if it is the user's.

        Claude Code 2.1 also puts ``role: system`` entries (hook context) among the messages;
        they are skipped. Tool results are not text.
        """
        turns = [m for m in self.messages if m.get("role") in ("user", "assistant")]
        if not turns or turns[-1].get("role") != "user":
            return ""
        content = turns[-1].get("content")
        if isinstance(content, str):
            return content
        return "\n".join(
            b.get("text", "")
            for b in content or []
            if isinstance(b, dict) and b.get("type") == "text"
        )

    @property
    def is_compaction(self) -> bool:
        """Whether this is the summarisation request of a compaction (manual or auto)."""
        return bool(_SUMMARY_ASK.search(self.last_user_text()))

    def strings(self) -> Iterator[str]:
        """Every string value of the body (system prompt, message texts, tool results...)."""
        stack: list[Any] = [self.body]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                yield item
            elif isinstance(item, dict):
                stack.extend(reversed(list(item.values())))
            elif isinstance(item, list):
                stack.extend(reversed(item))

    def contains(self, needle: str) -> bool:
        """Whether ``needle`` occurs in any string of the body, wherever the client put it."""
        return any(needle in text for text in self.strings())

    def find_all(self, pattern: re.Pattern[str]) -> list[str]:
        """Every match of ``pattern`` in the strings of the body, in document order."""
        return [m.group(0) for text in self.strings() for m in pattern.finditer(text)]

    def outline(self, width: int = 160) -> str:
        """One line per message block (role, type, start of its text): what the model saw."""
        lines = []
        for msg in self.messages:
            content = msg.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks or []:
                if not isinstance(block, dict):
                    continue
                kind = block.get("type")
                if kind == "tool_use":
                    text = json.dumps(block.get("input"))
                elif kind == "tool_result":
                    text = _flatten(block.get("content"))
                else:
                    text = str(block.get("text", ""))
                text = " ".join(text.split())
                lines.append(f"  {msg.get('role')}/{kind}: {text[:width]}")
        return "\n".join(lines)

    def summary(self) -> str:
        return (
            f"#{self.seq} model={self.body.get('model')} msgs={len(self.messages)} "
            f"tools={len(self.body.get('tools') or [])} "
            f"last_user={self.last_user_text()[:120]!r}"
        )


def _flatten(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_flatten(c.get("text", "")) for c in content if isinstance(c, dict))
    return ""


Script = Callable[[Request], Reply]
# A callable step may return None: it had nothing to do, and the next step answers.
Step = Reply | Callable[[Request], Reply | None]

SUMMARY_TEXT = (
    "<analysis>mock analysis</analysis>\n<summary>\nMOCK_SUMMARY: the user asked for work in "
    "this project; details were compacted away.\n</summary>"
)
# A marker the scenarios put into every Agent prompt, so the subagent's own requests are told
# apart from the main loop's without depending on the client's prompt wording.
SUBAGENT_MARK = "[mock-subagent]"


class Steps:
    """A script that plays the main loop's replies in order, one per request.

    The client is sequential (one request at a time in print mode), so a queue is
    deterministic. Summarisation requests of a compaction get ``summary`` without consuming a
    step (their sequence numbers are kept in ``compactions``); a subagent's requests get a
    short text reply. A step may be a callable, to build its reply from what the request
    carries (e.g. a search hint from the snapshot). When the queue is empty, the model says
    ``final``. Steps can be appended between runs with ``then``.
    """

    def __init__(self, *steps: Step, summary: str = SUMMARY_TEXT, final: str = "Done.") -> None:
        self.queue: list[Step] = list(steps)
        self.summary = summary
        self.final = final
        self.compactions: list[int] = []
        self.subagent_requests: list[int] = []
        self.main_requests: list[int] = []

    def then(self, *steps: Step) -> Steps:
        self.queue.extend(steps)
        return self

    def __call__(self, req: Request) -> Reply:
        if req.is_compaction:
            self.compactions.append(req.seq)
            return say(self.summary)
        if SUBAGENT_MARK in req.first_user_text():
            self.subagent_requests.append(req.seq)
            return say("Subagent report: nothing unusual found.")
        self.main_requests.append(req.seq)
        while self.queue:
            step = self.queue.pop(0)
            reply = step(req) if callable(step) else step
            if reply is not None:
                return reply
        return say(self.final)


def load_tools(*names: str) -> Step:
    """A step that loads deferred tools through ToolSearch, when the client defers them.

    Claude Code 2.1.3xx lists some tools (the task tools among them) by name only; a model
    must fetch their schemas with ToolSearch before calling them. Older clients send the
    tools outright, and then this step does nothing.
    """

    def step(req: Request) -> Reply | None:
        offered = {t.get("name") for t in req.body.get("tools") or [] if isinstance(t, dict)}
        if all(name in offered for name in names) or "ToolSearch" not in offered:
            return None
        return call("ToolSearch", query="select:" + ",".join(names))

    return step


class MockAPI:
    """The server. Use as a context manager; ``base_url`` goes into ANTHROPIC_BASE_URL."""

    def __init__(
        self,
        script: Script,
        *,
        log_path: Path | None = None,
        max_requests: int = 400,
        max_seconds: float = 300.0,
    ) -> None:
        self.script = script
        self.log_path = log_path
        self.max_requests = max_requests
        self.max_seconds = max_seconds
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self.other_paths: list[str] = []
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._server: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None
        self.stopped = threading.Event()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> MockAPI:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="mock-api", daemon=True).start()
        # A hard deadline: the server goes away even if the test forgets to stop it.
        self._timer = threading.Timer(self.max_seconds, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        if self.stopped.is_set():
            return
        self.stopped.set()
        if self._timer is not None:
            self._timer.cancel()
        if self._server is not None:
            # shutdown() waits for serve_forever; never call it from the serving thread.
            server = self._server
            threading.Thread(target=lambda: (server.shutdown(), server.server_close())).start()

    def __enter__(self) -> MockAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- request handling ------------------------------------------------------------------

    def record(self, path: str, raw: str) -> Request | None:
        """Parse, number, keep and log one request; None once the budget is spent."""
        with self._lock:
            if len(self.requests) >= self.max_requests:
                self.errors.append(f"request budget of {self.max_requests} exhausted")
                return None
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            req = Request(len(self.requests), path, body, raw)
            self.requests.append(req)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"seq": req.seq, "path": path, "body": body}) + "\n")
            return req

    def answer(self, req: Request) -> Reply:
        try:
            return self.script(req)
        except Exception as exc:  # a script bug must surface in the test, not hang the client
            self.errors.append(f"script raised on request #{req.seq}: {exc!r}")
            return say(f"mock script error: {exc!r}")

    def new_tool_id(self) -> str:
        return f"toolu_mock_{next(self._ids):04d}"

    def dump(self, limit: int = 40) -> str:
        """A readable digest of the requests received, for failure messages."""
        lines = [r.summary() for r in self.requests[-limit:]]
        return "\n".join(lines + self.errors)


def sse_events(reply: Reply, model: str, msg_id: str, new_id: Callable[[], str]) -> list[bytes]:
    """The SSE byte frames of one streamed assistant message."""
    frames: list[tuple[str, dict[str, Any]]] = []
    usage = {
        "input_tokens": reply.input_tokens,
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    frames.append(
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                },
            },
        )
    )
    index = 0
    if reply.text:
        frames.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        frames.append(
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": reply.text},
                },
            )
        )
        frames.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    for tool in reply.tools:
        tool.id = tool.id or new_id()
        frames.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": tool.id,
                        "name": tool.name,
                        "input": {},
                    },
                },
            )
        )
        frames.append(
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(tool.input)},
                },
            )
        )
        frames.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    frames.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                "usage": {
                    "input_tokens": reply.input_tokens,
                    "output_tokens": reply.output_tokens,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                },
            },
        )
    )
    frames.append(("message_stop", {"type": "message_stop"}))
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in frames]


def message_json(reply: Reply, model: str, msg_id: str, new_id: Callable[[], str]) -> bytes:
    """The same reply as a non-streamed Messages API response."""
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    for tool in reply.tools:
        tool.id = tool.id or new_id()
        content.append({"type": "tool_use", "id": tool.id, "name": tool.name, "input": tool.input})
    return json.dumps(
        {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }
    ).encode()


def _make_handler(api: MockAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the test reports
            pass

        def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_HEAD(self) -> None:
            self._send(200, b"")

        def do_GET(self) -> None:
            api.other_paths.append(f"GET {self.path}")
            self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"mock"}}')

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            if self.path.split("?", 1)[0] != "/v1/messages":
                api.other_paths.append(f"POST {self.path}")
                self._send(
                    404, b'{"type":"error","error":{"type":"not_found_error","message":"mock"}}'
                )
                return
            req = api.record(self.path, raw)
            if req is None:
                # 400, not 5xx: the client retries server errors but gives up on this at once.
                self._send(
                    400,
                    b'{"type":"error","error":{"type":"invalid_request_error",'
                    b'"message":"mock API: request budget exhausted"}}',
                )
                return
            reply = api.answer(req)
            model = str(req.body.get("model") or "claude-mock")
            msg_id = f"msg_mock_{req.seq:04d}"
            if not req.body.get("stream"):
                self._send(200, message_json(reply, model, msg_id, api.new_tool_id))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for frame in sse_events(reply, model, msg_id, api.new_tool_id):
                    self.wfile.write(frame)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                api.errors.append(f"client hung up during request #{req.seq}")

    return Handler
