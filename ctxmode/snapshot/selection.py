"""Selection, pure: what fits the byte budget, in order of importance (``_RANK``). The
least important section is shortened first, then loses items (least important first),
then goes whole (counted in ``<omitted_sections>``), before the next one up is touched.
Key items — the last request, the last commit, and the branch and uncommitted work a
section's attributes carry — survive any budget: they are only ever shortened."""

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
    the last commit; ``Section.key``) are never dropped and their sections never removed,
    only shortened further.
    """
    sizes = [s.render()[1] for s in sections]
    total = sum(sizes)
    if total <= room:
        return sections, []
    by_rank = sorted(range(len(sections)), key=lambda k: -_RANK[sections[k].tag])
    gone: list[int] = []

    def removed() -> list[Section]:
        return [sections[g] for g in sorted(gone)]

    def fits(k: int) -> bool:
        nonlocal total
        size = 0 if k in gone else sections[k].render()[1]
        total += size - sizes[k]
        sizes[k] = size
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
            continue  # key items stay (the last request, the last commit): shortened below
        gone.append(k)
        if fits(k):
            return result()
    # Only the sections that must stay are left: shorten them further, level by level.
    for level in range(2, _MAX_LEVEL + 1):
        for k in by_rank:
            if k not in gone:
                sections[k].level = level
                if fits(k):
                    return result()
    return None
