"""`opgen check --derivatives` on the malformed-derivatives corpus: exact diagnostics per case.

Layout: one directory per case under `tests/malformed_derivatives/`:

    <case>/derivatives.yaml      the bad derivatives file (PyTorch's dialect)
    <case>/native_functions.yaml optional; else the corpus's shared
                                 `tests/malformed_derivatives/native_functions.yaml`
    <case>/expected.txt          the exact stderr of `opgen check`, with the case
                                 directory written as `$DIR` (and the corpus's as `$CORPUS`)
    <case>/upstream-rejects      empty marker: torchgen's gen_autograd rejects the case too
                                 (tests/conformance/test_malformed_upstream.py); a case
                                 without it opens with a `# ` comment saying why opgen
                                 rejects what upstream accepts

Every case uses the shared `tests/malformed/tags.yaml`, must exit with status 1 and
prints no traceback.

Updating expectations: after a deliberate change to a diagnostic, run

    OPGEN_UPDATE_EXPECTED=1 python -m pytest tests/unit/test_malformed_derivatives.py

to rewrite expected.txt from opgen's current output, then review the diff.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from opgen.cli import main

CORPUS = Path(__file__).parents[1] / "malformed_derivatives"
SHARED_NATIVE = CORPUS / "native_functions.yaml"
TAGS = Path(__file__).parents[1] / "malformed" / "tags.yaml"
UPDATE = os.environ.get("OPGEN_UPDATE_EXPECTED") == "1"


def case_dirs() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if (p / "derivatives.yaml").is_file())


def native_for(case: Path) -> Path:
    own = case / "native_functions.yaml"
    return own if own.is_file() else SHARED_NATIVE


def check(case: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = [
        "check",
        str(native_for(case)),
        "--tags",
        str(TAGS),
        "--derivatives",
        str(case / "derivatives.yaml"),
    ]
    status = main(argv, out, err)
    return status, out.getvalue(), err.getvalue()


def _placeholders(text: str, case: Path) -> str:
    return text.replace(str(case), "$DIR").replace(str(CORPUS), "$CORPUS")


@pytest.mark.parametrize("case", case_dirs(), ids=lambda c: c.name)
def test_malformed_derivatives_case(case: Path) -> None:
    status, out, stderr = check(case)
    assert "Traceback" not in stderr
    assert (status, out) == (1, "")
    expected_file = case / "expected.txt"
    if UPDATE:
        expected_file.write_text(_placeholders(stderr, case), encoding="utf-8")
    expected = expected_file.read_text(encoding="utf-8")
    assert _placeholders(stderr, case) == expected


def test_cases_upstream_accepts_say_why() -> None:
    for case in case_dirs():
        if not (case / "upstream-rejects").is_file():
            text = (case / "derivatives.yaml").read_text(encoding="utf-8")
            assert text.startswith("# "), case.name


def test_corpus_size() -> None:
    assert len(case_dirs()) >= 25
