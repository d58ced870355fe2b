"""`opgen check --deprecated` on the malformed deprecated.yaml corpus: exact diagnostics per case.

Layout: one directory per case under `tests/malformed_deprecated/`:

    <case>/deprecated.yaml       the bad deprecated signatures
    <case>/native_functions.yaml optional; else the corpus's shared
                                 `tests/malformed_deprecated/native_functions.yaml`
    <case>/expected.txt          the exact stderr of `opgen check`, with the case
                                 directory written as `$DIR`
    <case>/upstream-rejects      empty marker: torchgen's load_signatures rejects the case
                                 too (tests/conformance/test_python_bindings.py); a case
                                 without it opens with a `# ` comment saying why opgen
                                 rejects what upstream accepts

Every case uses the shared `tests/malformed/tags.yaml`, must exit with status 1 and
prints no traceback.

Updating expectations: after a deliberate change to a diagnostic, run

    OPGEN_UPDATE_EXPECTED=1 python -m pytest tests/unit/test_malformed_deprecated.py

to rewrite expected.txt from opgen's current output, then review the diff.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from opgen.cli import main

CORPUS = Path(__file__).parents[1] / "malformed_deprecated"
SHARED_NATIVE = CORPUS / "native_functions.yaml"
TAGS = Path(__file__).parents[1] / "malformed" / "tags.yaml"
UPDATE = os.environ.get("OPGEN_UPDATE_EXPECTED") == "1"


def case_dirs() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if (p / "deprecated.yaml").is_file())


def native_for(case: Path) -> Path:
    own = case / "native_functions.yaml"
    return own if own.is_file() else SHARED_NATIVE


def check(case: Path, deprecated: Path | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["check", str(native_for(case)), "--tags", str(TAGS)]
    argv += ["--deprecated", str(deprecated or case / "deprecated.yaml")]
    status = main(argv, out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", case_dirs(), ids=lambda c: c.name)
def test_malformed_deprecated_case(case: Path) -> None:
    status, out, stderr = check(case)
    assert "Traceback" not in stderr
    assert (status, out) == (1, "")
    expected_file = case / "expected.txt"
    if UPDATE:
        expected_file.write_text(stderr.replace(str(case), "$DIR"), encoding="utf-8")
    assert stderr.replace(str(case), "$DIR") == expected_file.read_text(encoding="utf-8")


def test_cases_upstream_accepts_say_why() -> None:
    for case in case_dirs():
        if not (case / "upstream-rejects").is_file():
            text = (case / "deprecated.yaml").read_text(encoding="utf-8")
            assert text.startswith("# "), case.name


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
    status, out, err = check(CORPUS, good)
    assert (status, err) == (0, "")
    assert out.splitlines()[1] == f"{good}: ok: 3 deprecated signatures, calling 3 functions"


def test_corpus_size() -> None:
    assert len(case_dirs()) >= 15
