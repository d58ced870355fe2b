"""`opgen check --backend` on the malformed-backend corpus: exact diagnostics per case.

The corpus is `tests/malformed_backend/` (layout and updating: tests/malformed_corpus.py):
each case's `backend.yaml` (the input of torchgen's gen_backend_stubs and
gen_lazy_tensor) must fail with exactly its `expected.txt`. Update after a
deliberate change of wording with

    OPGEN_UPDATE_EXPECTED=1 python -m pytest tests/unit/test_malformed_backend.py
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.malformed_corpus import BACKEND


@pytest.mark.parametrize("case", BACKEND.cases(), ids=lambda c: c.name)
def test_malformed_backend_case(case: Path) -> None:
    BACKEND.assert_expected(case)


def test_cases_upstream_accepts_say_why() -> None:
    assert BACKEND.unexplained_opgen_only_cases() == []


def test_corpus_size() -> None:
    assert len(BACKEND.cases()) >= 24
