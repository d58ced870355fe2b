"""`opgen check --executorch` on the malformed-executorch corpus: exact diagnostics per case.

The corpus is `tests/malformed_executorch/` (layout and updating: tests/malformed_corpus.py):
each case's `functions.yaml`, an ExecuTorch kernel YAML read against the corpus's
`native_functions.yaml` as `opgen check NATIVE --executorch functions.yaml` reads it, must
fail with exactly its `expected.txt`. Update after a deliberate change of wording with

    OPGEN_UPDATE_EXPECTED=1 python -m pytest tests/unit/test_malformed_executorch.py
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.malformed_corpus import Corpus

EXECUTORCH = Corpus(
    Path(__file__).parents[1] / "malformed_executorch", "functions.yaml", "--executorch"
)


@pytest.mark.parametrize("case", EXECUTORCH.cases(), ids=lambda c: c.name)
def test_malformed_executorch_case(case: Path) -> None:
    EXECUTORCH.assert_expected(case)


def test_cases_upstream_accepts_say_why() -> None:
    assert EXECUTORCH.unexplained_opgen_only_cases() == []


def test_corpus_size() -> None:
    assert len(EXECUTORCH.cases()) >= 25
