"""`opgen check --mlx` on the malformed-MLX corpus: exact diagnostics per case.

The corpus is `tests/malformed_mlx/`: one directory per case, holding a
`spec.yaml` that opens with a `# ` comment saying what is wrong, sometimes a
`derivatives.yaml` beside it, and `expected.txt`, the exact stderr of
`opgen check --mlx spec.yaml` with the case directory written `$DIR`.
Formulas are checked against the installed MLX's headers; the typos in the
corpus are far from any other MLX name, so that the hints do not depend on
MLX's version. Update after a deliberate change of wording with

    OPGEN_UPDATE_EXPECTED=1 python -m pytest tests/unit/test_malformed_mlx.py
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.spec.mlx.mlx_headers import find_mlx_include

CORPUS = Path(__file__).parent.parent / "malformed_mlx"
CASES = sorted(p for p in CORPUS.iterdir() if (p / "spec.yaml").is_file())


def check(spec: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["check", "--mlx", str(spec)], out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_malformed_mlx_case(case: Path) -> None:
    status, out, err = check(case / "spec.yaml")
    if "MLX's C++ headers" in err and find_mlx_include() is None:
        pytest.skip("the case has formulas, and MLX is not installed")
    assert "Traceback" not in err
    assert (status, out) == (1, "")
    printed = err.replace(str(case), "$DIR")
    expected = case / "expected.txt"
    if os.environ.get("OPGEN_UPDATE_EXPECTED") == "1":
        expected.write_text(printed, encoding="utf-8")
    assert printed == expected.read_text(encoding="utf-8")


def test_every_case_says_what_is_wrong() -> None:
    unexplained = [
        case.name
        for case in CASES
        if not (case / "spec.yaml").read_text(encoding="utf-8").startswith("# ")
    ]
    assert unexplained == []


def test_corpus_covers_the_checks() -> None:
    assert len(CASES) >= 20


def test_a_good_spec_is_ok(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "- namespace: mlxlib\n"
        "- name: add\n"
        '  signature: "array add(const array& a, const array& b)"\n'
        "- name: scale\n"
        '  signature: "array scale(const array& x, float alpha = 2.0f)"\n'
    )
    assert check(spec) == (0, f"{spec}: ok: 2 operators\n", "")
