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

A lowering spec's report has a `left out` column (each group's operators it leaves out
on purpose, which its missing ones do not include) and ends with what it leaves out,
each with its reason; `--all` lists each group's left-out operators too.
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


def _lowering(coverage: Coverage) -> bool:
    return coverage.implementation.kind == "lowering"


def _reason(text: str) -> str:
    return " ".join(text.split())


def text_lines(coverage: Coverage, examples: int | None = EXAMPLES_PER_GROUP) -> Iterator[str]:
    """The text report; `examples`: missing operators shown per group (None: every one)."""
    yield f"coverage of {coverage.reference.path} by {coverage.implementation.path}"
    width = max(len(_label(g)) for g in coverage.groups)
    lowering = _lowering(coverage)
    left = f"  {'left out':>8}" if lowering else ""
    yield f"  {'group':<{width}}  {'implemented':>11}  {'total':>6}  {'percent':>7}{left}"
    for g in coverage.groups:
        row = f"  {_label(g):<{width}}  {g.implemented:>11}  {g.total:>6}  {_percent(g):>7}"
        yield row + (f"  {len(g.left_out):>8}" if lowering else "")
    lists = [(f"missing in {_label(g)}", g.missing) for g in coverage.groups if g.missing]
    if examples is None:
        lists += [(f"left out in {_label(g)}", g.left_out) for g in coverage.groups if g.left_out]
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
    left_out = coverage.implementation.left_out
    if left_out:
        yield f"left out ({len(left_out)}):"
        for out in left_out:
            count = f" ({len(out.overloads)} overloads)" if len(out.overloads) > 1 else ""
            yield f"  {out.op}{count}: {_reason(out.reason)}"
    if examples is not None and any(len(names) > examples for _, names in lists):
        yield "for the full lists: --all, or --format markdown or --format json"


def markdown_lines(coverage: Coverage) -> Iterator[str]:
    yield f"## Coverage of `{coverage.reference.path}` by `{coverage.implementation.path}`"
    yield ""
    lowering = _lowering(coverage)
    if lowering:
        yield "| group | implemented | total | percent | left out |"
        yield "| --- | ---: | ---: | ---: | ---: |"
    else:
        yield "| group | implemented | total | percent |"
        yield "| --- | ---: | ---: | ---: |"
    for g in coverage.groups:
        left = f" {len(g.left_out)} |" if lowering else ""
        yield f"| {_label(g)} | {g.implemented} | {g.total} | {_percent(g)} |{left}"
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
    left_out = coverage.implementation.left_out
    if left_out:
        yield ""
        yield f"### Left out ({len(left_out)})"
        yield ""
        for out in left_out:
            overloads = ", ".join(f"`{name}`" for name in out.overloads)
            yield f"- `{out.op}` ({overloads}): {_reason(out.reason)}"


def json_lines(coverage: Coverage) -> Iterator[str]:
    lowering = _lowering(coverage)
    document: dict[str, object] = {
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
                **({"left_out": list(g.left_out)} if lowering else {}),
            }
            for g in coverage.groups
        ],
        "extra": list(coverage.extra),
    }
    if lowering:
        document["left_out"] = [
            {"op": out.op, "reason": _reason(out.reason), "overloads": list(out.overloads)}
            for out in coverage.implementation.left_out
        ]
    yield json.dumps(document, indent=2)
