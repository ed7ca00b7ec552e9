"""The retrieval benchmark's figures and how they are shown: the table, the ``--json``
document and ``ctxmode bench``'s one line (the running itself: :mod:`ctxmode.bench.recall`)."""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ctxmode.bench.recall import FORMS, LIMIT, SYSTEMS, Outcome, RecallReport


@dataclass(frozen=True)
class Figures:
    n: int
    hit1: float
    hit5: float
    mrr: float
    empty: float
    median_bytes: float
    shown: float | None
    errors: int
    own5: float = 0.0


def figures(outcomes: Sequence[Outcome]) -> Figures:
    n = len(outcomes)
    if not n:
        return Figures(0, 0.0, 0.0, 0.0, 0.0, 0.0, None, 0)
    shown = [o.shown for o in outcomes if o.shown is not None]
    return Figures(
        n=n,
        hit1=sum(o.rank == 1 for o in outcomes) / n,
        hit5=sum(o.rank > 0 for o in outcomes) / n,
        mrr=sum(1 / o.rank for o in outcomes if o.rank) / n,
        empty=sum(o.results == 0 for o in outcomes) / n,
        median_bytes=statistics.median(o.output_bytes for o in outcomes),
        shown=sum(shown) / len(shown) if shown else None,
        errors=sum(bool(o.error) for o in outcomes),
        own5=sum(o.own_rank > 0 for o in outcomes) / n,
    )


def groups(report: RecallReport) -> Iterator[tuple[str, str, str, Figures]]:
    """(system, form, kind or "all", figures), all kinds first, then each kind."""
    kinds = sorted({o.question.kind for o in report.outcomes})
    for system in SYSTEMS:
        for form in FORMS:
            mine = [o for o in report.outcomes if o.system == system and o.form == form]
            yield system, form, "all", figures(mine)
            for kind in kinds:
                yield system, form, kind, figures([o for o in mine if o.question.kind == kind])


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def _bytes(value: float) -> str:
    return f"{value / 1024:.1f}K" if value >= 1024 else f"{value:.0f}"


def format_table(report: RecallReport) -> str:
    """The table: per query form and kind, ctxmode beside the baseline."""
    cells = {(s, f, k): fig for s, f, k, fig in groups(report)}
    rows = sorted(
        {(f, k) for _s, f, k in cells}, key=lambda fk: (FORMS.index(fk[0]), fk[1] != "all", fk[1])
    )
    out = [
        f"retrieval: {report.questions} questions x {len(FORMS)} query forms over "
        f"{report.sessions} sessions ({report.records:,} records, {report.corpus}); "
        f"{report.ctxmode}; {report.seconds:.0f} s (import {report.import_seconds:.1f} s)",
        "",
        f"{'':<24}{'ctxmode search (top 5)':<47}{'BM25 over the raw transcript (top 5)'}",
        f"{'form':<8}{'kind':<10}{'n':>5}  {'hit@1':>6}{'hit@5':>6}{'own@5':>6}{'MRR':>6}"
        f"{'empty':>6}{'shown':>6}{'bytes':>7}   {'hit@1':>6}{'hit@5':>6}{'MRR':>6}{'empty':>6}"
        f"{'bytes':>8}",
    ]
    for form, kind in rows:
        ours, raw = cells[("ctxmode", form, kind)], cells[("baseline", form, kind)]
        shown = "-" if ours.shown is None else _pct(ours.shown)
        out.append(
            f"{form:<8}{kind:<10}{ours.n:>5}  {_pct(ours.hit1):>6}{_pct(ours.hit5):>6}"
            f"{_pct(ours.own5):>6}{ours.mrr:>6.2f}{_pct(ours.empty):>6}{shown:>6}{_bytes(ours.median_bytes):>7}   "
            f"{_pct(raw.hit1):>6}{_pct(raw.hit5):>6}{raw.mrr:>6.2f}{_pct(raw.empty):>6}"
            f"{_bytes(raw.median_bytes):>8}"
        )
    errors = sum(bool(o.error) for o in report.outcomes)
    if errors:
        first = next(o.error for o in report.outcomes if o.error)
        out.append(f"{errors} ctxmode searches failed, e.g.: {first}")
    out += [
        "",
        "hit@k: the answer in one of the first k results (a hit with the events beside it); "
        "own@5: in the hits' own events only;",
        "MRR: mean of 1/rank (0 past 5); empty: no result at all;",
        "shown: the answer visible in the default (compact) output; bytes: median output "
        "("
        + ("compact default output" if report.compact else "--json --limit 5")
        + " for ctxmode, the 5 records' text for the baseline).",
    ]
    return "\n".join(out)


def _figures_dict(fig: Figures) -> dict[str, Any]:
    return {
        "n": fig.n,
        "hit_at_1": round(fig.hit1, 4),
        "hit_at_5": round(fig.hit5, 4),
        "own_hit_at_5": round(fig.own5, 4),
        "mrr": round(fig.mrr, 4),
        "empty": round(fig.empty, 4),
        "median_bytes": fig.median_bytes,
        "shown": None if fig.shown is None else round(fig.shown, 4),
        "errors": fig.errors,
    }


def report_dict(report: RecallReport) -> dict[str, Any]:
    """The ``--json`` document: the figures, and every question's ranks."""
    systems: dict[str, Any] = {}
    for system, form, kind, fig in groups(report):
        systems.setdefault(system, {}).setdefault(form, {})[kind] = _figures_dict(fig)
    ranks: dict[str, dict[str, Any]] = {}
    for o in report.outcomes:
        entry = ranks.setdefault(o.question.id, {"id": o.question.id, "kind": o.question.kind})
        entry[f"{o.system}_{o.form}"] = o.rank
        if o.system == "ctxmode":
            entry[f"ctxmode_{o.form}_own"] = o.own_rank
            entry[f"ctxmode_{o.form}_bytes"] = o.output_bytes
            if o.shown is not None:
                entry[f"ctxmode_{o.form}_shown"] = o.shown
            if o.error:
                entry[f"ctxmode_{o.form}_error"] = o.error
    return {
        "corpus": report.corpus,
        "ctxmode": report.ctxmode,
        "sessions": report.sessions,
        "records": report.records,
        "questions": report.questions,
        "limit": LIMIT,
        "compact_measured": report.compact,
        "seconds": round(report.seconds, 1),
        "import_seconds": round(report.import_seconds, 2),
        "import": report.import_summary,
        "systems": systems,
        "per_question": list(ranks.values()),
    }


def summary_line(report: RecallReport) -> str:
    """One line for ``ctxmode bench``: hit@5 for both query forms beside the baseline."""
    cells = {(s, f, k): fig for s, f, k, fig in groups(report)}
    ours = [cells[("ctxmode", f, "all")] for f in FORMS]
    raw = [cells[("baseline", f, "all")] for f in FORMS]
    return (
        f"ctxmode search: {report.questions} questions on {report.sessions} bundled sessions, "
        f"found in the top 5: {_pct(ours[0].hit5)} keyword, {_pct(ours[1].hit5)} natural "
        f"(BM25 over the raw transcript: {_pct(raw[0].hit5)}, {_pct(raw[1].hit5)}); "
        f"{report.seconds:.0f} s"
    )
