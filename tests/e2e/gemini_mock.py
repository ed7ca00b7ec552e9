"""A scripted mock of the Gemini API, for driving the real Gemini CLI offline.

Stdlib only (http.server + threading), the sibling of ``codex_mock.py``. The CLI, pointed here
with ``GOOGLE_GEMINI_BASE_URL``, sends ``POST /v1beta/models/<model>:<rpc>`` with JSON bodies
(``/work/shared/gemini-hooks.md``, "Recipe"):

- the model router: ``generateContent`` with a ``responseJsonSchema`` asking for
  ``complexity_score``: answered with a valid JSON verdict;
- a compression's two summary calls: ``generateContent`` whose system instruction asks for a
  ``<state_snapshot>``: answered with :data:`SUMMARY` (it names nothing of the session, so
  whatever the model learns of it after the compression comes from ctxmode's snapshot);
- agent turns: ``streamGenerateContent?alt=sse``, answered from a *script* (a callable that
  sees each request and returns a :class:`Reply`: text, or tool calls, and the prompt token
  count to report — 900,000 makes the CLI compress before its next request);
- anything else (``generateContent`` for a title, a next-speaker check...): a short text.

Every request is kept (``requests``) and appended to a JSONL log as ``{"rpc", "model",
"body"}``. The server binds 127.0.0.1 on a free port, refuses requests past a bound and stops
when its ``with`` block ends.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SUMMARY = (
    "<state_snapshot>\nMOCK_SUMMARY: the user and the assistant worked on the project earlier "
    "in this session. (Mock summary: it deliberately names no files, commands or plans.)\n"
    "</state_snapshot>"
)
COMPRESSION_ASK = "state_snapshot"
ROUTER_KEY = "complexity_score"
# Prompt tokens that make the CLI compress before its next request (threshold 0.5 of
# 1,048,576 in 0.61.0).
COMPRESS_TOKENS = 900_000


@dataclass
class Call:
    """A tool call the model makes (``functionCall``)."""

    name: str
    args: dict[str, Any]


@dataclass
class Reply:
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    prompt_tokens: int = 120


def say(text: str, **usage: int) -> Reply:
    return Reply(text=text, **usage)


def call(name: str, prompt_tokens: int = 120, **args: Any) -> Reply:
    return Reply(calls=[Call(name, args)], prompt_tokens=prompt_tokens)


class Request:
    """One request as the mock received it."""

    def __init__(self, seq: int, rpc: str, model: str, body: dict[str, Any]) -> None:
        self.seq = seq
        self.rpc = rpc
        self.model = model
        self.body = body

    @property
    def contents(self) -> list[dict[str, Any]]:
        value = self.body.get("contents")
        return [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []

    @staticmethod
    def parts(content: dict[str, Any]) -> list[dict[str, Any]]:
        value = content.get("parts")
        return [p for p in value if isinstance(p, dict)] if isinstance(value, list) else []

    def texts(self, role: str | None = None) -> list[str]:
        """The text parts of every content (of ``role`` when given), in order."""
        out = []
        for content in self.contents:
            if role is None or content.get("role") == role:
                out.extend(p["text"] for p in self.parts(content) if isinstance(p.get("text"), str))
        return out

    def system(self) -> str:
        instruction = self.body.get("systemInstruction")
        parts = instruction.get("parts") if isinstance(instruction, dict) else None
        if not isinstance(parts, list):
            return ""
        return "".join(p.get("text", "") for p in parts if isinstance(p, dict))

    @property
    def is_agent_turn(self) -> bool:
        return self.rpc == "streamGenerateContent"

    @property
    def is_router(self) -> bool:
        return ROUTER_KEY in json.dumps(self.body.get("generationConfig", {}))

    @property
    def is_compression(self) -> bool:
        return not self.is_agent_turn and COMPRESSION_ASK in self.system()

    def tool_turns(self) -> int:
        """How many function responses follow the last user prompt (the script's position)."""
        count = 0
        for content in reversed(self.contents):
            parts = self.parts(content)
            prompt = any("text" in p for p in parts)
            if (
                content.get("role") == "user"
                and prompt
                and not any("functionResponse" in p for p in parts)
            ):
                break
            count += sum(1 for p in parts if "functionResponse" in p)
        return count

    def text(self) -> str:
        """All the request's text, as the model reads it."""
        return "\n".join(self.texts())

    def count(self, needle: str) -> int:
        """How many times ``needle`` occurs in the request's text parts."""
        return sum(t.count(needle) for t in self.texts())


Script = Callable[[Request], Reply]


class Steps:
    """Reply i to the i-th agent request after the last user prompt; then ``final``."""

    def __init__(self, *steps: Reply, final: str = "Done.") -> None:
        self.steps = steps
        self.final = final

    def __call__(self, req: Request) -> Reply:
        index = req.tool_turns()
        return self.steps[index] if index < len(self.steps) else say(self.final)


class MockGemini:
    """The server: ``with MockGemini(script, log_path) as api: api.base_url``; ``script`` may
    be swapped between runs (``api.script = ...``)."""

    def __init__(self, script: Script, log_path: Path | None = None, max_requests: int = 400):
        self.script = script
        self.log_path = log_path
        self.max_requests = max_requests
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> MockGemini:
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
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def record(self, rpc: str, model: str, body: dict[str, Any]) -> Request | None:
        with self._lock:
            if len(self.requests) >= self.max_requests:
                return None
            req = Request(len(self.requests), rpc, model, body)
            self.requests.append(req)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    record = {"rpc": rpc, "model": model, "body": body}
                    fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            return req

    def agent_turns(self) -> list[Request]:
        return [r for r in self.requests if r.is_agent_turn]

    def answer(self, req: Request) -> dict[str, Any]:
        """The response object (a candidate and its usage) for ``req``."""
        if req.is_router:
            verdict = {"complexity_reasoning": "a routine task", "complexity_score": 50}
            return _response([{"text": json.dumps(verdict)}], 40)
        if req.is_compression:
            return _response([{"text": SUMMARY}], 2000)
        if not req.is_agent_turn:
            return _response([{"text": "Ok."}], 40)
        reply = self.script(req)
        parts: list[dict[str, Any]] = [
            {"functionCall": {"name": c.name, "args": c.args}} for c in reply.calls
        ]
        if reply.text or not parts:
            parts.append({"text": reply.text or "Done."})
        return _response(parts, reply.prompt_tokens)


def _response(parts: list[dict[str, Any]], prompt_tokens: int) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": 20,
            "totalTokenCount": prompt_tokens + 20,
        },
    }


def _make_handler(api: MockGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the test reports
            pass

        def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(404, b'{"error":{"code":404,"message":"not here"}}')

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            model, _, rpc = path.rsplit("/", 1)[-1].partition(":")
            if "/models/" not in path or not rpc:
                self._send(404, b'{"error":{"code":404,"message":"not here"}}')
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._send(400, b'{"error":{"code":400,"message":"bad json"}}')
                return
            req = api.record(rpc, model, body if isinstance(body, dict) else {})
            if req is None:
                self._send(429, b'{"error":{"code":429,"message":"request budget spent"}}')
                return
            answer = json.dumps(api.answer(req)).encode()
            if req.is_agent_turn:
                self._send(200, b"data: " + answer + b"\r\n\r\n", "text/event-stream")
            else:
                self._send(200, answer)

    return Handler
