"""How `opgen diff` prints its findings: compiler-style text, or JSON Lines.

Text, one line per finding, at the new spec's location when there is one (the
old spec's for a removed operator), with the old location after `was`:

    new.yaml:12:28: error: [backward-incompatible/argument-renamed] add.Tensor:
        argument 'alpha' is renamed to 'beta' (was old.yaml:12:28)
    old.yaml:40:9: note: [backward-incompatible/operator-removed] bar: operator
        removed: bar(Tensor self) -> Tensor [allowed until 2026-06-30 by allow.yaml:1:9: ...]

(each on one line). A finding of a failing category that no allowlist entry
allows is an `error`; every other one is a `note`. A summary line follows when
anything was found.
JSON: one object per line, with `name`, `category`, `rule`, `message`, `old`
and `new` (each `{"file", "line", "column"}` or null), `breaks` (the
compatibility directions torch's checks fail) and `allowed` (null, or the
entry's `reason`, `until` and `entry` location).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from opgen.diagnostics import Location
from opgen.tooling.diff.allowlist import AllowEntry, Allowlist
from opgen.tooling.diff.findings import FAILING_CATEGORIES, Finding


def is_failure(finding: Finding, allowed: AllowEntry | None) -> bool:
    return finding.category in FAILING_CATEGORIES and allowed is None


def text_lines(findings: Sequence[Finding], allowlist: Allowlist) -> Iterator[str]:
    counts = {"backward-incompatible": 0, "forward-incompatible": 0, "informational": 0}
    allowed_count = 0
    for f in findings:
        allowed = allowlist.allowing(f)
        counts[f.category] += 1
        allowed_count += allowed is not None
        severity = "error" if is_failure(f, allowed) else "note"
        where = f.new or f.old
        line = f"{where}: {severity}: [{f.category}/{f.rule}] {f.name}: {f.message}"
        if f.new is not None and f.old is not None:
            line += f" (was {f.old})"
        if allowed is not None:
            line += f" [allowed until {allowed.until} by {allowed.location}: {allowed.reason}]"
        yield line
    if findings:
        summary = ", ".join(f"{n} {category}" for category, n in counts.items())
        yield f"opgen diff: {len(findings)} findings: {summary}; {allowed_count} allowed"


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
