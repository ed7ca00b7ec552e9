"""The retrieval benchmark (ctxmode/bench/recall.py, benchmarks/recall_bench.py).

What ctxmode's search finds is the benchmark's *output*, not asserted here (it is what
issue 28 sets out to change); these tests pin the yardstick itself: how a hit is read
from ``--json``, what counts as a hit, the baseline's documents, scope and figures on
the bundled corpus, the bundled questions against their transcripts, the batch runner
agreeing with one process per search, and the report's shapes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

from ctxmode.bench import recall, recall_report
from ctxmode.bench.cases import BenchError
from tests.hooktools import REPO


@pytest.fixture(scope="module")
def bundled() -> tuple[list[str], list[recall.Question]]:
    with ExitStack() as stack:
        files, questions = recall.bundled_files(stack)
        # Installed from a checkout the data are files already: the paths outlive the stack.
        assert all(Path(f).exists() for f in files)
        return files, questions


def question(answer: str, session: str = "s1", kind: str = "error") -> recall.Question:
    return recall.Question("q1", session, kind, "some keywords", "a sentence?", answer)


# ----------------------------------------------------------------------------- reading hits


def test_hit_texts_decode_the_data_as_a_person_reads_it() -> None:
    data = {"command": "sed -i 's/--bind-ro=\\/etc\\/resolv\\.conf //'", "error": 'no "x"'}
    stdout = json.dumps(
        [
            {"id": 2, "type": "tool_error", "data": json.dumps(data), "snippet": None},
            {"id": 1, "type": "prompt", "data": "plain text data"},
        ]
    )
    texts = recall.hit_texts(stdout)
    assert len(texts) == 2
    # The answer as the transcript holds it, not JSON-escaped as the stored data holds it.
    assert "sed -i 's/--bind-ro=\\/etc\\/resolv\\.conf //'" in texts[0]
    assert 'no "x"' in texts[0]
    assert "plain text data" in texts[1]


def test_hit_texts_of_an_empty_result_and_of_a_wrapped_list() -> None:
    assert recall.hit_texts("[]") == []
    assert recall.hit_texts("") == []
    # A later shape ({"hits": [...], "total": N}) is read the same way.
    assert recall.hit_texts(json.dumps({"hits": [{"data": "x"}], "total": 1})) == ["x"]
    with pytest.raises(ValueError):
        recall.hit_texts("no matches")


def test_rank_ignores_case_and_line_wrapping() -> None:
    answer = "TypeError: Cannot read properties of undefined (reading 'port')"
    wrapped = "    error: typeerror: cannot read properties\n        of undefined (reading 'port')"
    assert recall.rank_of(answer, ["nothing here", wrapped]) == 2
    assert recall.rank_of(answer, ["nothing"] * 5 + [answer]) == 0  # only the top 5 count
    assert recall.rank_of("a'b", ["a b"]) == 0


# ----------------------------------------------------------------------------- the corpus


def test_record_text_leaves_ids_and_times_out() -> None:
    record = {
        "uuid": "0f9c-uuid",
        "sessionId": "s-1",
        "timestamp": "2026-01-01T00:00:00Z",
        "cwd": "/home/dev/shop",
        "message": {"content": [{"type": "tool_result", "content": "exit 3", "tool_use_id": "t"}]},
        "toolUseResult": {"stdout": "printed", "stderr": ""},
    }
    text = recall.record_text(record)
    assert text.split("\n") == ["exit 3", "printed", ""]
    for meta in ("0f9c-uuid", "s-1", "2026-01-01", "/home/dev/shop", "tool_result"):
        assert meta not in text


def test_check_names_missing_and_overlong_answers(tmp_path: Path) -> None:
    path = tmp_path / "s1.jsonl"
    path.write_text(json.dumps({"sessionId": "s1", "cwd": "/p", "text": "found  me\nhere"}) + "\n")
    transcripts = [recall.read_transcript(str(path))]
    assert recall.check([question("FOUND me here")], transcripts) == []
    problems = recall.check(
        [question("absent"), question("x" * 121), question("found", session="other")],
        transcripts,
    )
    assert len(problems) == 4  # absent; too long (and absent); no session "other"
    assert any("no transcript of session other" in p for p in problems)


def test_the_bundled_questions_fit_their_transcripts(
    bundled: tuple[list[str], list[recall.Question]],
) -> None:
    files, questions = bundled
    transcripts = [recall.read_transcript(f) for f in files]
    assert recall.check(questions, transcripts) == []
    assert len(questions) >= 40
    assert len({q.id for q in questions}) == len(questions)
    assert {Path(f).stem for f in files} == {q.session for q in questions}
    for q in questions:
        assert q.keyword and q.natural and q.keyword != q.natural
        assert 2 <= len(q.keyword.split()) <= 6, q.id
    # Recorded, then rewritten: no path of the machine that recorded them.
    for path in files:
        text = Path(path).read_text(encoding="utf-8")
        assert "/tmp/ctxmode-recall" not in text and "/root/" not in text
    assert {t.cwd for t in transcripts} == {"/home/dev/shop"}


def test_the_public_questions_are_well_formed() -> None:
    folder = REPO / "benchmarks" / "data" / "recall_public"
    questions = recall.load_questions(folder / "questions.jsonl")
    sessions = {m["session"] for m in json.loads((folder / "manifest.json").read_text())}
    assert len(questions) >= 120
    assert {q.session for q in questions} == sessions
    assert all(len(q.answer) <= 120 and q.keyword != q.natural for q in questions)


def test_the_held_out_questions_are_well_formed() -> None:
    # The held-out set (sessions the tuning never saw) follows the public set's rules.
    folder = REPO / "benchmarks" / "data" / "recall_heldout"
    questions = recall.load_questions(folder / "questions.jsonl")
    sessions = {m["session"] for m in json.loads((folder / "manifest.json").read_text())}
    public = {
        m["session"]
        for m in json.loads((folder.parent / "recall_public" / "manifest.json").read_text())
    }
    assert len(questions) >= 80
    assert len({q.id for q in questions}) == len(questions)
    assert {q.session for q in questions} == sessions
    assert not sessions & public
    for q in questions:
        assert len(q.answer) <= 120 and q.keyword != q.natural, q.id
        assert 2 <= len(q.keyword.split()) <= 6, q.id


def test_a_line_that_is_not_a_question_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "x"}\n')
    with pytest.raises(BenchError, match=r"q\.jsonl:1"):
        recall.load_questions(path)


# ----------------------------------------------------------------------------- the baseline


def test_baseline_ors_the_words_and_stays_in_its_project(tmp_path: Path) -> None:
    def transcript(name: str, cwd: str, texts: list[str]) -> recall.Transcript:
        return recall.Transcript(str(tmp_path / name), name, cwd, texts)

    baseline = recall.Baseline(
        [
            transcript("a", "/p", ["the migration failed: no such table", "tests passed"]),
            transcript("b", "/q", ["migration failed in the other project"]),
        ]
    )
    # One word of the query is enough (OR), stemming joins "migrations" and "migration".
    assert baseline.search("why did migrations fail badly", "/p") == [
        "the migration failed: no such table"
    ]
    assert baseline.search("migration", "/q") == ["migration failed in the other project"]
    assert baseline.search("?!", "/p") == []
    assert baseline.search('quote " in it', "/p") == []


# ----------------------------------------------------------------------------- running


@pytest.fixture(scope="module")
def bundled_run(bundled: tuple[list[str], list[recall.Question]]) -> recall.RecallReport:
    files, questions = bundled
    return recall.run(files, questions, corpus="bundled", batch=True)


def test_a_run_asks_every_question_in_both_forms_of_both_systems(
    bundled_run: recall.RecallReport,
) -> None:
    report = bundled_run
    assert (report.sessions, report.questions) == (3, 42)
    assert len(report.outcomes) == 42 * 2 * 2
    assert all(not o.error for o in report.outcomes)
    assert all(o.shown is not None for o in report.outcomes if o.system == "ctxmode")
    assert report.import_summary["sessions"] == 3
    # The baseline is deterministic (SQLite FTS5 over fixed records): its figures pin it.
    cells = {(s, f, k): fig for s, f, k, fig in recall_report.groups(report)}
    keyword, natural = cells[("baseline", "keyword", "all")], cells[("baseline", "natural", "all")]
    assert (round(keyword.hit5 * 42), round(natural.hit5 * 42)) == (32, 20)
    assert keyword.empty == natural.empty == 0


def test_one_process_per_search_agrees_with_the_batch(
    bundled: tuple[list[str], list[recall.Question]], bundled_run: recall.RecallReport
) -> None:
    files, questions = bundled
    some = [q for q in questions if q.id in {"inv-01", "inv-14", "dash-05", "mig-09"}]
    alone = recall.run(files, some, batch=False, workers=2)
    key = lambda o: (o.question.id, o.form, o.system)  # noqa: E731
    batch = {key(o): o for o in bundled_run.outcomes if o.question in some}
    assert len(alone.outcomes) == len(batch) == 16
    for o in alone.outcomes:
        b = batch[key(o)]
        assert (o.rank, o.results, o.output_bytes, o.shown) == (
            b.rank,
            b.results,
            b.output_bytes,
            b.shown,
        ), key(o)


def test_a_failing_search_is_reported_not_counted_as_found(
    bundled: tuple[list[str], list[recall.Question]],
) -> None:
    files, questions = bundled
    # A command that imports fine but answers every search with an error.
    fake = [sys.executable, "-c", FAKE_CTXMODE]
    report = recall.run(files, questions[:2], command=fake, compact=False)
    ours = [o for o in report.outcomes if o.system == "ctxmode"]
    assert all(o.error == "Error: boom" and o.rank == 0 for o in ours)
    table = recall_report.format_table(report)
    assert "4 ctxmode searches failed, e.g.: Error: boom" in table


FAKE_CTXMODE = """
import sys
if sys.argv[1:2] == ["import"]:
    print('{"sessions": 3}')
elif sys.argv[1:2] == ["--version"]:
    print("fake 1.0")
else:
    print("Error: boom", file=sys.stderr)
    sys.exit(1)
"""


def test_report_shapes(bundled_run: recall.RecallReport) -> None:
    document = recall_report.report_dict(bundled_run)
    assert set(document["systems"]) == {"ctxmode", "baseline"}
    for system in document["systems"].values():
        assert set(system) == {"keyword", "natural"}
        kinds = system["keyword"]
        assert "all" in kinds and "error" in kinds
        assert set(kinds["all"]) >= {"hit_at_1", "hit_at_5", "mrr", "empty", "median_bytes"}
    assert len(document["per_question"]) == 42
    assert set(document["per_question"][0]) >= {
        "ctxmode_keyword",
        "ctxmode_natural",
        "baseline_keyword",
        "baseline_natural",
    }
    lines = recall_report.format_table(bundled_run).splitlines()
    assert lines[0].startswith("retrieval: 42 questions x 2 query forms over 3 sessions")
    assert lines[3].split()[:3] == ["form", "kind", "n"]
    assert lines[4].split()[:3] == ["keyword", "all", "42"]
    line = recall_report.summary_line(bundled_run)
    assert line.startswith("ctxmode search: 42 questions on 3 bundled sessions, found in the top")
    assert "(BM25 over the raw transcript: 76%, 48%)" in line


def test_the_command_line_checks_the_bundled_answers() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "recall_bench.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "42 questions, 0 problems")


def test_hit_texts_keep_every_field_of_the_stored_data() -> None:
    # Stored data may name its fields like a transcript's metadata: none is left out.
    data = {"cwd": "/srv/app", "version": "2.32.0", "id": "tncrq7xg", "type": "docs"}
    (text,) = recall.hit_texts(json.dumps([{"data": json.dumps(data)}]))
    for value in data.values():
        assert value in text
