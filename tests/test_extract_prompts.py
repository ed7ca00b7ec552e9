"""UserPromptSubmit → prompt, intent, decision, role and url_ref events."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxmode import payload
from ctxmode.extract import extract, prompts
from ctxmode.extract.prompts import Clause, Pattern, decisions, intent, roles, sentences
from tests.hooktools import FIXTURES


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text())


def run_prompt(prompt: Any) -> list[tuple[str, dict[str, Any]]]:
    inp = payload.from_dict({"session_id": "s", "cwd": "/p", "prompt": prompt}, "UserPromptSubmit")
    inp.project_dir = "/p"
    return [(e.type, json.loads(e.data)) for e in extract(inp)]


def run_fixture(name: str) -> list[tuple[str, dict[str, Any]]]:
    record = fixture(name)
    inp = payload.from_dict(record["payload"], record["event"])
    inp.project_dir = "/home/dev/proj"
    return [(e.type, json.loads(e.data)) for e in extract(inp)]


# -- real payloads -------------------------------------------------------------------------------


def test_plain_prompt() -> None:
    assert run_fixture("UserPromptSubmit.json") == [
        ("user_prompt", {"text": "create hello.py and commit it"}),
        ("intent", {"intent": "implement"}),
    ]


@pytest.mark.parametrize(
    "prompt",
    ["<private>all of it</private>", "  <private>one</private>\n<private>two", "<private>"],
)
def test_a_prompt_that_is_all_private_records_nothing(prompt: str) -> None:
    # Only marks would be left: no request, no intent, no decision to record.
    assert run_prompt(prompt) == []


def test_private_span_removed_entirely() -> None:
    got = run_fixture("more/UserPromptSubmit.private_multiline.json")
    assert "tok-FAKE-123456" not in json.dumps(got)
    assert "<private" not in json.dumps(got) and "</private" not in json.dumps(got)
    assert got == [
        (
            "user_prompt",
            {
                "text": "Please review the invoice module.\nIt lives in src/app.py.\n\n"
                "My staging token is [REDACTED:private], do not store it.\nThanks!"
            },
        ),
        ("intent", {"intent": "review"}),
        ("decision", {"text": "My staging token is [REDACTED:private], do not store it."}),
    ]


def test_slash_command_is_a_prompt_only() -> None:
    assert run_fixture("more/UserPromptSubmit.slash_command.json") == [
        ("user_prompt", {"text": "/greet Alice"})
    ]


def test_ask_user_question_answer_is_a_decision() -> None:
    for name in (
        "more/PostToolUse.AskUserQuestion.print_permission_prompt_tool.json",
        "more/interactive.PostToolUse.AskUserQuestion.json",
    ):
        assert run_fixture(name) == [
            ("decision", {"text": "Which rounding mode should invoices use? → Half-up"})
        ]


# -- decisions ---------------------------------------------------------------------------------

DECISIONS_EN = [
    "No, use pytest instead.",
    "no, the limit is 10",
    "Don't add new dependencies.",
    "Do not touch the migrations.",
    "Let's go with option B.",
    "Use ruff instead of flake8.",
    "Always run the tests before committing.",
    "Never commit directly to main.",
    "We decided to drop Python 3.8 support.",
    "I prefer small functions over classes.",
    "I'd rather keep the old API.",
    "Instead of a loop, use a comprehension.",
    "Use tabs, not spaces.",
    "Actually, use the v2 endpoint.",
    "That's wrong, the timeout is 30 seconds.",
    "Stop using print statements for logging.",
    "We'll stick with SQLite for now.",
    "No need to write docs for this.",
    "Tests must never hit the network.",
    "OK, don't change the public API.",
    "If the tests pass, don't touch anything else.",
    "Let's not use an ORM.",
    "I don't want any new dependencies.",
    "Go with the simpler approach.",
    "Prefer composition over inheritance.",
    "Decision: we use Postgres.",
    "We have finally decided on the REST design.",
    "Nope — keep the current schema.",
    "Please don’t rename the public functions.",  # typographic apostrophe
]

NOT_DECISIONS_EN = [
    "Don't worry about the failing lint for now, just fix the bug",
    "don't know why this fails",
    "No problem, thanks!",
    "No worries.",
    "never mind",
    "Write a test for the parser.",
    "It returns None instead of a list.",
    "I never saw this error before.",
    "Why not use X instead?",
    "What should I use instead?",
    "Fix the login bug.",
    "Can you explain how the cache works?",
    "The tests are failing.",
    "This is always the case with flaky networks.",
    "There are no tests for this module.",
    "Let's start with the parser.",
    "We use Postgres in production.",
    "I think the design is fine.",
    "Nothing else changed.",
    "Is this always true?",
    "```\n# don't do this\nx = 1\n```\nexplain the code above",
]


@pytest.mark.parametrize("text", DECISIONS_EN)
def test_english_decisions(text: str) -> None:
    assert decisions(sentences(text)) == [text.strip()]


@pytest.mark.parametrize("text", NOT_DECISIONS_EN)
def test_english_non_decisions(text: str) -> None:
    assert decisions(sentences(text)) == []


# -- roles -----------------------------------------------------------------------------------

ROLES_EN = [
    "You are a senior Python engineer.",
    "you're a backend engineer working on payments",
    "You are now an expert in distributed systems.",
    "Act as a code reviewer and check this PR.",
    "I want you to act as a security auditor.",
    "Can you act as my pair programmer today?",
    "Pretend you are a junior developer.",
    "From now on, answer in German.",
    "For the rest of this session, use British spelling.",
    "Whenever you edit a file, run ruff.",
    "As a security expert, review this code.",
    "Going forward, commit after every task.",
    "Respond like a senior staff engineer would.",
    "Your role is to review, not to write code.",
    "Play the role of a strict type checker.",
]

NOT_ROLES_EN = [
    "Write a test",
    "you're right",
    "You are correct, my mistake.",
    "You're a lifesaver!",
    "You are the best engineer I know.",
    "You are missing an import.",
    "You're not using the cache.",
    "This function acts as a cache.",
    "It should act as a proxy.",
    "As a result, the build is green.",
    "Are you an expert in Rust?",
    "You are so helpful, thanks.",
    "Run the tests now.",
    "Explain what the reviewer meant.",
]


@pytest.mark.parametrize("text", ROLES_EN)
def test_english_roles(text: str) -> None:
    assert roles(sentences(text)) == [text.strip()]


@pytest.mark.parametrize("text", NOT_ROLES_EN)
def test_english_non_roles(text: str) -> None:
    assert roles(sentences(text)) == []


def test_case_tables_are_big_enough() -> None:
    assert len(DECISIONS_EN) + len(ROLES_EN) >= 25
    assert len(NOT_DECISIONS_EN) >= 20 and len(NOT_ROLES_EN) >= 12


# -- intent --------------------------------------------------------------------------------------

INTENTS_EN = [
    ("create hello.py and commit it", "implement"),
    ("Add a --dry-run flag to the CLI.", "implement"),
    ("Please implement CSV export.", "implement"),
    ("Write a test for the parser.", "test"),
    ("add unit tests for rounding", "test"),
    ("run the tests", "test"),
    ("Can you fix the bug in parser.py?", "fix"),
    ("Fix the login bug.", "fix"),
    ("Make the tests pass", "fix"),
    ("The login page is broken", "fix"),
    ("I get a traceback when I run it", "fix"),
    ("Please review the invoice module.", "review"),
    ("Do a code review of my last commit", "review"),
    ("Review and fix the typos in README", "review"),
    ("rename foo to bar", "refactor"),
    ("Clean up the helpers module", "refactor"),
    ("Add a docstring to parse()", "document"),
    ("Update the README with the new flags", "document"),
    ("Why does the build fail?", "investigate"),
    ("Can you explain how the cache works?", "investigate"),
    ("Where is the config loaded?", "investigate"),
    ("Is the retry logic thread-safe?", "investigate"),
    ("Thanks! Now please fix the parser.", "fix"),
    ("hello", "other"),
    ("No, use pytest instead.", "other"),
]


@pytest.mark.parametrize(("text", "expected"), INTENTS_EN)
def test_english_intents(text: str, expected: str) -> None:
    assert expected in prompts.INTENTS
    assert intent(sentences(text)) == expected


# -- a second language ---------------------------------------------------------------------------

GERMAN = [
    ("Nein, nimm lieber Postgres.", ["Nein, nimm lieber Postgres."], [], "other"),
    ("Benutze stattdessen pytest.", ["Benutze stattdessen pytest."], [], "other"),
    (
        "Wir haben uns für SQLite entschieden.",
        ["Wir haben uns für SQLite entschieden."],
        [],
        "other",
    ),
    ("Niemals direkt auf main committen.", ["Niemals direkt auf main committen."], [], "other"),
    (
        "Du bist ein erfahrener Softwareentwickler.",
        [],
        ["Du bist ein erfahrener Softwareentwickler."],
        "other",
    ),
    ("Ab jetzt antworte auf Deutsch.", [], ["Ab jetzt antworte auf Deutsch."], "other"),
    ("Kannst du den Fehler beheben?", [], [], "fix"),
    ("Erkläre mir den Cache.", [], [], "investigate"),
    ("Bitte überprüfe das Modul.", [], [], "review"),
    ("Schreibe Tests für den Parser.", [], [], "test"),
    ("Immer noch kaputt.", [], [], "fix"),  # "immer noch" = "still": not an "always"
    ("Keine Sorge, das ist ok.", [], [], "other"),
    ("Du hast recht.", [], [], "other"),
]


@pytest.mark.parametrize(("text", "decided", "role", "wanted"), GERMAN)
def test_german(text: str, decided: list[str], role: list[str], wanted: str) -> None:
    parsed = sentences(text)
    assert (decisions(parsed), roles(parsed), intent(parsed)) == (decided, role, wanted)


def test_a_new_language_is_only_data(monkeypatch: pytest.MonkeyPatch) -> None:
    french = {
        "interjections": "non|oui|bon",
        "lead": ("alors|bon|et|puis",),
        "decision": ("^ n'utilise|n'utilisez pas", "plutôt|au_lieu_de"),
        "decision_not": ("^ pas de souci|problème",),
        "role": ("^ tu es|vous_êtes un|une ..3 @role",),
        "words": {"role": "développeur*|ingénieur*|expert*"},
        "intent": {"fix": ("^ corrige|corrigez|répare",)},
    }
    monkeypatch.setitem(prompts.LANGUAGES, "fr", french)
    monkeypatch.setattr(prompts, "_languages", None)  # recompile with the new entry
    assert decisions(sentences("Non, utilise plutôt SQLite.")) == ["Non, utilise plutôt SQLite."]
    assert decisions(sentences("Pas de souci.")) == []
    assert roles(sentences("Tu es un développeur senior.")) == ["Tu es un développeur senior."]
    assert intent(sentences("Alors, corrige le parseur.")) == "fix"
    monkeypatch.undo()
    prompts._languages = None
    assert decisions(sentences("Non, utilise plutôt SQLite.")) == []


# -- the pattern language -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "text", "expected"),
    [
        ("^ go_with|use %", "go with option b", True),
        ("^ go_with|use %", "we go with it", False),  # anchored at the clause start
        ("go_with|use %", "we go with it", True),
        ("^ a b? c", "a c", True),
        ("^ a b? c", "a b c", True),
        ("^ a ..2 d", "a x y d", True),
        ("^ a ..2 d", "a x y z d", False),
        ("^ a ... d", "a x y z w d", True),
        ("beheb*", "bitte behebe den fehler", True),
        ("*entwickler*", "ein softwareentwicklerin", True),
        ("*ing", "testing", True),
        ("^ no ,|! %", "no , the limit", True),
        ("^ no ,|! %", "no , ,", False),  # % is a word, never punctuation
    ],
)
def test_pattern_language(source: str, text: str, expected: bool) -> None:
    clause = Clause(text.split())
    assert Pattern(source, {}).search(clause, [0]) is expected


# -- through the dispatcher ----------------------------------------------------------------------


def test_full_events_of_a_rich_prompt() -> None:
    text = (
        "You are a senior Go engineer. Fix the flaky retry test in pkg/retry. "
        "No, don't use sleeps. See https://go.dev/doc/faq#x and https://go.dev/doc/faq#x."
    )
    assert run_prompt(text) == [
        ("user_prompt", {"text": text}),
        ("intent", {"intent": "fix"}),
        ("decision", {"text": "No, don't use sleeps."}),
        ("role", {"text": "You are a senior Go engineer."}),
        ("url_ref", {"url": "https://go.dev/doc/faq#x"}),
    ]


@pytest.mark.parametrize(
    "prompt",
    [
        "<private>all of it</private>",
        "  <private>a</private>\n<private>b</private> ",
        "",
        "   ",
        None,
        42,
        ["list"],
    ],
)
def test_nothing_left_means_no_events(prompt: Any) -> None:
    assert run_prompt(prompt) == []


def test_long_prompt_trimmed_within_budget() -> None:
    text = "Please implement the exporter. " + "word " * 2000 + "Then run the tests."
    [(kind, data), (kind2, data2)] = run_prompt(text)
    assert (kind, kind2, data2) == ("user_prompt", "intent", {"intent": "implement"})
    assert data["text"].startswith("Please implement the exporter. word word")
    assert "…" in data["text"] and len(data["text"]) <= 1400
    assert data["text"].endswith("Then run the tests.")  # the ask after a paste


def test_long_prompt_keeps_the_pasted_error_from_its_middle() -> None:
    """A pasted log: its head, its tail (the question), and from between the line that
    reads as an error; the rest of the middle is left out."""
    log = "\n".join(f"INFO request {i} served in {i % 9} ms" for i in range(120))
    error = "OSError: org/model-awq is not a local folder and is not a valid model identifier"
    text = f"look at the server log:\n{log}\n{error}\n{log}\nwhy does the client fail?"
    [(kind, data), *_] = run_prompt(text)
    assert kind == "user_prompt"
    assert data["text"].startswith("look at the server log:")
    assert error in data["text"]
    assert data["text"].endswith("why does the client fail?")
    assert "INFO request 60 served" not in data["text"]


def test_secrets_in_prompts_are_masked() -> None:
    token = "ghp_" + "A1b2C3d4E5" * 4
    got = run_prompt(f"Don't commit {token} to the repo. Use https://bob:hunter2@example.com/x")
    dumped = json.dumps(got)
    assert token not in dumped and "hunter2" not in dumped
    assert got[0][0] == "user_prompt" and "[REDACTED:" in got[0][1]["text"]
    assert ("decision", {"text": got[2][1]["text"]}) == got[2]
    assert "[REDACTED:" in got[2][1]["text"]
    assert got[-1] == ("url_ref", {"url": "https://example.com/x"})


def test_at_most_five_distinct_urls() -> None:
    text = " ".join(f"https://example.com/{i} https://example.com/{i}." for i in range(8))
    got = run_prompt(text)
    assert [d for k, d in got if k == "url_ref"] == [
        {"url": f"https://example.com/{i}"} for i in range(5)
    ]


@pytest.mark.parametrize(
    "prompt",
    [
        "<task-notification><task-id>a1</task-id><status>completed</status>"
        "<summary>Agent finished: review done</summary></task-notification>",
        "  <system-reminder>Background job done</system-reminder>",
        "<local-command-stdout>ok</local-command-stdout>",
    ],
)
def test_prompts_written_by_the_client_are_not_user_requests(prompt: str) -> None:
    """Claude Code 2.1.3xx submits <task-notification> prompts itself when an agent ends."""
    from ctxmode.extract import extract
    from ctxmode.payload import from_dict

    inp = from_dict(
        {"session_id": "s", "cwd": "/p", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    )
    inp.project_dir = "/p"
    # (A notification is the end of the background work it names: extract.ongoing.)
    assert [e.type for e in extract(inp)] in ([], ["job_end"])
