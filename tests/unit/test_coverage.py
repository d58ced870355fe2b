"""`opgen coverage SPEC --against OTHER`: small operator sets in, exact tables out."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from opgen.cli import main

REFERENCE = """\
- func: abs(Tensor self) -> Tensor
  dispatch:
    CPU: abs_cpu
  tags: [core, pointwise]
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  dispatch:
    CPU: add_cpu
  tags: [core, pointwise]
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  dispatch:
    CPU: mul_cpu
  tags: pointwise
- func: sum(Tensor self) -> Tensor
  dispatch:
    CPU: sum_cpu
  tags: core
"""
TAGS = """\
- tag: core
  desc: the core operators
- tag: pointwise
  desc: elementwise
"""
BACKEND = """\
backend: XLA
cpp_namespace: torch_xla
supported:
- abs
- mul.Tensor
autograd:
- sum
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(["coverage", *argv], out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "native_functions.yaml").write_text(REFERENCE)
    (tmp_path / "tags.yaml").write_text(TAGS)
    (tmp_path / "backend.yaml").write_text(BACKEND)
    (tmp_path / "tier1.txt").write_text("# the first tier\nabs\naten::add.Tensor  # binary\n")
    monkeypatch.chdir(tmp_path)


def test_a_backend_against_a_spec_by_tag_and_tier() -> None:
    status, out, err = run(
        "backend.yaml", "--against", "native_functions.yaml", "--tier", "tier1.txt"
    )
    assert (status, err) == (0, "")
    assert out == (
        "coverage of native_functions.yaml by backend.yaml\n"
        "  group       implemented   total  percent\n"
        "  all                   3       4    75.0%\n"
        "  tier tier1            1       2    50.0%\n"
        "  core                  2       3    66.7%\n"
        "  pointwise             2       3    66.7%\n"
        "missing in all (1): add.Tensor\n"
        "missing in tier tier1 (1): add.Tensor\n"
        "missing in core (1): add.Tensor\n"
        "missing in pointwise (1): add.Tensor\n"
    )


def test_markdown() -> None:
    status, out, _ = run("tier1.txt", "--against", "native_functions.yaml", "--format", "markdown")
    assert status == 0
    assert out == (
        "## Coverage of `native_functions.yaml` by `tier1.txt`\n"
        "\n"
        "| group | implemented | total | percent |\n"
        "| --- | ---: | ---: | ---: |\n"
        "| all | 2 | 4 | 50.0% |\n"
        "| core | 2 | 3 | 66.7% |\n"
        "| pointwise | 2 | 3 | 66.7% |\n"
        "\n"
        "### Missing in all (2)\n"
        "\n"
        "`mul.Tensor`, `sum`\n"
        "\n"
        "### Missing in core (1)\n"
        "\n"
        "`sum`\n"
        "\n"
        "### Missing in pointwise (1)\n"
        "\n"
        "`mul.Tensor`\n"
    )


def test_json_and_names_the_reference_lacks(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("abs\nrelu\n")
    status, out, _ = run("mine.txt", "--against", "backend.yaml", "--format", "json",
                         "--source-spec", "native_functions.yaml")  # fmt: skip
    assert status == 0
    assert json.loads(out) == {
        "spec": "mine.txt",
        "against": "backend.yaml",
        "groups": [
            {
                "group": "all",
                "kind": "all",
                "implemented": 1,
                "total": 3,
                "percent": 33.33,
                "missing": ["mul.Tensor", "sum"],
            }
        ],
        "extra": ["relu"],
    }


# Eight operators, seven pointwise, three core: more missing than text names by default.
WIDE = """\
- func: abs(Tensor self) -> Tensor
  tags: [core, pointwise]
- func: neg(Tensor self) -> Tensor
  tags: [core, pointwise]
- func: exp(Tensor self) -> Tensor
  tags: pointwise
- func: log(Tensor self) -> Tensor
  tags: pointwise
- func: sin(Tensor self) -> Tensor
  tags: pointwise
- func: cos(Tensor self) -> Tensor
  tags: pointwise
- func: tan(Tensor self) -> Tensor
  tags: pointwise
- func: sum(Tensor self) -> Tensor
  tags: core
"""
WIDE_TABLE = """\
coverage of wide.yaml by mine.txt
  group      implemented   total  percent
  all                  1       8    12.5%
  core                 1       3    33.3%
  pointwise            1       7    14.3%
"""


@pytest.fixture
def wide(tmp_path: Path) -> None:
    (tmp_path / "wide.yaml").write_text(WIDE)
    (tmp_path / "mine.txt").write_text("abs\nrelu6\n")


def test_text_names_the_first_five_missing_of_each_group(wide: None) -> None:
    assert run("mine.txt", "--against", "wide.yaml") == (
        0,
        WIDE_TABLE
        + """\
missing in all (7): neg, exp, log, sin, cos ... and 2 more
missing in core (2): neg, sum
missing in pointwise (6): neg, exp, log, sin, cos ... and 1 more
not in wide.yaml (1): relu6
for the full lists: --all, or --format markdown or --format json
""",
        "",
    )


def test_all_lists_every_missing_operator_one_per_line(wide: None) -> None:
    assert run("mine.txt", "--against", "wide.yaml", "--all") == (
        0,
        WIDE_TABLE
        + """\
missing in all (7):
  neg
  exp
  log
  sin
  cos
  tan
  sum
missing in core (2):
  neg
  sum
missing in pointwise (6):
  neg
  exp
  log
  sin
  cos
  tan
not in wide.yaml (1):
  relu6
""",
        "",
    )


def test_markdown_and_json_list_everything_with_or_without_all(wide: None) -> None:
    markdown = run("mine.txt", "--against", "wide.yaml", "--format", "markdown")
    assert "\n`neg`, `exp`, `log`, `sin`, `cos`, `tan`, `sum`\n" in markdown[1]
    document = run("mine.txt", "--against", "wide.yaml", "--format", "json")
    assert json.loads(document[1])["groups"][0]["missing"] == [
        "neg", "exp", "log", "sin", "cos", "tan", "sum",
    ]  # fmt: skip
    for form, every in (("markdown", markdown), ("json", document)):
        assert run("mine.txt", "--against", "wide.yaml", "--format", form, "--all") == every


def test_a_tier_operator_the_reference_lacks_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "tier2.txt").write_text("abs\nabz\n")
    status, _, err = run(
        "backend.yaml", "--against", "native_functions.yaml", "--tier", "tier2.txt"
    )
    assert status == 0
    assert err == (
        "tier2.txt:2:1: warning: 'abz' is not an operator of native_functions.yaml\n  abz\n  ^~~\n"
    )


def test_a_bad_name_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("abs\nadd.Tensor.x\n")
    status, out, err = run("mine.txt", "--against", "native_functions.yaml")
    assert (status, out) == (1, "")
    assert err.splitlines()[0] == "mine.txt:2:5: error: invalid overload name 'Tensor.x'"


def test_a_backend_yaml_is_checked_against_the_spec(tmp_path: Path) -> None:
    (tmp_path / "backend.yaml").write_text(BACKEND.replace("- abs\n", "- abz\n"))
    status, _, err = run("backend.yaml", "--against", "native_functions.yaml")
    assert status == 1
    assert err.startswith("backend.yaml:4:3: error: ")
