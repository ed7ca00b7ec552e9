"""Does one ``ctxmode search`` find what an agent asks for? Against BM25 over the raw transcript.

    python3 benchmarks/recall_bench.py                       # the corpus bundled with ctxmode
    python3 benchmarks/recall_bench.py --corpus DIR --questions FILE [--json]
    python3 benchmarks/recall_bench.py --ctxmode /path/to/ctxmode ...   # another install
    python3 benchmarks/recall_bench.py --corpus DIR --questions FILE --check

The transcripts (every ``*.jsonl`` in DIR, recursively, or the bundled
``ctxmode/data/recall_*.jsonl``) are imported with ``ctxmode import`` into a throwaway data
root; each question is asked as ``ctxmode search --json --limit 5`` and as the default
compact output, in its keyword and its natural form, and in the same run of a plain BM25
(SQLite FTS5, porter) over the transcripts' records. The table shows hit@1, hit@5, MRR,
empty results and median output bytes per question kind and query form; ``--json`` gives
them with every question's ranks. ``--check`` only verifies that each answer is in its
session. How it works: ``ctxmode/bench/recall.py`` (figures: ``recall_report.py``); the questions' rules:
docs/performance.md ("Finding things again").
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxmode.bench import recall, recall_report
from ctxmode.bench.cases import BenchError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="a folder of transcripts (*.jsonl)")
    parser.add_argument("--questions", type=Path, help="the questions (JSONL)")
    parser.add_argument(
        "--ctxmode",
        default=None,
        help="the ctxmode command to measure (default: this interpreter's -m ctxmode)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON document")
    parser.add_argument("--save", type=Path, help="also write the JSON document to this file")
    parser.add_argument("--check", action="store_true", help="only check the answers")
    parser.add_argument(
        "--no-compact", action="store_true", help="skip the compact output (half the searches)"
    )
    parser.add_argument("--workers", type=int, default=None, help="parallel searches")
    args = parser.parse_args(argv)
    if (args.corpus is None) != (args.questions is None):
        parser.error("give --corpus and --questions together (or neither: the bundled corpus)")

    with ExitStack() as stack:
        if args.corpus is None:
            files, questions = recall.bundled_files(stack)
            name = "bundled"
        else:
            files = sorted(str(p) for p in args.corpus.rglob("*.jsonl"))
            questions = recall.load_questions(args.questions)
            name = str(args.corpus)
        if args.check:
            problems = recall.check(questions, [recall.read_transcript(f) for f in files])
            for problem in problems:
                print(problem)
            print(f"{len(questions)} questions, {len(problems)} problems")
            return 1 if problems else 0
        try:
            report = recall.run(
                files,
                questions,
                command=shlex.split(args.ctxmode) if args.ctxmode else None,
                corpus=name,
                compact=not args.no_compact,
                workers=args.workers,
                progress=None if args.json else lambda m: print(m, file=sys.stderr),
            )
        except BenchError as exc:
            print(f"recall_bench: {exc}", file=sys.stderr)
            return 2
    document = json.dumps(recall_report.report_dict(report), indent=2, ensure_ascii=False)
    if args.save:
        args.save.write_text(document + "\n", encoding="utf-8")
    if args.json:
        print(document)
    else:
        print(recall_report.format_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
