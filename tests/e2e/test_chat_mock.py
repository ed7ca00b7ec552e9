"""The Chat Completions mock's own contract (no client): what the OpenAI-style hosts' e2e
suites (Copilot CLI, Qwen Code, OpenCode) rely on."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

from tests.e2e.chat_mock import Call, MockChat, Reply, Request, Steps, say


def _post(url: str, body: dict[str, object]) -> bytes:
    req = urllib.request.Request(
        url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return bytes(resp.read())


def _stream_events(raw: bytes) -> list[dict[str, object]]:
    lines = [line[6:] for line in raw.decode().split("\n") if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def test_a_streamed_answer_carries_text_tool_calls_and_usage(tmp_path: Path) -> None:
    script = Steps(
        Reply(text="looking", calls=[Call("bash", {"command": "ls"})], prompt_tokens=900),
        final="all done",
    )
    log = tmp_path / "requests.jsonl"
    with MockChat(script, log) as api:
        events = _stream_events(
            _post(api.base_url, {"stream": True, "messages": [{"role": "user", "content": "go"}]})
        )
        deltas = [e["choices"][0]["delta"] for e in events if e["choices"]]  # type: ignore[index]
        assert "looking" in [d.get("content") for d in deltas]
        calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
        assert calls[0]["function"] == {"name": "bash", "arguments": '{"command": "ls"}'}
        finishes = [e["choices"][0]["finish_reason"] for e in events if e["choices"]]  # type: ignore[index]
        assert finishes[-1] == "tool_calls"
        assert events[-1]["usage"]["prompt_tokens"] == 900  # type: ignore[index]

        # The tool's result comes back: the script moves on to its final answer, unstreamed.
        messages = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "tool_calls": [calls[0]]},
            {"role": "tool", "tool_call_id": calls[0]["id"], "content": "a b"},
        ]
        answer = json.loads(_post(api.base_url, {"messages": messages}))
        assert answer["choices"][0]["message"]["content"] == "all done"
        assert answer["choices"][0]["finish_reason"] == "stop"
        assert api.requests[1].tool_results() == ["a b"]
    assert len(log.read_text().splitlines()) == 2


def test_a_compaction_request_gets_the_summary() -> None:
    steps = Steps(
        say("x"), summary="SUMMARY", is_compaction=lambda r: "summarize" in r.last_user_text()
    )
    ask = Request(
        0, "/v1/chat/completions", {"messages": [{"role": "user", "content": "summarize"}]}
    )
    assert steps(ask).text == "SUMMARY"
    plain = Request(1, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]})
    assert steps(plain).text == "x"


def test_the_request_budget_is_bounded() -> None:
    with MockChat(Steps(), max_requests=1) as api:
        _post(api.base_url, {"messages": []})
        try:
            _post(api.base_url, {"messages": []})
        except urllib.error.HTTPError as exc:
            assert exc.code == 429
        else:
            raise AssertionError("a request past the budget was answered")
