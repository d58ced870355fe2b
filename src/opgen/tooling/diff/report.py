"""How `opgen diff` prints its findings: compiler-style text, or JSON Lines.

Each finding is one text line, at the new spec's location when there is one
(the old spec's for a removed operator), with the old location after `was`:

    new.yaml:12:28: error: [backward-incompatible/argument-renamed] add.Tensor:
        argument 'alpha' is renamed to 'beta' (was old.yaml:12:28)
    old.yaml:40:9: note: [backward-incompatible/operator-removed] bar: operator
        removed: bar(Tensor self) -> Tensor [allowed until 2026-06-30 by allow.yaml:1:9: ...]

(each on one line). A finding of a failing category that no allowlist entry
allows is an `error`; every other one is a `note`.

The text leads with what needs action, since a release's diff is a handful of
breaks among hundreds of dispatch changes: every break in full (those no entry
allows first; backward- before forward-incompatible; each set in the findings'
order), then the informational findings kind by kind (most frequent first,
ties by rule name), by default only the first `EXAMPLES_PER_KIND` of each with
`... and N more` for the rest. A summary closes it: the totals line (with the
allowlist's warnings, when it has any), one line per category with its findings
by kind, and, when some were left out, how to see them all. With `examples=None`
(`--all`) nothing is left out; the default output is then the same lines minus
the elided ones.

JSON: one object per finding and line, in the findings' order, with `name`,
`category`, `rule`, `message`, `old` and `new` (each `{"file", "line",
"column"}` or null), `breaks` (the compatibility directions torch's checks
fail) and `allowed` (null, or the entry's `reason`, `until` and `entry`
location). It always holds every finding.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from opgen.counts import counted, warnings_counted
from opgen.diagnostics import Location
from opgen.tooling.diff.allowlist import AllowEntry, Allowlist
from opgen.tooling.diff.findings import FAILING_CATEGORIES, Category, Finding

CATEGORIES: tuple[Category, ...] = (*FAILING_CATEGORIES, "informational")
# Informational lines shown per rule by default: enough to see what a kind looks like.
EXAMPLES_PER_KIND = 3


def is_failure(finding: Finding, allowed: AllowEntry | None) -> bool:
    return finding.category in FAILING_CATEGORIES and allowed is None


def text_lines(
    findings: Sequence[Finding],
    allowlist: Allowlist,
    examples: int | None = EXAMPLES_PER_KIND,
    *,
    warnings: int = 0,
) -> Iterator[str]:
    """The text report; `examples`: informational lines per rule (None: every one);
    `warnings`: how many the allowlist has, which the totals line counts."""
    if not findings:
        return
    judged = [(f, allowlist.allowing(f)) for f in findings]
    breaks = [(f, a) for f, a in judged if f.category in FAILING_CATEGORIES]
    breaks.sort(key=lambda pair: (pair[1] is not None, CATEGORIES.index(pair[0].category)))
    for f, allowed in breaks:
        yield _finding_line(f, allowed)
    notes = [f for f in findings if f.category == "informational"]
    shown = 0
    for rule, members in _by_kind(notes):
        kept = members if examples is None else members[:examples]
        shown += len(kept)
        yield from (_finding_line(f, None) for f in kept)
        if len(kept) < len(members):
            yield f"... and {len(members) - len(kept)} more informational/{rule}"
    yield from _summary(judged, warnings)
    if shown < len(notes):
        yield (
            f"{shown} of {counted(len(notes), 'informational finding')} shown; to see every "
            "finding: --all, or --format json"
        )


def _finding_line(f: Finding, allowed: AllowEntry | None) -> str:
    severity = "error" if is_failure(f, allowed) else "note"
    line = f"{f.new or f.old}: {severity}: [{f.category}/{f.rule}] {f.name}: {f.message}"
    if f.new is not None and f.old is not None:
        line += f" (was {f.old})"
    if allowed is not None:
        line += f" [allowed until {allowed.until} by {allowed.location}: {allowed.reason}]"
    return line


def _by_kind(findings: Sequence[Finding]) -> list[tuple[str, list[Finding]]]:
    """`findings` by rule, most frequent rule first, ties by name; each in the given order."""
    kinds: dict[str, list[Finding]] = {}
    for f in findings:
        kinds.setdefault(f.rule, []).append(f)
    return sorted(kinds.items(), key=lambda kind: (-len(kind[1]), kind[0]))


def _summary(judged: Sequence[tuple[Finding, AllowEntry | None]], warnings: int) -> Iterator[str]:
    """The totals line, then each category that has findings, with its findings by kind."""
    allowed = sum(a is not None for _, a in judged)
    counts = ", ".join(f"{sum(f.category == c for f, _ in judged)} {c}" for c in CATEGORIES)
    totals = f"{counted(len(judged), 'finding')}: {counts}; {allowed} allowed"
    yield f"opgen diff: {totals}{warnings_counted(warnings)}"
    for category in CATEGORIES:
        kinds = _by_kind([f for f, _ in judged if f.category == category])
        if kinds:
            total = sum(len(members) for _, members in kinds)
            listed = ", ".join(f"{len(members)} {rule}" for rule, members in kinds)
            yield f"  {total} {category}: {listed}"


def json_lines(findings: Sequence[Finding], allowlist: Allowlist) -> Iterator[str]:
    for f in findings:
        allowed = allowlist.allowing(f)
        record = {
            "name": f.name,
            "category": f.category,
            "rule": f.rule,
            "message": f.message,
            "old": _location(f.old),
            "new": _location(f.new),
            "breaks": list(f.breaks),
            "allowed": None
            if allowed is None
            else {
                "reason": allowed.reason,
                "until": allowed.until.isoformat(),
                "entry": str(allowed.location),
            },
        }
        yield json.dumps(record)


def _location(location: Location | None) -> dict[str, object] | None:
    if location is None:
        return None
    return {"file": location.file, "line": location.line, "column": location.col}
