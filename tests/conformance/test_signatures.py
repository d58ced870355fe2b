"""`opgen dump --signatures` against upstream torchgen's API layers, live, on torch's packaged spec.

Every signature key of every function (cpp, cpp_method, dispatcher, native,
python, python_pyi) must equal what torchgen derives for it; see
`torchgen_signatures.py` for how the oracle calls torchgen.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from opgen.cli import main

from .spec_files import spec_files
from .torchgen_signatures import torchgen_signature_records

SPECS = ["torch", "example"]
SIGNATURE_KEYS = ["cpp", "cpp_method", "dispatcher", "native", "python", "python_pyi"]


@pytest.fixture(scope="module", params=SPECS)
def both(request: pytest.FixtureRequest, torchgen_native_dir: Path) -> tuple[list[Any], list[Any]]:
    native, tags = spec_files(request.param, torchgen_native_dir)
    out = io.StringIO()
    assert main(["dump", "--signatures", native, "--tags", tags], out, io.StringIO()) == 0
    ours = [json.loads(line) for line in out.getvalue().splitlines()]
    return ours, torchgen_signature_records(native, tags)


def test_same_functions(both: tuple[list[Any], list[Any]]) -> None:
    ours, theirs = both
    assert [r["name"] for r in ours] == [r["name"] for r in theirs]


@pytest.mark.parametrize("key", SIGNATURE_KEYS)
def test_every_function(key: str, both: tuple[list[Any], list[Any]]) -> None:
    ours, theirs = both
    mismatches = [
        (t["name"], o[key], t[key]) for o, t in zip(ours, theirs, strict=True) if o[key] != t[key]
    ]
    assert mismatches == []


def test_the_oracle_exercises_every_form(both: tuple[list[Any], list[Any]]) -> None:
    """The comparison is not vacuous: torch's spec has each kind of declaration (the
    example, a few dozen operators, has not)."""
    _, theirs = both
    if len(theirs) < 1000:  # the example: it has some of each convention's forms
        assert {len(r["cpp"]) for r in theirs} >= {1, 2}
        return
    # 1: plain; 2: plus faithful, or plus SymInt; 4: both pairs.
    assert {len(r["cpp"]) for r in theirs} == {1, 2, 4}
    assert any(r["cpp_method"] for r in theirs)
    assert any(" __dispatch_" in d for r in theirs for d in r["cpp"])
    assert any("_symint" in d for r in theirs for d in r["native"].values())
    assert any(r["python"] is None for r in theirs)
    assert any("\n" in (r["python_pyi"] or "") for r in theirs)
