"""Subagents, MCP tools and the web → ``subagent``, ``mcp`` and ``external-ref`` events."""

from __future__ import annotations

from ctxmode import redact
from ctxmode.extract.common import as_dict, block_text, clip, masked_excerpt, one_line, s, trim
from ctxmode.extract.files import result_excerpt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.extract.common import Draft
    from ctxmode.payload import HookInput

DESCRIPTION_CHARS = 200
PROMPT_CHARS = 800
SUMMARY_CHARS = 300
QUERY_CHARS = 300
URL_CHARS = 300
# A subagent's report is what it found, the file names, counts and settings the session
# then works from, and the only place they are: its head and tail (the findings first, the
# summary or what is left to do last) and the lines between that look like an error, far
# more than the one-line ``summary`` a person reads in a listing.
REPORT_HEAD = 1500
REPORT_TAIL = 700
REPORT_MIDDLE = 400
REPORT_TEXT_CHARS = 64 * 1024  # what the choke point kept of it is less
FETCH_HEAD = 320
FETCH_TAIL = 320
MAX_ARGS = 30
MAX_URLS = 5
DEFAULT_AGENT = "general-purpose"  # what Claude Code runs when subagent_type is omitted


def subagent(inp: HookInput) -> list[Draft]:
    """Agent (older: Task) → ``subagent {agent_type, description, [prompt], [summary] |
    [report]}``: a short report on one line as ``summary``, the excerpt of a longer one as
    ``report`` (:func:`report_excerpt`)."""
    response = inp.tool_response
    rdict = as_dict(response)
    agent_type = (
        s(inp.tool_input.get("subagent_type")).strip()
        or s(rdict.get("agentType")).strip()
        or DEFAULT_AGENT
    )
    description = s(inp.tool_input.get("description")) or s(inp.tool_input.get("prompt"))
    data: dict[str, object] = {
        "agent_type": clip(agent_type, 80),
        "description": clip(one_line(description), DESCRIPTION_CHARS),
    }
    prompt = s(inp.tool_input.get("prompt"))
    if prompt.strip() and prompt.strip() != description.strip():
        data["prompt"] = clip(prompt, PROMPT_CHARS)  # what the agent was told to do
    if rdict.get("status") == "async_launched" or rdict.get("isAsync") is True:
        # A background agent (the default since 2.1.3xx): no result yet, it comes later as
        # a notification; until then it is open work.
        job: dict[str, object] = {"kind": "agent", "id": clip(s(rdict.get("agentId")), 80)}
        job["what"] = data["description"] or data["agent_type"]
        return [("subagent", data), ("job_start", job)]
    # The result is in content blocks (2.1.x), a plain string, or a JSON string of either.
    text = block_text(response, REPORT_TEXT_CHARS)
    summary = one_line(text[: SUMMARY_CHARS * 4])
    if len(summary) > SUMMARY_CHARS:
        data["report"] = report_excerpt(text)  # (its head would be the summary again)
    elif summary:
        data["summary"] = summary
    return [("subagent", data)]


def report_excerpt(text: str) -> str:
    """The excerpt of an agent's report (:data:`REPORT_HEAD`), masked before it is cut."""
    return masked_excerpt(text, REPORT_HEAD, REPORT_TAIL, REPORT_MIDDLE)


def send_message(inp: HookInput) -> list[Draft]:
    """SendMessage → ``subagent {agent_type: "message", to, description}``: what the model
    asked another agent (a background agent, a teammate, another session) to do. Not
    recorded when the client refused to send it (``success: false``)."""
    if as_dict(inp.tool_response).get("success") is False:
        return []
    to = s(inp.tool_input.get("to")).strip()
    text = s(inp.tool_input.get("summary")) or s(inp.tool_input.get("message"))
    if not to or not text.strip():
        return []
    data = {
        "agent_type": "message",
        "to": clip(one_line(to), 120),
        "description": clip(one_line(f"to {to}: {text}"), DESCRIPTION_CHARS),
    }
    return [("subagent", data)]


def split_mcp(tool_name: str) -> tuple[str, str]:
    """``mcp__<server>__<tool>`` → ``(server, tool)``; ``("", "")`` for other names."""
    if not tool_name.startswith("mcp__"):
        return "", ""
    server, sep, tool = tool_name[5:].partition("__")
    if not sep or not server or not tool:
        return "", ""
    return server, tool


def mcp(inp: HookInput) -> list[Draft]:
    """``mcp__server__tool`` → ``mcp_call {server, tool, args, [output]}``: argument
    names, never values; the excerpt of what it returned (:func:`mcp_output`); and what
    a sending tool sent (:func:`mcp_message`)."""
    server, tool = split_mcp(inp.tool_name)
    if not server:
        return []
    args = [trim(str(name), 60) for name in list(inp.tool_input)[:MAX_ARGS]]
    data: dict[str, object] = {"server": trim(server, 80), "tool": trim(tool, 120), "args": args}
    returned = mcp_output(inp.tool_response)
    if returned:
        data["output"] = returned
    drafts: list[Draft] = [("mcp_call", data)]
    sent = mcp_message(server, tool, inp.tool_input)
    if sent:
        drafts.append(("message_sent", sent))
    drafts.extend(mcp_lookups(server, tool, inp.tool_input))
    return drafts


# What an MCP tool returned is kept as a command's output is (extract.bash): its head and
# tail, and the lines from between that look like an error or say what was done; a bit
# less of the middle, as a tool's answer is more often data (a page, rows) than a log.
MCP_OUTPUT_HEAD = 320
MCP_OUTPUT_TAIL = 320
MCP_OUTPUT_MIDDLE = 320
_MCP_TEXT_CHARS = 64 * 1024  # what the choke point kept of it is less


def mcp_output(response: object) -> str:
    """The excerpt of an MCP tool's result (content blocks, a string, or an object that
    holds them), masked with the payload and again as it is cut (common.masked_excerpt)."""
    text = block_text(response, _MCP_TEXT_CHARS)
    if not text.strip() and isinstance(response, str):
        text = response  # a JSON answer block_text finds no text field in
    if not text.strip():
        return ""
    return masked_excerpt(text, MCP_OUTPUT_HEAD, MCP_OUTPUT_TAIL, MCP_OUTPUT_MIDDLE)


# What an MCP tool was asked to look up (a search engine's query, a page's URL): kept
# as web_search and web_fetch, like the client's own web tools.
_QUERY_KEYS = ("query", "q", "search_query", "search_term", "question", "keywords")
_URL_KEYS = ("url", "uri", "link")


def mcp_lookups(server: str, tool: str, args: dict[str, object]) -> list[Draft]:
    """``web_search {query, via}`` / ``web_fetch {url, via}`` for an MCP tool's query and
    URL arguments (values masked with the payload, extract.masked)."""
    via = trim(f"{server} {tool}", 160)
    out: list[Draft] = []
    for key in _QUERY_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            out.append(("web_search", {"query": clip(one_line(value), QUERY_CHARS), "via": via}))
            break
    for key in _URL_KEYS:
        value = args.get(key)
        if isinstance(value, str) and "://" in value:
            out.append(("web_fetch", {"url": safe_url(value), "via": via}))
            break
    return out


# A tool whose name holds one of these words sends something (a Slack message, an issue,
# a comment on a pull request); the arguments that hold its text and where it goes.
_SENDING = ("send", "post", "create", "comment", "reply", "write", "add", "update",
            "publish", "submit", "message", "notify", "edit", "review")  # fmt: skip
_TEXT_KEYS = ("text", "body", "message", "content", "comment", "markdown", "description",
              "summary")  # fmt: skip
_TITLE_KEYS = ("title", "subject", "name")
_TARGET_KEYS = ("channel", "channel_id", "to", "recipient", "recipients", "repo", "repository",
                "issue_number", "pull_number", "pr_number", "number", "chat_id", "thread_ts",
                "email", "project", "page_id", "database_id")  # fmt: skip
MESSAGE_CHARS = 2000


def mcp_message(server: str, tool: str, args: dict[str, object]) -> dict[str, object] | None:
    """``message_sent {via, [to], [title], [text]}`` for an MCP tool that sends text (its
    name says so and it was given some), else None. Values were masked whole with the
    payload (extract.masked): a secret in a message is never stored."""
    low = tool.lower()
    if not any(word in low for word in _SENDING):
        return None
    text = next((v for k in _TEXT_KEYS if isinstance(v := args.get(k), str) and v.strip()), "")
    title = next((v for k in _TITLE_KEYS if isinstance(v := args.get(k), str) and v.strip()), "")
    if not (text or title):
        return None
    data: dict[str, object] = {"via": trim(f"{server} {tool}", 160)}
    targets = [
        f"{args[k]}"
        for k in _TARGET_KEYS
        if isinstance(args.get(k), (str, int)) and not isinstance(args.get(k), bool)
    ]
    owner, repo = args.get("owner"), args.get("repo")
    if isinstance(owner, str) and isinstance(repo, str):
        targets[targets.index(repo)] = f"{owner}/{repo}"  # GitHub's pair
    if targets:
        data["to"] = clip(" ".join(targets), 200)
    if title:
        data["title"] = clip(title, 300)
    if text:
        data["text"] = clip(text, MESSAGE_CHARS)
    return data


def safe_url(url: str) -> str:
    """A URL without credentials or secret query values, trimmed."""
    # ``mask_url`` is being written alongside; until it exists, plain masking still
    # catches userinfo and known token shapes.
    masker = getattr(redact, "mask_url", None) or redact.mask
    return trim(masker(url.strip()[: URL_CHARS * 4]), URL_CHARS)


def web_fetch(inp: HookInput) -> list[Draft]:
    """WebFetch → ``web_fetch {url, [prompt]}``."""
    url = s(inp.tool_input.get("url")) or s(as_dict(inp.tool_response).get("url"))
    if not url.strip():
        return []
    data: dict[str, object] = {"url": safe_url(url)}
    prompt = s(inp.tool_input.get("prompt"))
    if prompt.strip():
        data["prompt"] = clip(one_line(prompt), 200)
    # A fetch's answer is the model's summary of the page: all of it is what was looked
    # up, so more of it is kept than of a file read.
    answer = result_excerpt(inp, "result", "content", head=FETCH_HEAD, tail=FETCH_TAIL)
    if answer:
        data["excerpt"] = answer
    return [("web_fetch", data)]


def web_search(inp: HookInput) -> list[Draft]:
    """WebSearch → ``web_search {query}``."""
    query = s(inp.tool_input.get("query")) or s(as_dict(inp.tool_response).get("query"))
    if not query.strip():
        return []
    return [("web_search", {"query": clip(one_line(query), QUERY_CHARS)})]


# -- URLs cited in text ------------------------------------------------------------------

# Characters that end a URL in prose, and punctuation that ends the sentence around it.
_STOP = frozenset(" \t\r\n<>\"'`")
_TRAILING = ".,;:!?'\"*_>"
_PAIRS = {")": "(", "]": "[", "}": "{"}


def find_urls(text: str, limit: int = MAX_URLS) -> list[str]:
    """The distinct http(s) URLs in ``text``, in order, at most ``limit``, unmasked.

    A plain scan with ``str.find``: no ``re`` import for the few URLs a prompt holds.
    """
    if "://" not in text:
        return []
    low = text.lower()
    n = len(text)
    urls: list[str] = []
    pos = 0
    while len(urls) < limit:
        start = low.find("http", pos)
        if start < 0:
            break
        if low.startswith("://", start + 4):
            body = start + 7
        elif low.startswith("s://", start + 4):
            body = start + 8
        else:
            pos = start + 4
            continue
        end = body
        while end < n and text[end] not in _STOP and not text[end].isspace():
            end += 1
        pos = end
        if start and low[start - 1].isalnum():
            continue  # "xhttp://" is not a URL boundary
        url = text[start:end]
        while len(url) > body - start and (url[-1] in _TRAILING or _unbalanced(url)):
            url = url[:-1]
        if len(url) > body - start and url not in urls:
            urls.append(url)
    return urls


def _unbalanced(url: str) -> bool:
    """Whether the URL ends in a closing bracket it never opened: ``(see https://x/a)``."""
    opener = _PAIRS.get(url[-1])
    return opener is not None and url.count(opener) < url.count(url[-1])


def url_refs(text: str) -> list[Draft]:
    """``url_ref {url}`` for each distinct URL cited in ``text`` (at most five)."""
    drafts: list[Draft] = []
    seen: set[str] = set()
    for url in find_urls(text, MAX_URLS * 2):
        safe = safe_url(url)
        if safe and safe not in seen:
            seen.add(safe)
            drafts.append(("url_ref", {"url": safe}))
            if len(drafts) >= MAX_URLS:
                break
    return drafts
