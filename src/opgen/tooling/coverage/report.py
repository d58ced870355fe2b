"""`opgen coverage` output: a text table, a Markdown table, or one JSON document.

Every format gives each group's implemented and total counts and its
percentage. Markdown and JSON list every missing operator of every group
(JSON in each group's `missing`), and every name the reference lacks. Text is
for reading at a terminal, where a backend's thousands of missing operators
would bury the table: after it, one line per group with its first
`EXAMPLES_PER_GROUP` missing operators (in the reference's order) and `... and
N more`, then a line naming the formats that hold the rest. With `examples=None`
(`--all`) text lists them all instead, under a heading per group, one name a
line (so that a name can be found with grep and two runs compared with diff).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from opgen.tooling.coverage.measure import Coverage, Group

# Missing operators named per group by default: enough to see what kind is missing.
EXAMPLES_PER_GROUP = 5


def _percent(group: Group) -> str:
    percent = group.percent
    return "-" if percent is None else f"{percent:.1f}%"


def _label(group: Group) -> str:
    return group.name if group.kind != "tier" else f"tier {group.name}"


def text_lines(coverage: Coverage, examples: int | None = EXAMPLES_PER_GROUP) -> Iterator[str]:
    """The text report; `examples`: missing operators shown per group (None: every one)."""
    yield f"coverage of {coverage.reference.path} by {coverage.implementation.path}"
    width = max(len(_label(g)) for g in coverage.groups)
    yield f"  {'group':<{width}}  {'implemented':>11}  {'total':>6}  {'percent':>7}"
    for g in coverage.groups:
        yield f"  {_label(g):<{width}}  {g.implemented:>11}  {g.total:>6}  {_percent(g):>7}"
    lists = [(f"missing in {_label(g)}", g.missing) for g in coverage.groups if g.missing]
    if coverage.extra:
        lists.append((f"not in {coverage.reference.path}", coverage.extra))
    for title, names in lists:
        heading = f"{title} ({len(names)}):"
        if examples is None:
            yield heading
            yield from (f"  {name}" for name in names)
        elif len(names) <= examples:
            yield f"{heading} {', '.join(names)}"
        else:
            shown = ", ".join(names[:examples])
            yield f"{heading} {shown} ... and {len(names) - examples} more"
    if examples is not None and any(len(names) > examples for _, names in lists):
        yield "for the full lists: --all, or --format markdown or --format json"


def markdown_lines(coverage: Coverage) -> Iterator[str]:
    yield f"## Coverage of `{coverage.reference.path}` by `{coverage.implementation.path}`"
    yield ""
    yield "| group | implemented | total | percent |"
    yield "| --- | ---: | ---: | ---: |"
    for g in coverage.groups:
        yield f"| {_label(g)} | {g.implemented} | {g.total} | {_percent(g)} |"
    for g in coverage.groups:
        if g.missing:
            yield ""
            yield f"### Missing in {_label(g)} ({len(g.missing)})"
            yield ""
            yield ", ".join(f"`{name}`" for name in g.missing)
    if coverage.extra:
        yield ""
        yield f"### Not in `{coverage.reference.path}` ({len(coverage.extra)})"
        yield ""
        yield ", ".join(f"`{name}`" for name in coverage.extra)


def json_lines(coverage: Coverage) -> Iterator[str]:
    document = {
        "spec": coverage.implementation.path,
        "against": coverage.reference.path,
        "groups": [
            {
                "group": g.name,
                "kind": g.kind,
                "implemented": g.implemented,
                "total": g.total,
                "percent": None if g.percent is None else round(g.percent, 2),
                "missing": list(g.missing),
            }
            for g in coverage.groups
        ],
        "extra": list(coverage.extra),
    }
    yield json.dumps(document, indent=2)
