"""`opgen aten-mlx` on the malformed-lowering corpus: exact diagnostics per case.

The corpus is `tests/malformed_lowering/`: one directory per case, holding its lowering
files (`lowering.yaml`, or several `*.yaml` read together in name order, the first
opening with a `# ` comment saying what is wrong) and `expected.txt`, the exact stderr of
`opgen aten-mlx FILES -s ATEN_DIR -o OUT` with the case directory written `$DIR`.
ATEN_DIR is the corpus's `aten/` (a few of torch's operators, as `native/
native_functions.yaml` and `native/tags.yaml`), or the installed torchgen's spec for a
case holding an empty `installed-torch` file. A case holding an empty `mlx-headers` file
checks C++ against MLX's installed headers, and is skipped without them; its typos are
far from any other MLX name, so that the hints do not depend on MLX's version. Every
case exits 1 and writes nothing. Update after a deliberate change of wording with

    OPGEN_UPDATE_EXPECTED=1 python -m pytest tests/unit/test_malformed_lowering.py
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.installed_torchgen import packaged_aten
from opgen.spec.mlx.mlx_headers import find_mlx_include

CORPUS = Path(__file__).parent.parent / "malformed_lowering"
ATEN = CORPUS / "aten"
CASES = sorted(p for p in CORPUS.iterdir() if p.is_dir() and p != ATEN)


def lowering_files(case: Path) -> list[Path]:
    return sorted(case.glob("*.yaml"))


def generate(files: list[Path], output: Path, aten: Path | None) -> tuple[int, str, str]:
    """`opgen aten-mlx FILES -o OUTPUT [-s ATEN]`: status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["aten-mlx", *map(str, files), "-o", str(output)]
    if aten is not None:
        argv += ["-s", str(aten)]
    status = main(argv, out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_malformed_lowering_case(case: Path, tmp_path: Path) -> None:
    if (case / "mlx-headers").is_file() and find_mlx_include() is None:
        pytest.skip("the case checks C++ against MLX's headers, and MLX is not installed")
    aten: Path | None = ATEN
    if (case / "installed-torch").is_file():
        if packaged_aten() is None:
            pytest.skip("the case reads torch's spec, and torchgen is not installed")
        aten = None
    output = tmp_path / "out"
    status, out, err = generate(lowering_files(case), output, aten)
    assert "Traceback" not in err
    assert (status, out) == (1, "")
    assert not output.exists()
    printed = err.replace(str(case), "$DIR")
    expected = case / "expected.txt"
    if os.environ.get("OPGEN_UPDATE_EXPECTED") == "1":
        expected.write_text(printed, encoding="utf-8")
    assert printed == expected.read_text(encoding="utf-8")


def test_every_case_says_what_is_wrong() -> None:
    unexplained = [
        case.name
        for case in CASES
        if not lowering_files(case)
        or not lowering_files(case)[0].read_text(encoding="utf-8").startswith("# ")
    ]
    assert unexplained == []


def test_corpus_covers_the_checks() -> None:
    assert len(CASES) >= 25


def test_the_corpus_spec_lowers(tmp_path: Path) -> None:
    """The corpus's spec and a lowering of each kind it has are fine: each case's error is
    its own."""
    lowering = tmp_path / "ops.yaml"
    lowering.write_text(
        "- module: corpus_ops\n"
        "- op: add\n"
        "  call: add(self, multiply(other, alpha))\n"
        "- op: mul.Tensor\n"
        "  call: multiply(self, other)\n"
        "- op: sigmoid\n"
        "  call: sigmoid(self)\n"
        "  promotion: int_to_float\n"
        "- op: silu\n"
        "  compose: mul.Tensor(self, sigmoid(self))\n"
        "- op: sum.dim_IntList\n"
        "  call: sum(self, axes, keepdim)\n"
        "  integral_to_long: true\n"
        "- left_out: max_pool2d\n"
        "  reason: MLX has no pooling in mlx::core\n",
        encoding="utf-8",
    )
    status, out, err = generate([lowering], tmp_path / "out", ATEN)
    assert (status, err) == (0, "")
    assert out == "opgen aten-mlx: 9 operators lowered to MLX\n"
    assert (tmp_path / "out" / "corpus_ops" / "_operators.py").is_file()
