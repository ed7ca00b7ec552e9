"""Selection, pure: what fits the byte budget, in order of importance (``_RANK``). The
least important section is shortened first, then loses items (least important first),
then goes whole (counted in ``<omitted_sections>``), before the next one up is touched.
Key items — the last request, the last commit, the newest unresolved error, and the
branch and uncommitted work a section's attributes carry — survive any budget: they are
only ever shortened."""

from __future__ import annotations

from ctxmode.snapshot.render import omitted_sections
from ctxmode.snapshot.text import nbytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.snapshot.render import Section

DEFAULT_BUDGET = 4096
MIN_BUDGET = 1024
# Claude Code replaces additionalContext over 10,000 characters by a file: stay well below.
MAX_CHARS = 9000

# Drop rank: higher is dropped first. Display order is the order of ``SECTIONS``;
# files only read are displayed next to files changed but matter less than the plan.
_RANK = {
    "requests": 1,
    "tasks": 2,
    "files_changed": 3,
    "errors": 4,
    "decisions": 5,
    "plan": 6,
    "files_read": 7,
    "rules": 8,
    "git": 9,
    "environment": 10,
    "subagents": 11,
    "mcp": 12,
    "references": 13,
}
_MAX_LEVEL = 4  # detail levels 0 (full) … 4 (caps divided by 16)


def clamp_budget(budget: object) -> int:
    if not isinstance(budget, int) or isinstance(budget, bool):
        return DEFAULT_BUDGET
    return min(max(budget, MIN_BUDGET), MAX_CHARS)


def _drop_one(sec: Section) -> bool:
    """Drop the least important remaining item that is no key item; False when none may go."""
    for index in sec.drop:
        if sec.alive[index] and index not in sec.key:
            sec.alive[index] = False
            return True
    return False


def fit(sections: list[Section], room: int) -> tuple[list[Section], list[Section]] | None:
    """Shrink ``sections`` (display order) to at most ``room`` bytes; None when impossible.

    From the least important section up: shorten its items, drop them one by one (least
    important first), then remove the section itself, before the next section up is
    touched. Returns the sections kept and those removed (counted in
    ``<omitted_sections>``, whose size is part of ``room``). Key items (the last request,
    the last commit, the newest unresolved error; ``Section.key``) are never dropped and
    their sections never removed, only shortened further. Where even they do not fit at
    their shortest, the count of the removed sections goes first (none are returned as
    removed), then the least important section with key items, and so on.
    """
    sizes = [s.render()[1] for s in sections]
    total = sum(sizes)
    if total <= room:
        return sections, []
    by_rank = sorted(range(len(sections)), key=lambda k: -_RANK[sections[k].tag])
    gone: list[int] = []
    counted = True  # whether the removed sections are counted (<omitted_sections>)

    def removed() -> list[Section]:
        return [sections[g] for g in sorted(gone)] if counted else []

    def measure(k: int) -> None:
        nonlocal total
        size = 0 if k in gone else sections[k].render()[1]
        total += size - sizes[k]
        sizes[k] = size

    def fits(k: int) -> bool:
        measure(k)
        return total + nbytes(omitted_sections(removed())) <= room

    def result() -> tuple[list[Section], list[Section]]:
        return [s for k, s in enumerate(sections) if k not in gone], removed()

    for k in by_rank:
        sec = sections[k]
        sec.level = 1
        if fits(k):
            return result()
        while _drop_one(sec):
            if fits(k):
                return result()
        if sec.pinned:
            continue  # key items stay (see Section.key): shortened below
        gone.append(k)
        if fits(k):
            return result()

    def shorten(first: int) -> bool:
        """Shorten the sections left further, level by level (the least important first)."""
        for level in range(first, _MAX_LEVEL + 1):
            for k in by_rank:
                if k not in gone:
                    sections[k].level = level
                    if fits(k):
                        return True
        return False

    # Only the sections that must stay are left: shorten them further.
    if shorten(2):
        return result()
    # Even the key items do not fit at their shortest (a small budget, long lookups): a
    # key item is worth more than the count of what was left out (shortened again from
    # the start without it), and the least important of them go whole before all of
    # them would go with the document.
    counted = False
    for k in by_rank:
        if k not in gone:
            sections[k].level = 1
            measure(k)
    if shorten(1):
        return result()
    for k in by_rank:
        if k not in gone:
            gone.append(k)
            if fits(k):
                return result()
    return None
