"""`opgen coverage` output: a text table, a Markdown table, or one JSON document.

Every format gives each group's implemented and total counts, its percentage
and its missing operators. Text and Markdown list the missing operators of
every group after the table; JSON holds them in each group's `missing`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from opgen.tooling.coverage.measure import Coverage, Group


def _percent(group: Group) -> str:
    percent = group.percent
    return "-" if percent is None else f"{percent:.1f}%"


def _label(group: Group) -> str:
    return group.name if group.kind != "tier" else f"tier {group.name}"


def text_lines(coverage: Coverage) -> Iterator[str]:
    yield f"coverage of {coverage.reference.path} by {coverage.implementation.path}"
    width = max(len(_label(g)) for g in coverage.groups)
    yield f"  {'group':<{width}}  {'implemented':>11}  {'total':>6}  {'percent':>7}"
    for g in coverage.groups:
        yield f"  {_label(g):<{width}}  {g.implemented:>11}  {g.total:>6}  {_percent(g):>7}"
    for g in coverage.groups:
        if g.missing:
            yield f"missing in {_label(g)} ({len(g.missing)}): {', '.join(g.missing)}"
    if coverage.extra:
        count = len(coverage.extra)
        yield f"not in {coverage.reference.path} ({count}): {', '.join(coverage.extra)}"


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
