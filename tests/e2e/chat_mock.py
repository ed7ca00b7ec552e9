"""A scripted mock of the OpenAI Chat Completions API, for driving OpenAI-style clients offline.

Stdlib only (http.server + threading), the sibling of ``codex_mock.py`` (the Responses API)
and ``gemini_mock.py``. The clients that speak ``POST /v1/chat/completions`` (GitHub Copilot
CLI with ``COPILOT_PROVIDER_BASE_URL``, Qwen Code with ``OPENAI_BASE_URL``, OpenCode with an
``@ai-sdk/openai-compatible`` provider) send ``messages`` (system/user/assistant/tool) and
``tools``, usually with ``stream: true``; the mock answers with the ``chat.completion.chunk``
events of one choice — text deltas, then ``tool_calls`` deltas, then the finish reason and
(for ``stream_options.include_usage``, and always in the last chunk's ``usage``) the usage —
or, without ``stream``, one ``chat.completion`` object.

Replies come from a *script*: a callable that sees each request and returns a ``Reply`` — text
and tool calls by name with JSON arguments (each client names its tools its own way: the
script says ``Call("bash", {"command": ...})`` or ``Call("run_shell_command", ...)``), and the
usage to report (the usage drives a client's auto-compaction). Whether a request asks for a
compaction summary differs per client, so ``Steps`` takes the predicate. Every request body
is kept (``requests``) and appended to a JSONL file. The server binds 127.0.0.1 on a free port,
answers a bounded number of requests, and stops when the ``with`` block ends (its threads are
daemons: it never outlives the test process).
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

SUMMARY_TEXT = "Summary: the ledger helper was added and committed; its test still fails."
MODEL = "mock-model"


@dataclass
class Call:
    """A tool call: the client's own tool name and its arguments."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class Reply:
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    prompt_tokens: int = 50
    completion_tokens: int = 20


def say(text: str, **usage: int) -> Reply:
    return Reply(text=text, **usage)


def call(name: str, /, **arguments: Any) -> Reply:
    return Reply(calls=[Call(name, arguments)])


class Request:
    """One request as the mock received it."""

    def __init__(self, seq: int, path: str, body: dict[str, Any]) -> None:
        self.seq = seq
        self.path = path
        self.body = body

    @property
    def messages(self) -> list[dict[str, Any]]:
        value = self.body.get("messages")
        return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []

    @property
    def tool_names(self) -> list[str]:
        names = []
        for tool in self.body.get("tools") or []:
            if isinstance(tool, dict):
                fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
                if isinstance(fn.get("name"), str):
                    names.append(fn["name"])
        return names

    def texts(self, role: str | None = None) -> Iterator[str]:
        """The text of every message (of ``role`` when given), in order."""
        for message in self.messages:
            if role is not None and message.get("role") != role:
                continue
            content = message.get("content")
            if isinstance(content, str):
                yield content
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        yield part["text"]

    def last_user_text(self) -> str:
        texts = list(self.texts("user"))
        return texts[-1] if texts else ""

    def tool_turns(self) -> int:
        """How many tool results follow the last user message (the script's position)."""
        count = 0
        for message in reversed(self.messages):
            if message.get("role") == "user":
                break
            if message.get("role") == "tool":
                count += 1
        return count

    def tool_results(self) -> list[str]:
        return [
            m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
            for m in self.messages
            if m.get("role") == "tool"
        ]

    def contains(self, needle: str) -> bool:
        return needle in json.dumps(self.body, ensure_ascii=False)

    def count(self, needle: str) -> int:
        return json.dumps(self.body, ensure_ascii=False).count(needle)


Script = Callable[[Request], Reply]


class Steps:
    """Reply i to the i-th request after the last user message; then ``final``.

    ``is_compaction(request)`` tells a client's summary request apart (each client words its
    own); such a request is answered with ``summary``.
    """

    def __init__(
        self,
        *steps: Reply,
        final: str = "Done.",
        summary: str = SUMMARY_TEXT,
        is_compaction: Callable[[Request], bool] = lambda req: False,
    ) -> None:
        self.steps = steps
        self.final = final
        self.summary = summary
        self.is_compaction = is_compaction

    def __call__(self, req: Request) -> Reply:
        if self.is_compaction(req):
            return say(self.summary)
        index = req.tool_turns()
        return self.steps[index] if index < len(self.steps) else say(self.final)


class MockChat:
    """The server: ``with MockChat(script, log_path) as api: api.base_url`` (ends in ``/v1``)."""

    def __init__(self, script: Script, log_path: Path | None = None, max_requests: int = 200):
        self.script = script
        self.log_path = log_path
        self.max_requests = max_requests
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> MockChat:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    def record(self, path: str, body: dict[str, Any]) -> Request | None:
        with self._lock:
            if len(self.requests) >= self.max_requests:
                return None
            req = Request(len(self.requests), path, body)
            self.requests.append(req)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(body, ensure_ascii=False) + "\n")
            return req

    def _tool_calls(self, reply: Reply) -> list[dict[str, Any]]:
        return [
            {
                "id": self.new_id("call"),
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in reply.calls
        ]

    @staticmethod
    def _usage(reply: Reply) -> dict[str, int]:
        return {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        }

    def completion(self, reply: Reply, model: str) -> dict[str, Any]:
        """The whole answer as one ``chat.completion`` (``stream`` false)."""
        calls = self._tool_calls(reply)
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if calls:
            message["tool_calls"] = calls
        return {
            "id": self.new_id("chatcmpl"),
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": self._usage(reply),
        }

    def chunks(self, reply: Reply, model: str) -> list[bytes]:
        """The answer as ``chat.completion.chunk`` events, then ``[DONE]``."""
        cid = self.new_id("chatcmpl")

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
            body = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
            return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"

        out = [chunk({"role": "assistant", "content": ""})]
        if reply.text:
            out.append(chunk({"content": reply.text}))
        calls = self._tool_calls(reply)
        for index, tool_call in enumerate(calls):
            out.append(chunk({"tool_calls": [{"index": index, **tool_call}]}))
        out.append(chunk({}, "tool_calls" if calls else "stop"))
        usage_chunk = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [],
            "usage": self._usage(reply),
        }
        out.append(b"data: " + json.dumps(usage_chunk).encode() + b"\n\n")
        out.append(b"data: [DONE]\n\n")
        return out


def _make_handler(api: MockChat) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the test reports
            pass

        def _json(self, code: int, value: Any) -> None:
            body = json.dumps(value).encode()
            self.send_response(code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            # Some clients list the models before they start; one model is enough.
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
            else:
                self._json(404, {"error": "not here"})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
                self._json(404, {"error": "not here"})
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._json(400, {"error": "bad json"})
                return
            if not isinstance(body, dict):
                self._json(400, {"error": "not an object"})
                return
            req = api.record(self.path, body)
            if req is None:
                self._json(429, {"error": {"message": "request budget spent"}})
                return
            reply = api.script(req)
            model = str(body.get("model") or MODEL)
            if not body.get("stream"):
                self._json(200, api.completion(reply, model))
                return
            payload = b"".join(api.chunks(reply, model))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
