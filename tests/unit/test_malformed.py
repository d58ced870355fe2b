"""`opgen check` on the malformed-spec corpus: every case must fail with its exact diagnostics.

Layout: one directory per case under `tests/malformed/`:

    <case>/native_functions.yaml   the bad spec (1-4 entries)
    <case>/tags.yaml               optional; else the shared `tests/malformed/tags.yaml`
    <case>/expected.txt            the exact stderr of `opgen check`, with the case
                                   directory written as `$DIR`
    <case>/upstream-rejects        empty marker: torchgen rejects the case too
                                   (see tests/conformance/test_malformed_upstream.py)
    <case>/xfail.txt               optional: why opgen's current output is wrong;
                                   expected.txt then holds what opgen *should* print
                                   and the test is a strict xfail

A case must exit with status 1 and print no traceback.

Updating expectations: after a deliberate change to a diagnostic, run

    OPGEN_UPDATE_EXPECTED=1 python -m pytest tests/unit/test_malformed.py

to rewrite expected.txt from opgen's current output, then review the diff.
Cases with an xfail.txt are never rewritten: once opgen is fixed, the strict
xfail turns into a failure (XPASS); delete xfail.txt (and rerun with the
variable if the wording differs). Without the variable the test only compares.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from opgen.cli import main

CORPUS = Path(__file__).parents[1] / "malformed"
SHARED_TAGS = CORPUS / "tags.yaml"
UPDATE = os.environ.get("OPGEN_UPDATE_EXPECTED") == "1"


def case_dirs() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if (p / "native_functions.yaml").is_file())


def tags_for(case: Path) -> Path:
    own = case / "tags.yaml"
    return own if own.is_file() else SHARED_TAGS


def _param(case: Path) -> object:
    xfail = case / "xfail.txt"
    if not xfail.is_file():
        return pytest.param(case, id=case.name)
    reason = xfail.read_text(encoding="utf-8").strip()
    return pytest.param(case, id=case.name, marks=pytest.mark.xfail(strict=True, reason=reason))


def check(case: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(
        ["check", str(case / "native_functions.yaml"), "--tags", str(tags_for(case))], out, err
    )
    return status, err.getvalue()


@pytest.mark.parametrize("case", [_param(c) for c in case_dirs()])
def test_malformed_case(case: Path) -> None:
    status, stderr = check(case)
    assert "Traceback" not in stderr
    assert status == 1
    expected_file = case / "expected.txt"
    if UPDATE and not (case / "xfail.txt").is_file():
        expected_file.write_text(stderr.replace(str(case), "$DIR"), encoding="utf-8")
    expected = expected_file.read_text(encoding="utf-8").replace("$DIR", str(case))
    assert stderr == expected


def test_corpus_size() -> None:
    assert len(case_dirs()) >= 45
