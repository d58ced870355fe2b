"""`opgen dump` against upstream torchgen's model, live, on torch's packaged spec."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from opgen.cli import main
from opgen.spec import load_spec

from .spec_files import spec_files
from .torchgen_model import torchgen_group_summary, torchgen_records

SPECS = ["torch", "example"]


def _opgen_records(native: str, tags: str) -> list[dict[str, Any]]:
    out = io.StringIO()
    assert main(["dump", native, "--tags", tags], out, io.StringIO()) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.fixture(scope="module", params=SPECS)
def both(request: pytest.FixtureRequest, torchgen_native_dir: Path) -> tuple[list[Any], list[Any]]:
    native, tags = spec_files(request.param, torchgen_native_dir)
    return _opgen_records(native, tags), torchgen_records(native, tags)


def test_same_functions_in_same_order(both: tuple[list[Any], list[Any]]) -> None:
    ours, theirs = both
    assert [r["name"] for r in ours] == [r["name"] for r in theirs]


def test_every_field_of_every_function(both: tuple[list[Any], list[Any]]) -> None:
    ours, theirs = both
    mismatches = [
        (t["name"], key, o.get(key), t[key])
        for o, t in zip(ours, theirs, strict=True)
        for key in t
        if o.get(key) != t[key]
    ]
    assert mismatches == []
    assert all(list(o) == list(t) for o, t in zip(ours, theirs, strict=True))


@pytest.mark.parametrize("which", SPECS)
def test_groups_and_view_groups(which: str, torchgen_native_dir: Path) -> None:
    native, tags = spec_files(which, torchgen_native_dir)
    spec = load_spec(native, tags)
    groups = [[str(f.func.name) for f in g.functions()] for g in spec.groups]
    views = [
        [
            str(g.view.func.name),
            str(g.view_inplace.func.name) if g.view_inplace else "",
            str(g.view_copy.func.name) if g.view_copy else "",
        ]
        for g in spec.view_groups
    ]
    assert {"groups": groups, "view_groups": views} == torchgen_group_summary(native, tags)
