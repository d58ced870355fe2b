"""`opgen coverage LOWERING...`: a lowering spec's coverage of a release's spec, by tag,
with what it leaves out and why. Small specs in, exact reports out; then the example
package's lowering spec against torch's."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.installed_torchgen import packaged_aten

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_LOWERING = sorted(str(p) for p in (ROOT / "examples/aten_mlx/lowering").glob("*.yaml"))

NATIVE = """\
- func: abs(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: abs
  tags: [core, pointwise]
- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: abs_out
  tags: pointwise
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: add
  tags: [core, pointwise]
- func: amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: amax
  tags: [core, reduction]
- func: cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: cumsum
  tags: core
- func: cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CompositeExplicitAutograd: cumsum_out
- func: _fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor
  dispatch:
    CompositeExplicitAutograd: _fft_c2r
"""
TAGS = """\
- tag: core
  desc: Core ATen operators.
- tag: pointwise
  desc: Pointwise operators.
- tag: reduction
  desc: Reductions.
"""
ELEMENTWISE = """\
- op: abs
  call: abs(self)
- op: add.Tensor
  call: add(self, multiply(other, alpha))
"""
REDUCTIONS = """\
- op: amax
  call: max(self, axes, keepdim)
- left_out: cumsum
  reason: >
    MLX's cumsum stops the process
    on an empty array
- left_out: _fft_c2r
  reason: MLX's irfftn takes the output's size
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["coverage", *argv], out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "native_functions.yaml").write_text(NATIVE)
    (tmp_path / "tags.yaml").write_text(TAGS)
    (tmp_path / "lowering").mkdir()
    (tmp_path / "lowering" / "elementwise.yaml").write_text(ELEMENTWISE)
    (tmp_path / "lowering" / "reductions.yaml").write_text(REDUCTIONS)
    monkeypatch.chdir(tmp_path)


FILES = ("lowering/elementwise.yaml", "lowering/reductions.yaml")


@pytest.mark.usefixtures("spec")
def test_a_lowering_spec_by_tag_with_what_it_leaves_out() -> None:
    status, out, err = run(*FILES, "--against", "native_functions.yaml")
    assert (status, err) == (0, "")
    assert out == (
        "coverage of native_functions.yaml by 2 lowering files in lowering\n"
        "  group      implemented   total  percent  left out\n"
        "  all                  4       7    57.1%         3\n"
        "  core                 3       4    75.0%         1\n"
        "  pointwise            3       3   100.0%         0\n"
        "  reduction            1       1   100.0%         0\n"
        "left out (2):\n"
        "  cumsum (2 overloads): MLX's cumsum stops the process on an empty array\n"
        "  _fft_c2r: MLX's irfftn takes the output's size\n"
    )


@pytest.mark.usefixtures("spec")
def test_all_lists_each_groups_left_out_operators() -> None:
    status, out, _ = run(*FILES, "--against", "native_functions.yaml", "--all")
    assert status == 0
    assert out.splitlines()[6:] == [
        "left out in all (3):",
        "  cumsum",
        "  cumsum.out",
        "  _fft_c2r",
        "left out in core (1):",
        "  cumsum",
        "left out (2):",
        "  cumsum (2 overloads): MLX's cumsum stops the process on an empty array",
        "  _fft_c2r: MLX's irfftn takes the output's size",
    ]


@pytest.mark.usefixtures("spec")
def test_missing_operators_are_neither_lowered_nor_left_out() -> None:
    status, out, _ = run("lowering/elementwise.yaml", "--against", "native_functions.yaml")
    assert status == 0
    assert out.splitlines()[1:] == [
        "  group      implemented   total  percent  left out",
        "  all                  3       7    42.9%         0",
        "  core                 2       4    50.0%         0",
        "  pointwise            3       3   100.0%         0",
        "  reduction            0       1     0.0%         0",
        "missing in all (4): amax, cumsum, cumsum.out, _fft_c2r",
        "missing in core (2): amax, cumsum",
        "missing in reduction (1): amax",
    ]


@pytest.mark.usefixtures("spec")
def test_json_and_markdown_hold_the_reasons() -> None:
    status, out, _ = run(*FILES, "--against", "native_functions.yaml", "--format", "json")
    assert status == 0
    document = json.loads(out)
    core = next(g for g in document["groups"] if g["group"] == "core")
    assert (core["implemented"], core["total"], core["missing"], core["left_out"]) == (
        3,
        4,
        [],
        ["cumsum"],
    )
    assert document["left_out"] == [
        {
            "op": "cumsum",
            "reason": "MLX's cumsum stops the process on an empty array",
            "overloads": ["cumsum", "cumsum.out"],
        },
        {
            "op": "_fft_c2r",
            "reason": "MLX's irfftn takes the output's size",
            "overloads": ["_fft_c2r"],
        },
    ]
    status, out, _ = run(*FILES, "--against", "native_functions.yaml", "--format", "markdown")
    assert out.splitlines()[2:5] == [
        "| group | implemented | total | percent | left out |",
        "| --- | ---: | ---: | ---: | ---: |",
        "| all | 4 | 7 | 57.1% | 3 |",
    ]
    assert out.splitlines()[-4:] == [
        "### Left out (2)",
        "",
        "- `cumsum` (`cumsum`, `cumsum.out`): MLX's cumsum stops the process on an empty array",
        "- `_fft_c2r` (`_fft_c2r`): MLX's irfftn takes the output's size",
    ]


@pytest.mark.usefixtures("spec")
def test_a_bad_lowering_spec_is_reported_as_aten_mlx_reports_it(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("- op: abss\n  call: abs(self)\n")
    status, out, err = run("bad.yaml", "--against", "native_functions.yaml")
    assert (status, out) == (1, "")
    assert err == (
        "bad.yaml:1:7: error: the release's spec has no operator 'abss'; did you mean 'abs'?\n"
        "  - op: abss\n"
        "        ^~~~\n"
    )


@pytest.mark.usefixtures("spec")
def test_only_a_lowering_spec_has_several_files_or_no_against(tmp_path: Path) -> None:
    (tmp_path / "ops.txt").write_text("abs\n")
    assert run("ops.txt", "lowering/elementwise.yaml", "--against", "native_functions.yaml") == (
        2,
        "",
        "opgen coverage: error: ops.txt is a list of names, and only a lowering spec's files "
        "are read together: name one SPEC\n",
    )
    assert run("ops.txt") == (
        2,
        "",
        "opgen coverage: error: the following arguments are required: --against\n",
    )


@pytest.mark.skipif(packaged_aten() is None, reason="torchgen is not installed")
def test_the_example_lowering_covers_torchs_core_operators() -> None:
    """examples/aten_mlx/lowering against the installed torch's spec (the default): the
    groups by tag, core's 193 overloads, nothing it names outside the spec."""
    status, out, err = run(*EXAMPLE_LOWERING, "--format", "json")
    assert (status, err) == (0, "")
    document = json.loads(out)
    groups = {g["group"]: g for g in document["groups"]}
    assert document["spec"].startswith(f"{len(EXAMPLE_LOWERING)} lowering files in ")
    assert groups["core"]["total"] == 193
    for tag in ("core", "pointwise", "reduction"):
        group = groups[tag]
        assert 0 < group["implemented"] <= group["total"]
        counted = group["implemented"] + len(group["missing"]) + len(group["left_out"])
        assert counted == group["total"]
    assert "add.Tensor" not in groups["core"]["missing"]
    assert document["extra"] == []
    assert all(out["reason"] and out["overloads"] for out in document["left_out"])
