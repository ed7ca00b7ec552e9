"""The ranking rules of ``ctxmode search`` (issue 28), on both engines.

An agent asks after a compaction in its own words. Every event sharing a meaningful word
with the query is a candidate; a sentence finds what its keywords find (question and
stop words carry no weight); a word the store has never seen costs nothing; an
identifier ranks its exact event first; a word finds its other forms; recency breaks
ties. The same rules hold with FTS5 (the word and trigram indexes) and without it (LIKE).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxmode.events import SessionEvent, make
from ctxmode.store import Store, analyze
from ctxmode.store.query import stop_words, synonyms, word_root, words_of

# A session as the extractors store it: commands with their output, edits, errors.
SESSION = [
    make("user_prompt", {"text": "Set up the invoice service and make the tests pass"}),
    make(
        "shell_call",
        {
            "command": "npm run dev",
            "exit": 0,
            "output": "> api@1.0.0 dev\n> tsx watch src/index.ts\n\nServer listening on "
            "port 3000 (http://localhost:3000/)",
        },
    ),
    make("file_edit", {"path": "src/server/config.ts", "summary": "+3 -1 lines"}),
    make(
        "tool_error",
        {
            "tool": "Bash",
            "key": "npx prisma migrate deploy",
            "error": "Exit code 1\nError: P3009 migrate found failed migrations in the target "
            "database: 20241203_add_invoice_totals",
        },
    ),
    make(
        "shell_call",
        {
            "command": "npm install zod@3.23.8",
            "exit": 0,
            "output": "added 1 package, and audited 412 packages in 2s",
        },
    ),
    make(
        "git_commit", {"message": "Fix rounding of half cents in invoice totals", "sha": "1a2b3c4"}
    ),
    make(
        "shell_call",
        {
            "command": "eslint --fix src/",
            "exit": 0,
            "output": "src/app.ts\n  3:1  warning  no-console rule disabled",
        },
    ),
    make("file_read", {"path": "README.md"}),
    make("decision", {"text": "Use ROUND_HALF_UP for every money amount"}),
]


def fill(store: Store) -> dict[str, int]:
    """The session, one call a minute; returns each event's id by its type and order."""
    ids: dict[str, int] = {}
    for n, event in enumerate(SESSION):
        store.add_events(
            "s1",
            [event],
            source_hook="PostToolUse",
            project_dir="/p",
            now=f"2026-12-02T14:{n:02d}:00.000Z",
        )
    for event in store.session_events("s1"):
        key = event.type
        while key in ids:
            key += "+"
        ids[key] = int(event.id or 0)
    return ids


@pytest.fixture(params=["fts", "like"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Store]:
    if request.param == "like":
        monkeypatch.setenv("CTXMODE_NO_FTS", "1")
    s = Store.open(str(tmp_path / "s.db"))
    assert s.fts_enabled() is (request.param == "fts")
    assert s.words_enabled() is (request.param == "fts")
    yield s
    s.close()


def add(store: Store, event: SessionEvent, now: str) -> int:
    """One event of session s1, stored at ``now``; its id."""
    store.add_events("s1", [event], source_hook="PostToolUse", project_dir="/p", now=now)
    return max(int(e.id or 0) for e in store.session_events("s1"))


def top(store: Store, query: str, n: int = 1) -> list[int]:
    return [int(h.id or 0) for h in store.search(query, limit=n)]


# ------------------------------------------------------------------ a sentence, keywords


@pytest.mark.parametrize(
    ("keywords", "sentence", "wanted"),
    [
        ("dev server port", "Which port did the dev server start on?", "shell_call"),
        ("migration failed", "why did the migration fail again?", "tool_error"),
        ("zod version installed", "what version of zod did we install?", "shell_call+"),
        ("rounding commit", "What was the commit about rounding?", "git_commit"),
        ("lint rule disabled", "which lint rule was disabled?", "shell_call++"),
    ],
)
def test_a_sentence_finds_what_its_keywords_find(
    store: Store, keywords: str, sentence: str, wanted: str
) -> None:
    ids = fill(store)
    assert top(store, keywords) == [ids[wanted]]
    assert top(store, sentence) == [ids[wanted]]


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        # Words, and the whole query as typed: the exact event first, weighing nothing.
        ("npm run dev", [("npm run dev", "exact", 0.0, True), ("npm", "word", 1.0, False),
                         ("run", "word", 1.0, False), ("dev", "word", 1.0, False)]),
        # A quoted phrase: matched as written, put first; its words weigh half; no whole query.
        ('"half cents" rounding', [("half cents", "exact", 1.5, True),
                                   ("half", "word", 0.5, False), ("cents", "word", 0.5, False),
                                   ("rounding", "word", 1.0, False)]),
        # A flag: its word, and the flag as written (not put first: flags are common).
        ("--force push", [("--force", "exact", 1.5, False), ("--force push", "exact", 0.0, True),
                          ("force", "word", 1.0, False), ("push", "word", 1.0, False)]),
        # A path: put first when long enough; its words at half weight (and their synonyms).
        ("src/app.py error", [("src/app.py", "exact", 1.5, True),
                              ("src/app.py error", "exact", 0.0, True),
                              ("src", "word", 0.5, False), ("app", "word", 0.5, False),
                              ("py", "word", 0.5, False), ("error", "word", 1.0, False),
                              ("python", "word", 0.5, False)]),
        # An error code is one word; "-v" a word and a flag.
        ("E0425 -v", [("-v", "exact", 1.5, False), ("E0425 -v", "exact", 0.0, True),
                      ("e0425", "word", 1.0, False), ("v", "word", 1.0, False)]),
        # Punctuation alone is looked for as it is; a query shorter than 4 has no whole term.
        ("' (", [("'", "exact", 1.5, False), ("(", "exact", 1.5, False)]),
        ("a b", [("b", "word", 1.0, False)]),
    ],
)  # fmt: skip
def test_the_terms_of_a_query(query: str, terms: list[tuple[str, str, float, bool]]) -> None:
    assert [(t.text, t.kind, t.weight, t.tiered) for t in analyze(query)] == terms
    assert [t.quoted for t in analyze(query)][:1] == [query.startswith('"')]


def test_question_words_carry_no_weight(store: Store) -> None:
    fill(store)
    terms = [t.text for t in analyze("What did we do with the rounding, and why?")]
    assert terms == ["What did we do with the rounding, and why", "rounding"]
    assert {"what", "which", "why", "how", "the", "did"} <= stop_words()
    # A query of stop words only still searches them.
    assert [t.text for t in analyze("what is it")][-3:] == ["what", "is", "it"]


def test_a_query_with_a_foreign_word_still_finds_the_event(store: Store) -> None:
    """OR, not AND: a word no event holds costs the event nothing."""
    ids = fill(store)
    assert top(store, "prisma migrate kubernetes") == [ids["tool_error"]]
    assert top(store, "xylophone P3009") == [ids["tool_error"]]
    assert store.search("xylophone quasar") == []  # nothing shares a word: nothing


def test_an_identifier_ranks_its_exact_event_first(store: Store) -> None:
    ids = fill(store)
    # The path and the error code are held by one event each; others share their words.
    assert top(store, "src/server/config.ts") == [ids["file_edit"]]
    assert top(store, "dev server config P3009 error", 2)[0] == ids["tool_error"]
    assert top(store, "zod@3.23.8") == [ids["shell_call+"]]
    assert top(store, "20241203_add_invoice_totals invoice") == [ids["tool_error"]]
    # A quoted phrase, and the whole query as typed, likewise.
    assert top(store, '"half cents"') == [ids["git_commit"]]
    assert top(store, "npm run dev") == [ids["shell_call"]]


def test_an_identifier_the_whole_session_names_does_not_come_first(store: Store) -> None:
    """An identifier held by more than TIER_MAX_EVENTS events is the session's topic: it
    ranks by its weight like a word, and the event holding the question's other words
    wins. Quoted, it still puts its events first: the asker said so."""
    from ctxmode.store.query import TIER_MAX_EVENTS

    for n in range(TIER_MAX_EVENTS + 5):
        store.add_events(
            "s1",
            [make("file_edit", {"path": f"hosts/laptop{n}.nix", "summary": "nixos-hardware"})],
            source_hook="PostToolUse",
            project_dir="/p",
            now=f"2026-12-02T14:{n:02d}:00.000Z",
        )
    store.add_events(
        "s1",
        [
            make(
                "shell_call",
                {"command": "nix flake check", "exit": 1, "output": "error: infinite recursion"},
            )
        ],
        source_hook="PostToolUse",
        project_dir="/p",
        now="2026-12-02T13:00:00.000Z",  # older than every edit
    )
    error = int(store.session_events("s1")[-1].id or 0)
    assert top(store, "infinite recursion nixos-hardware") == [error]
    assert top(store, 'infinite recursion "nixos-hardware"') != [error]
    # A rare identifier still comes first (test_an_identifier_ranks_its_exact_event_first).


def test_a_word_finds_its_other_forms(store: Store) -> None:
    ids = fill(store)
    assert top(store, "migrations") == [ids["tool_error"]]  # "migrate", "migrations"
    assert top(store, "installing zod") == [ids["shell_call+"]]
    for form in ("migration", "migrated", "migrate", "migrating"):
        assert form.startswith(word_root("migrations"))
    assert word_root("running") == word_root("runs") == "run"


def test_part_of_a_word_is_found_when_no_word_matches(store: Store) -> None:
    ids = fill(store)
    assert set(top(store, "invoi", 3)) == {ids["user_prompt"], ids["git_commit"], ids["tool_error"]}
    assert top(store, "localhost") == [ids["shell_call"]]


def test_a_rare_word_finds_what_the_session_called_it(store: Store) -> None:
    """The agent's word is not the session's: "linter" for the ``eslint`` run, "repo"
    for a repository, a "virtualenv" of a session that said "venv"."""
    ids = fill(store)
    assert top(store, "linter warning") == [ids["shell_call++"]]
    assert top(store, "what did the linter say?") == [ids["shell_call++"]]
    # A stand-in is its own word, not its stem: "settings" (for "config") is no "Set up".
    assert top(store, "config", 9) == [ids["file_edit"]]
    venv = add(
        store,
        make("shell_call", {"command": "python -m venv .venv", "exit": 0}),
        "2026-12-02T15:00:00.000Z",
    )
    assert top(store, "virtualenv created") == [venv]


def test_a_word_the_session_uses_needs_no_synonym(store: Store) -> None:
    """A word held by more than SYNONYM_MAX_EVENTS events is the session's own word: its
    events rank by it alone, and an event holding only a synonym is no hit."""
    from ctxmode.store.search import SYNONYM_MAX_EVENTS

    for n in range(SYNONYM_MAX_EVENTS + 1):
        add(
            store,
            make("shell_call", {"command": f"npm run build:{n}", "exit": 0}),
            f"2026-12-02T14:{n:02d}:00.000Z",
        )
    add(
        store,
        make("tool_error", {"tool": "Bash", "key": "tsc", "error": "compiler gave up"}),
        "2026-12-02T15:00:00.000Z",
    )
    hits = store.search("build", limit=20)
    assert len(hits) == SYNONYM_MAX_EVENTS + 1 and hits.total == SYNONYM_MAX_EVENTS + 1
    assert {h.type for h in hits} == {"shell_call"}
    # Rare, the same word's synonyms are looked for: "compile" finds the build commands.
    assert {h.type for h in store.search("compile", limit=20)} == {"shell_call", "tool_error"}


def test_a_synonym_not_looked_for_weighs_nothing(store: Store) -> None:
    """A common word's stand-ins are not looked for, and an event that happens to hold one
    beside the word gains nothing from it: "build" ranks its events by "build" alone."""
    from ctxmode.store.search import SYNONYM_MAX_EVENTS

    with_stand_in = add(
        store,
        make("shell_call", {"command": "make all", "output": "build: compiled with -O2"}),
        "2026-12-02T13:00:00.000Z",
    )
    for n in range(SYNONYM_MAX_EVENTS + 1):
        add(
            store,
            make("shell_call", {"command": f"npm run build:{n}", "exit": 0}),
            f"2026-12-02T14:{n:02d}:00.000Z",
        )
    # Older and longer than the others, it holds "build" as often: below them.
    assert with_stand_in not in top(store, "build", 3)
    assert top(store, "compiled", 1) == [with_stand_in]


def test_a_synonym_is_a_whole_word_never_part_of_one(store: Store) -> None:
    """ "temporary" (held by no event) looks for "tmp" and "temp" as words: "tmpfiles" is
    not "tmp" (a query's own word no event holds is looked for inside words; a stand-in,
    a guess at the session's word, is not)."""
    add(
        store,
        make("shell_call", {"command": "ls /var/tmpfiles.d", "exit": 0}),
        "2026-12-02T14:00:00.000Z",
    )
    assert store.search("temporary") == []
    assert len(store.search("tmpfile")) == 1  # the query's own word: inside words, found


def test_each_form_of_a_synonym_is_looked_for_once() -> None:
    """A group lists every form; a stand-in matches its plural too, so a plural of a
    stand-in taken already is not taken again (it would count one word twice)."""
    for word in synonyms():
        texts = [t.text for t in analyze(word) if t.synonym_of >= 0]
        assert not [t for t in texts if t + "s" in texts or t[:-1] in texts], (word, texts)
    roots = {t.text: t.root for t in analyze("config") if t.synonym_of >= 0}
    assert roots["setting"] == "setting" and "settings" not in roots
    assert roots["configuration"] == "configuration" and "configurations" not in roots
    assert [t.text for t in analyze("crash") if t.synonym_of >= 0][:2] == ["panic", "panicked"]


def test_synonyms_are_whole_groups_of_single_words() -> None:
    table = synonyms()
    assert "venv" in table["virtualenv"] and "virtualenv" in table["venv"]
    for word, others in table.items():
        assert word == word.lower() and words_of(word) == [word], word
        assert word not in others
        for other in others:
            assert word in table[other], (word, other)  # a group finds itself from any word
    assert not {w for w in table if w in stop_words()}
    # The query's own words come first; the stand-ins last, each naming its word.
    terms = analyze("repo path")
    assert [t.text for t in terms][:3] == ["repo path", "repo", "path"]
    # Every other form of the group, but a plural of a word looked for already.
    assert {t.text for t in terms if t.synonym_of == 1} == set(table["repo"]) - {"repos"}


def test_a_word_finds_its_accented_form(tmp_path: Path) -> None:
    """ "generation" finds "Génération" and ranks it by it, as the word index has it
    (``remove_diacritics``): the ranking folds accents the same way. (With the indexes
    only: SQLite's LIKE folds no accents.)"""
    s = Store.open(str(tmp_path / "s.db"))
    for n, output in enumerate(
        ["Génération du rapport: terminée", "Erreur génération html: unexpected keyword"]
    ):
        s.add_events(
            "s1",
            [make("shell_call", {"command": f"report {n}", "exit": 0, "output": output})],
            source_hook="PostToolUse",
            project_dir="/p",
            now=f"2026-12-02T14:0{n}:00.000Z",
        )
    hits = s.search("generation erreur", limit=2)
    assert [json.loads(h.data)["output"][:6] for h in hits] == ["Erreur", "Généra"]
    assert "**génération**" in hits[0].snippet and "**Erreur**" in hits[0].snippet
    s.close()


def test_recency_breaks_ties(store: Store) -> None:
    for n, minute in enumerate((10, 30, 20)):
        store.add_events(
            f"s{n}",
            [make("shell_call", {"command": "make deploy", "exit": 0})],
            source_hook="PostToolUse",
            project_dir="/p",
            now=f"2026-12-02T14:{minute:02d}:00.000Z",
        )
    assert [h.session_id for h in store.search("deploy")] == ["s1", "s2", "s0"]


def test_relevance_beats_recency(store: Store) -> None:
    ids = fill(store)
    store.add_events(
        "s2",
        [make("file_read", {"path": "docs/rounding.md"})],
        source_hook="PostToolUse",
        project_dir="/p",
        now="2026-12-02T15:00:00.000Z",
    )
    # Newer, but holding one word of the two.
    assert top(store, "rounding half cents") == [ids["git_commit"]]


def test_the_total_counts_every_event_sharing_a_word(store: Store) -> None:
    fill(store)
    hits = store.search("invoice", limit=1)
    assert len(hits) == 1 and hits.total == 3 and not hits.more  # prompt, error, commit


def test_events_are_unchanged_by_the_ranking(store: Store) -> None:
    fill(store)
    stored = {int(e.id or 0): e for e in store.session_events("s1")}
    for hit in store.search("invoice rounding migrate", limit=50):
        assert SessionEvent.as_dict(hit) == stored[int(hit.id or 0)].as_dict()


def test_a_latin_word_written_against_cjk_text_counts_as_a_word() -> None:
    """Chinese and Japanese put no space between words, Korean none before a particle: a
    Latin word written against them ("还用上次的wandb", "gemini에게") is a word of the
    event when its text is scored, as it would be after a space. Inside a Latin word it
    is still only part of one."""
    from ctxmode.store.query import Term, fold

    wandb, gemini, w4a8 = Term("wandb", "word"), Term("gemini", "word"), Term("w4a8", "word")
    assert wandb.count(fold("把w4a8的4个实验也跑了，还用上次的wandb")) == 1
    assert gemini.count(fold("gemini에게 업무 수행 요청 시작")) == 1
    assert w4a8.count(fold("把w4a8的4个实验")) == 1
    assert w4a8.count(fold("run_single.sh Base-0.4B mxw4a8")) == 0  # part of "mxw4a8"
    assert wandb.count(fold("wandbx 的")) == 0
