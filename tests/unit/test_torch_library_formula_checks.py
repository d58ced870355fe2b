"""`opgen check --library`: calls C++ formulas cannot make, and `include:` entries, with
exact diagnostics. Calls opgen cannot decide (ATen's functions, `at::`, `torch::`, anything
once the file includes a header of its own) are left to the compiler."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from opgen.cli import main

SPEC = """
- func: lib::mul(Tensor x, Tensor y) -> Tensor
  dispatch:
    CPU: mul_cpu
    Meta: mul_meta
- func: lib::mul_backward(Tensor grad, Tensor other) -> Tensor
  dispatch:
    CompositeExplicitAutograd: mul_backward
"""
NAME = "- name: lib::mul(Tensor x, Tensor y) -> Tensor\n"


def check(tmp_path: Path, derivatives: str, spec: str = SPEC) -> tuple[int, str]:
    (tmp_path / "native_functions.yaml").write_text(textwrap.dedent(spec), encoding="utf-8")
    (tmp_path / "derivatives.yaml").write_text(derivatives, encoding="utf-8")
    (tmp_path / "kernels.py").write_text("def mul(x, y):\n    return x * y\n", encoding="utf-8")
    err = io.StringIO()
    status = main(
        ["check", "--library", str(tmp_path / "native_functions.yaml")], io.StringIO(), err
    )
    return status, err.getvalue().replace(f"{tmp_path}/", "")


def test_calls_opgen_cannot_decide_pass(tmp_path: Path) -> None:
    formulas = (
        "  x: lib::mul_backward(grad, y) + lib::native::mul_cpu(grad, y).sum_to(x.sizes())\n"
        "  y: at::mul(grad, x) * torch::ones_like(x) + zeros_like(x) + helper(x)\n"
    )
    assert check(tmp_path, NAME + formulas) == (0, "")


@pytest.mark.parametrize(
    ("formula", "expected"),
    [
        (
            "  x: lib::mul_backwards(grad, y)\n",
            "derivatives.yaml:2:6: error: 'lib::mul_backwards' is not declared for formulas: "
            "lib/ops.h declares the operators and lib/kernels.h the kernels; declare a helper "
            "in a header and list it in the derivatives file ('- include: <header>'); did you "
            "mean 'lib::mul_backward'?\n"
            "    x: lib::mul_backwards(grad, y)\n"
            "       ^~~~~~~~~~~~~~~~~~\n",
        ),
        (
            "  x: grad * ::lib::native::grad_x(y)\n",
            "derivatives.yaml:2:13: error: 'lib::native::grad_x' is not declared for formulas: "
            "lib/ops.h declares the operators and lib/kernels.h the kernels; declare a helper "
            "in a header and list it in the derivatives file ('- include: <header>')\n"
            "    x: grad * ::lib::native::grad_x(y)\n"
            "              ^~~~~~~~~~~~~~~~~~~~~\n",
        ),
        (
            "  x: lib::mul_cpu(grad, y)\n",
            "derivatives.yaml:2:6: error: 'lib::mul_cpu' is not declared for formulas: "
            "lib/ops.h declares the operators and lib/kernels.h the kernels; declare a helper "
            "in a header and list it in the derivatives file ('- include: <header>'); did you "
            "mean 'lib::native::mul_cpu'?\n"
            "    x: lib::mul_cpu(grad, y)\n"
            "       ^~~~~~~~~~~~\n",
        ),
        (
            "  x: mul_backward(grad, y)\n",
            "derivatives.yaml:2:6: error: 'mul_backward' is not visible unqualified in a "
            "formula: write 'lib::mul_backward' (or 'at::mul_backward' for ATen's function of "
            "that name)\n"
            "    x: mul_backward(grad, y)\n"
            "       ^~~~~~~~~~~~\n",
        ),
        (
            "  x: grad * mul_cpu(y, y)\n",
            "derivatives.yaml:2:13: error: 'mul_cpu' is not visible unqualified in a formula: "
            "write 'lib::native::mul_cpu' (or 'at::mul_cpu' for ATen's function of that name)\n"
            "    x: grad * mul_cpu(y, y)\n"
            "              ^~~~~~~\n",
        ),
    ],
)
def test_calls_the_generated_code_cannot_reach(tmp_path: Path, formula: str, expected: str) -> None:
    assert check(tmp_path, NAME + formula) == (1, expected)


def test_members_literals_and_comments_are_not_calls(tmp_path: Path) -> None:
    formula = "  x: grad.mul_backward(y) + x->lib::nope(1) * at::scalar_tensor(1) /* lib::a() */\n"
    assert check(tmp_path, NAME + formula)[0] == 0
    assert check(tmp_path, NAME + '  x: grad * c10::str("lib::nope(")\n')[0] == 0


def test_a_header_of_its_own_makes_calls_undecidable(tmp_path: Path) -> None:
    """A header may declare anything anywhere: no call is checked then."""
    derivatives = "- include: lib/grad_helpers.h\n" + NAME + "  x: lib::grad_x(mul_cpu(grad, y))\n"
    assert check(tmp_path, derivatives) == (0, "")


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            '- include: ""\n',
            "derivatives.yaml:1:13: error: 'include' names a C++ header as #include takes it: "
            "'mylib/helpers.h', or '<mylib/helpers.h>' for the system search path\n"
            '  - include: ""\n'
            "              ^\n",
        ),
        (
            "- include: [a.h, b.h]\n",
            "derivatives.yaml:1:12: error: 'include' names a C++ header as #include takes it: "
            "'mylib/helpers.h', or '<mylib/helpers.h>' for the system search path\n"
            "  - include: [a.h, b.h]\n"
            "             ^\n",
        ),
        (
            "- include: a.h\n  x: grad\n",
            "derivatives.yaml:2:3: error: an 'include' entry names a header and nothing else; "
            "'x' belongs in an entry of its own\n"
            "    x: grad\n"
            "    ^\n",
        ),
    ],
)
def test_bad_include_entries(tmp_path: Path, entry: str, expected: str) -> None:
    assert check(tmp_path, entry + NAME + "  x: grad * y\n") == (1, expected)


def test_a_library_without_cpp_includes_no_header(tmp_path: Path) -> None:
    spec = (
        "- func: lib::mul(Tensor x, Tensor y) -> Tensor\n  python_dispatch:\n    CPU: kernels:mul\n"
    )
    status, err = check(tmp_path, "- include: a.h\n" + NAME + "  x: grad * y\n", spec)
    assert (status, err) == (
        1,
        "derivatives.yaml:1:12: error: 'include' names a header for C++ formulas, and this "
        "library has no C++ (its formulas are Python)\n"
        "  - include: a.h\n"
        "             ^~~\n",
    )
