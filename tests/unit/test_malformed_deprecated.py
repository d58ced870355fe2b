"""`opgen check --deprecated` on the malformed-deprecated corpus: exact diagnostics per case.

The corpus is `tests/malformed_deprecated/` (layout and updating: tests/malformed_corpus.py):
each case's `deprecated.yaml` must fail with exactly its `expected.txt`. Update
after a deliberate change of wording with

    OPGEN_UPDATE_EXPECTED=1 python -m pytest tests/unit/test_malformed_deprecated.py
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.malformed_corpus import DEPRECATED


@pytest.mark.parametrize("case", DEPRECATED.cases(), ids=lambda c: c.name)
def test_malformed_deprecated_case(case: Path) -> None:
    DEPRECATED.assert_expected(case)


def test_cases_upstream_accepts_say_why() -> None:
    assert DEPRECATED.unexplained_opgen_only_cases() == []


def test_a_good_file_binds_each_signature_to_the_functions_it_calls(tmp_path: Path) -> None:
    good = tmp_path / "deprecated.yaml"
    good.write_text(
        "- name: add(Tensor self, Scalar alpha, Tensor other) -> Tensor\n"
        "  aten: add(self, other, alpha)\n"
        "- name: add(Tensor self, Scalar alpha, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n"
        "  aten: add_out(out, self, other, alpha)\n"
        "- name: addmm(Scalar beta, Tensor self, Tensor mat1, Tensor mat2) -> Tensor\n"
        "  aten: addmm(self, mat1, mat2, beta, 1)\n"
    )
    status, out, err = DEPRECATED.check(DEPRECATED.root, good)
    assert (status, err) == (0, "")
    assert out.splitlines()[1] == f"{good}: ok: 3 deprecated signatures, calling 3 functions"


def test_corpus_size() -> None:
    assert len(DEPRECATED.cases()) >= 15
