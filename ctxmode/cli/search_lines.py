r"""Which lines of a long value a hit of ``ctxmode search`` shows in the compact output:
those holding the most of the query (each flagged ``»``), the lines under the best one, and
how a command ended (a failed one's reason, a successful one's last line), each cut to a
window around its match.

Pure functions over text and the query's terms; ``cli/search_output.py`` lays the hits out.
"""

from __future__ import annotations

import re

from ctxmode.extract.common import FAILURE_MARKERS
from ctxmode.store.query import Term, match_spans
from ctxmode.store.query import fold as fold_case

INDENT = "    "
# The compact output: a value up to this long is shown whole; a longer one shows its
# matching lines (at most MATCH_LINES, each a window this wide around the match).
SHORT_VALUE = 300
LINE_WINDOW = 200
MATCH_LINES = 3
# A line holding the whole query as a phrase is shown before any holding its words only.
PHRASE_LINE = 1000.0
# A term's IDF only orders lines holding as many terms (an IDF is below 20 in a store of
# up to 10^8 events: a line's rarities add up to less than one more term).
RARITY_TIE = 0.001
UNMATCHED_CHARS = 100
LISTED_CHARS = 400  # a listing (no query) shows each value up to this long whole
# A line of the compact output that matched the query starts with this (in its indent).
MATCHED = "  » "


def _marked(line: str, spans: list[tuple[int, int]], mark: tuple[str, str] | None) -> str:
    if mark is None:
        return line
    out: list[str] = []
    cursor = 0
    for start, end in spans:
        out += [line[cursor:start], mark[0], line[start:end], mark[1]]
        cursor = end
    out.append(line[cursor:])
    return "".join(out)


def cut_around(
    line: str, terms: list[Term], width: int, mark: tuple[str, str] | None
) -> tuple[str, bool]:
    """``line`` cut to ``width`` characters around its first match (the matches marked,
    on a terminal), and whether it matched."""
    spans = match_spans(line, terms) if terms else []
    start = 0
    if len(line) > width:
        first = spans[0][0] if spans else 0
        start = max(0, min(first - width // 3, len(line) - width))
    end = min(len(line), start + width)
    inside = [
        (max(a, start) - start, min(b, end) - start) for a, b in spans if b > start and a < end
    ]
    text = _marked(line[start:end], inside, mark)
    return ("…" if start > 0 else "") + text + ("…" if end < len(line) else ""), bool(inside)


def _flag(line: str, matched: bool) -> str:
    """A line that matched starts with :data:`MATCHED` in its indent: its text stays as
    stored, so a command, a path or a version can be copied from it as it is."""
    return MATCHED + line[len(MATCHED) :] if matched and line.startswith(INDENT) else line


def compact_field(
    key: str,
    text: str,
    terms: list[Term],
    mark: tuple[str, str] | None = None,
    match_lines: int = MATCH_LINES,
    after_lines: int = 0,
    verdict: bool | None = None,
) -> list[str]:
    """One field in the compact output: whole when short, else the lines that match
    most of the query (each flagged, see :func:`_flag`), the best of them followed by
    ``after_lines`` lines (not flagged). ``verdict`` (a command's output; True when it
    failed): its :func:`verdict_line` too, in place of its first line when no line
    matched a failed command's."""
    head = f"{INDENT}{key}: " if key else INDENT
    hang = " " * len(head)
    lines = text.split("\n")
    if len(lines) == 1 and len(text) <= SHORT_VALUE:
        shown, matched = cut_around(text, terms, SHORT_VALUE, mark)
        return [_flag(head + shown, matched)]
    if not terms:
        # A listing (no query): the item itself, whole when it is not long.
        kept: list[str] = []
        size = 0
        for line in lines:
            if size + len(line) > LISTED_CHARS:
                break
            kept.append(line)
            size += len(line) + 1
        if not kept:
            kept = [lines[0][:LISTED_CHARS] + "…"]
        out = [(head if n == 0 else hang) + line for n, line in enumerate(kept)]
        if len(kept) < len(lines):
            out.append(f"{hang}… ({len(lines)} lines; --full)")
        return out
    matching = [n for n, line in enumerate(lines) if match_spans(line, terms)]
    if not matching:
        # A failed command: why it failed says more than how its output began (a
        # traceback's header, a build's banner).
        last = verdict_line(lines, failing=True) if verdict else None
        if last is not None and last > 0:
            more = f" ({len(lines)} lines)" if last < len(lines) - 1 else ""
            return [head + "… " + cut_around(lines[last], [], UNMATCHED_CHARS, mark)[0] + more]
        first = lines[0] if lines[0].strip() else next((x for x in lines if x.strip()), "")
        more = f" … ({len(lines)} lines)" if len(lines) > 1 else ""
        return [head + cut_around(first, [], UNMATCHED_CHARS, mark)[0] + more]
    out = []
    picked, best = best_lines(lines, matching, terms, match_lines)
    after = lines_after(lines, best, set(picked), after_lines) if after_lines else []
    if verdict is not None:
        last = verdict_line(lines, failing=verdict)
        if last is not None and last not in picked and last not in after:
            after.append(last)
    shown_lines = sorted(picked + after)
    for place, n in enumerate(shown_lines):
        prefix = head if place == 0 else hang
        gap = "… " if (n > 0 and (place == 0 or shown_lines[place - 1] != n - 1)) else ""
        shown, _ = cut_around(lines[n], terms, LINE_WINDOW, mark)
        out.append(_flag(prefix + gap + shown, n not in after))
    rest = len(matching) - len(picked)
    if rest > 0:  # said on the last line shown: a line of its own would cost its indent
        out[-1] += f" (+{rest} more; --full)"
    elif len(lines) > 1 and shown_lines[-1] < len(lines) - 1 and not out[-1].endswith("…"):
        out[-1] += " …"
    return out


# A line that only says a command exited with a code ("make: *** [all] Error 1", "Exit
# status 2", "Command failed with exit code 1"): the reason is on a line above it.
_EXIT_NOTICE = re.compile(r"exit(?:ed)? (?:with )?(?:code|status)|\berror \d+\s*$", re.IGNORECASE)


def _why(line: str) -> int:
    """How well ``line`` says why a command failed: 2 when it names the error ("KeyError:
    'date'", "! [rejected]"), 1 when it only counts or announces a failure ("1 failed, 4
    passed", "Build failed"), 0 for an exit notice, -1 when it says nothing of one."""
    low = line.lower()
    marks = [mark for mark in FAILURE_MARKERS if mark in low]
    if not marks:
        return -1
    if _EXIT_NOTICE.search(line):
        return 0
    return 1 if marks == ["fail"] else 2


def verdict_line(lines: list[str], *, failing: bool) -> int | None:
    """The line of a command's output that says how it ended: of a failed command, the
    last of the lines that best say why (:func:`_why`); else (or when none does) its
    last line with a letter or digit in it."""
    said = [n for n, line in enumerate(lines) if any(c.isalnum() for c in line)]
    if not said:
        return None
    if failing:
        best, line = max((_why(lines[n]), n) for n in said)
        if best >= 0:
            return line
    return said[-1]


def lines_after(lines: list[str], best: int, taken: set[int], count: int) -> list[int]:
    """Up to ``count`` lines after line ``best`` (within ``2 × count``) that are not
    ``taken`` and hold a letter or digit (a traceback's ``^^^^`` says nothing)."""
    return [
        n
        for n in range(best + 1, min(len(lines), best + 1 + 2 * count))
        if n not in taken and any(c.isalnum() for c in lines[n])
    ][:count]


def line_weight(line: str, terms: list[Term]) -> float:
    """How much of the query ``line`` holds: the number of distinct terms on it, the
    rarer ones (their IDF, when the search measured it) breaking a tie, and the whole
    query as a phrase above any number of its words."""
    folded = fold_case(line)
    total = 0.0
    for term in terms:
        if not term.spans(folded, 1, line):
            continue
        if term.weight == 0.0 and term.kind == "exact":
            total += PHRASE_LINE if len(terms) > 1 else 1.0
        else:
            total += 1.0 + RARITY_TIE * term.weight * term.idf
    return total


def best_lines(
    lines: list[str], matching: list[int], terms: list[Term], keep: int
) -> tuple[list[int], int]:
    """The ``keep`` lines of ``matching`` (numbers into ``lines``, not empty) that hold
    the most of the query (:func:`line_weight`; the earlier at equal weight), in their
    order, and the best of them; a line repeated is shown once. The first lines that
    match are often the command echoing a word of the question; the line that answers
    it holds more of its words, or its rarer ones."""
    ranked = sorted(matching, key=lambda n: (-line_weight(lines[n], terms), n))
    picked: list[int] = []
    said: set[str] = set()
    for n in ranked:
        text = lines[n].strip()
        if text not in said:  # a line repeated says nothing more (a traceback's frames)
            said.add(text)
            picked.append(n)
            if len(picked) == keep:
                break
    return sorted(picked), ranked[0]
