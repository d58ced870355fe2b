"""`opgen check --derivatives` on the malformed-derivatives corpus: exact diagnostics per case.

The corpus is `tests/malformed_derivatives/` (layout and updating: tests/malformed_corpus.py):
each case's `derivatives.yaml` (PyTorch's dialect) must fail with exactly its
`expected.txt`. Update after a deliberate change of wording with

    OPGEN_UPDATE_EXPECTED=1 python -m pytest tests/unit/test_malformed_derivatives.py
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.malformed_corpus import DERIVATIVES


@pytest.mark.parametrize("case", DERIVATIVES.cases(), ids=lambda c: c.name)
def test_malformed_derivatives_case(case: Path) -> None:
    DERIVATIVES.assert_expected(case)


def test_cases_upstream_accepts_say_why() -> None:
    assert DERIVATIVES.unexplained_opgen_only_cases() == []


def test_corpus_size() -> None:
    assert len(DERIVATIVES.cases()) >= 25
