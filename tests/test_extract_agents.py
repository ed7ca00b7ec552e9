"""Agent/Task subagents, MCP tools, WebFetch/WebSearch and cited URLs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxmode.extract.agents import find_urls, split_mcp
from tests.helpers import extracted, extracted_fixture

FIXTURE_CASES = [
    (
        "more/PostToolUse.Agent.general_purpose.json",
        [
            (
                "subagent",
                {
                    "agent_type": "general-purpose",
                    "description": "Inspect the README",
                    "prompt": "[scn:sub_inner] Read README.md and report its first line.",
                    "summary": "Mock: scenario sub_inner done.",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.Agent.custom_type.json",
        [
            (
                "subagent",
                {
                    "agent_type": "reviewer",
                    "description": "Review app.py",
                    "prompt": "[scn:sub_inner] Review src/app.py briefly.",
                    "summary": "Mock: scenario sub_inner done.",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.mcp__mockdir__lookup.secret_arg.json",
        [
            (
                "mcp_call",
                {
                    "server": "mockdir",
                    "tool": "lookup",
                    "args": ["query", "api_key"],
                    # What it returned (an agent asks later "who owns billing-service?").
                    "output": "lookup result for billing-service: owner=alice, region=eu-west-1",
                },
            ),
            # What it was asked to look up (a query, like a web search's), never its key.
            ("web_search", {"query": "billing-service", "via": "mockdir lookup"}),
        ],
    ),
    (
        "more/PostToolUse.WebFetch.https_page.json",
        [
            (
                "web_fetch",
                {
                    "url": "http://127.0.0.1:38089/page",
                    "prompt": "What changed in this release?",
                    # What the fetch answered: its excerpt, masked.
                    "excerpt": "Release 1.4: invoice totals round half-up; CSV quoting fixed; "
                    "--dry-run added.",
                },
            )
        ],
    ),
    (
        "more/PostToolUse.WebSearch.results.json",
        [("web_search", {"query": "invoice rounding half-up python decimal"})],
    ),
    (
        "more/PostToolUse.WebSearch.api_error.json",
        [("web_search", {"query": "apierror search request test"})],
    ),
    (
        "more/PostToolUse.WebSearch.result_error.json",
        [("web_search", {"query": "unavailable search backend test"})],
    ),
    ("more/PostToolUse.Skill.greet.json", []),
]


@pytest.mark.parametrize(("name", "expected"), FIXTURE_CASES, ids=[c[0] for c in FIXTURE_CASES])
def test_real_payloads(name: str, expected: list[tuple[str, dict[str, Any]]]) -> None:
    assert extracted_fixture(name) == expected


def test_agent_summary_is_the_head_of_the_result() -> None:
    [(kind, data)] = extracted_fixture("PostToolUse.Agent.json")
    assert (kind, data["agent_type"], data["description"]) == (
        "subagent",
        "general-purpose",
        "Say hi",
    )
    # Whitespace folded to single spaces; cut at about 300 characters.
    assert data["summary"].startswith("Mock reply to: IMPORTANT: this context may or may not")
    assert "\n" not in data["summary"] and len(data["summary"]) <= 300


def test_mcp_argument_values_never_stored_but_a_query() -> None:
    """Of an MCP tool's arguments, only what it was asked to look up (query, url) and what
    a sending tool sent (message_sent) are kept, masked; every other value never is."""
    got = json.dumps(extracted_fixture("more/PostToolUse.mcp__mockdir__lookup.secret_arg.json"))
    assert "sk-live-FAKE0000mock0000secret0000value" not in got
    assert "billing-service" in got
    other = extracted(
        "mcp__db__run",
        {"sql": "select * from users", "database": "prod", "token": "x" * 40},
        "3 rows",
    )
    assert other == [
        (
            "mcp_call",
            {
                "server": "db",
                "tool": "run",
                "args": ["sql", "database", "token"],
                "output": "3 rows",
            },
        )
    ]


def test_a_long_report_keeps_its_findings_masked_and_bounded() -> None:
    """A subagent's report (the file names, counts and settings it found) is kept as an
    excerpt: its head and tail, and the error lines from between; masked before the cut."""
    key = "ghp_" + "R7tq2Lm9Xv4Kp8Ws3Zn6Bc1Df5Gh0Jk2Lm4N"
    findings = "\n".join(f"- src/module_{i}.py: {i * 3} call sites" for i in range(60))
    details = "\n".join(f"  checked handler {i}: fine" for i in range(150))
    report = (
        f"## Findings\n{findings}\nThe deploy token {key} is hard-coded in ci.yml.\n{details}\n"
        "ERROR: tests/test_backup.py fails on a missing `expiring_soon` field\n"
        f"{details}\n## Summary\nFile size validation (50MB limit) is missing in upload()."
    )
    [(kind, data)] = extracted(
        "Agent", {"description": "Audit uploads"}, {"content": [{"type": "text", "text": report}]}
    )
    assert kind == "subagent"
    kept = data["report"]
    assert "- src/module_20.py: 60 call sites" in kept  # from the head
    assert "ERROR: tests/test_backup.py fails on a missing `expiring_soon` field" in kept
    assert kept.endswith("File size validation (50MB limit) is missing in upload().")
    assert key not in json.dumps(data)
    assert len(kept) <= 2700 and "summary" not in data  # (the report's head again)


def test_mcp_output_is_masked_and_bounded() -> None:
    """What an MCP tool returned is kept as a command's output is: head, tail and the lines
    from between that look like an error, masked before anything is cut, bounded."""
    key = "ghp_" + "R7tq2Lm9Xv4Kp8Ws3Zn6Bc1Df5Gh0Jk2Lm4N"
    rows = "\n".join(f"row {i}: value {i * 7}" for i in range(200))
    text = (
        f'connected with {key}\n{rows}\nERROR relation "audit_log" does not exist\n'
        f"{rows}\ndone: 401 rows"
    )
    [(kind, data)] = extracted(
        "mcp__db__query", {"sql": "select 1"}, [{"type": "text", "text": text}]
    )
    assert kind == "mcp_call"
    output = data["output"]
    assert key not in output and "[REDACTED" in output  # masked, the head that held it kept
    assert 'ERROR relation "audit_log" does not exist' in output  # from the middle
    assert output.rstrip().endswith("done: 401 rows")
    assert len(output) <= 1400


def test_mcp_output_of_a_json_answer() -> None:
    """A string answer that is JSON without a text field is kept as the text it is."""
    [(_, data)] = extracted(
        "mcp__svc__init", {}, '{"ok": true, "code": "INIT_500", "detail": "no anchor"}'
    )
    assert "INIT_500" in data["output"] and "no anchor" in data["output"]


LONG_RESULT = "Found three call sites.\n\n" + "Details follow. " * 100

OLDER_CASES = [
    # The older tool name, a plain-string result.
    (
        "Task",
        {
            "description": "Find callers",
            "prompt": "Find all callers of total()",
            "subagent_type": "general-purpose",
        },
        "Found 3 callers in src/.",
        [
            (
                "subagent",
                {
                    "agent_type": "general-purpose",
                    "description": "Find callers",
                    "prompt": "Find all callers of total()",
                    "summary": "Found 3 callers in src/.",
                },
            )
        ],
    ),
    # Result as a JSON string of content blocks; no subagent_type (the default agent).
    (
        "Task",
        {"description": "Scan"},
        '[{"type": "text", "text": "All clear."}]',
        [
            (
                "subagent",
                {"agent_type": "general-purpose", "description": "Scan", "summary": "All clear."},
            )
        ],
    ),
    # Dict with content blocks, several blocks joined.
    (
        "Agent",
        {"description": "Two parts", "subagent_type": "explorer"},
        {
            "content": [
                {"type": "text", "text": "Part one."},
                {"type": "image"},
                {"type": "text", "text": "Part two."},
            ]
        },
        [
            (
                "subagent",
                {
                    "agent_type": "explorer",
                    "description": "Two parts",
                    "summary": "Part one. Part two.",
                },
            )
        ],
    ),
    # Background launch: no result yet, no summary; open work until its result comes.
    (
        "Agent",
        {"description": "Long job", "subagent_type": "general-purpose", "run_in_background": True},
        {"status": "async_launched", "agentId": "a1"},
        [
            ("subagent", {"agent_type": "general-purpose", "description": "Long job"}),
            ("job_start", {"kind": "agent", "id": "a1", "what": "Long job"}),
        ],
    ),
    (
        "Agent",
        {"prompt": "Only a prompt here"},
        None,
        [("subagent", {"agent_type": "general-purpose", "description": "Only a prompt here"})],
    ),
    (
        "Agent",
        {"description": "Big"},
        {"content": [{"type": "text", "text": LONG_RESULT}]},
        [
            (
                "subagent",
                {
                    "agent_type": "general-purpose",
                    "description": "Big",
                    "report": LONG_RESULT,  # whole: within the excerpt's bounds
                },
            )
        ],
    ),
    # MCP responses come as block lists, JSON strings, dicts or nothing: only names matter;
    # a tool that sends text (an issue, a message) keeps what it sent.
    (
        "mcp__github__create_issue",
        {"owner": "o", "repo": "r", "title": "t", "body": "b"},
        '{"number": 5}',
        [
            (
                "mcp_call",
                {
                    "server": "github",
                    "tool": "create_issue",
                    "args": ["owner", "repo", "title", "body"],
                    "output": '{"number": 5}',  # which issue it made
                },
            ),
            (
                "message_sent",
                {"via": "github create_issue", "to": "o/r", "title": "t", "text": "b"},
            ),
        ],
    ),
    (
        "mcp__my_server__do__thing",
        {},
        None,
        [("mcp_call", {"server": "my_server", "tool": "do__thing", "args": []})],
    ),
    ("mcp__broken", {"a": 1}, None, []),
    (
        "WebFetch",
        {"url": "https://alice:s3cretpw@example.com/docs?access_token=abc123&page=2"},
        None,
        [
            (
                "web_fetch",
                {"url": "https://example.com/docs?access_token=[REDACTED:url-param]&page=2"},
            )
        ],
    ),
    (
        "WebFetch",
        {},
        {"url": "https://example.com/from-response"},
        [("web_fetch", {"url": "https://example.com/from-response"})],
    ),
    ("WebFetch", {"url": ""}, None, []),
    (
        "WebSearch",
        {"query": "  rust\nasync   traits "},
        None,
        [("web_search", {"query": "rust async traits"})],
    ),
    ("WebSearch", {}, None, []),
]


@pytest.mark.parametrize(("tool", "tool_input", "response", "expected"), OLDER_CASES)
def test_older_and_partial_shapes(
    tool: str, tool_input: dict[str, Any], response: Any, expected: list[tuple[str, dict[str, Any]]]
) -> None:
    assert extracted(tool, tool_input, response) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mcp__mockdir__lookup", ("mockdir", "lookup")),
        ("mcp__claude_ai_Gmail__search", ("claude_ai_Gmail", "search")),
        ("mcp__srv__", ("", "")),
        ("mcp____tool", ("", "")),
        ("mcp__onlyserver", ("", "")),
        ("Read", ("", "")),
    ],
)
def test_split_mcp(name: str, expected: tuple[str, str]) -> None:
    assert split_mcp(name) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see https://example.com/a.", ["https://example.com/a"]),
        (
            "(docs: https://en.wikipedia.org/wiki/Foo_(bar))",
            ["https://en.wikipedia.org/wiki/Foo_(bar)"],
        ),
        (
            "[link](https://x.org/p?q=1) and <http://y.io/z>",
            ["https://x.org/p?q=1", "http://y.io/z"],
        ),
        (
            "HTTPS://UPPER.example/X, then https://UPPER.example/X",
            ["HTTPS://UPPER.example/X", "https://UPPER.example/X"],
        ),
        ("xhttp://not-a-boundary.com https:// ftp://x.org", []),
        ("'https://q.example/a b'", ["https://q.example/a"]),
        ("no links here", []),
    ],
)
def test_find_urls(text: str, expected: list[str]) -> None:
    assert find_urls(text) == expected


def test_a_background_agent_is_open_work_by_either_mark() -> None:
    """A background agent's launch says so by its status (2.1.3xx) or by ``isAsync`` alone;
    with no description, the job is named by the agent's type."""
    by_status = extracted(
        "Agent", {"description": "Audit deps"}, {"status": "async_launched", "agentId": "a1"}
    )
    by_flag = extracted("Agent", {"subagent_type": "Explore"}, {"isAsync": True, "agentId": "a2"})
    assert [k for k, _ in by_status] == ["subagent", "job_start"]
    assert by_status[1][1] == {"kind": "agent", "id": "a1", "what": "Audit deps"}
    assert [k for k, _ in by_flag] == ["subagent", "job_start"]
    assert by_flag[1][1] == {"kind": "agent", "id": "a2", "what": "Explore"}
