"""`opgen torch-library` and `opgen check --library`: bad library input, exact diagnostics."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from opgen.cli import main


def write(directory: Path, name: str, text: str) -> str:
    path = directory / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return str(path)


def check(directory: Path, spec: str, derivatives: str | None = None) -> tuple[int, str, str]:
    native = write(directory, "native_functions.yaml", spec)
    if derivatives is not None:
        write(directory, "derivatives.yaml", derivatives)
    out, err = io.StringIO(), io.StringIO()
    status = main(["check", "--library", native], out=out, err=err)
    return status, out.getvalue(), err.getvalue().replace(str(directory) + "/", "")


def test_a_good_library_checks(tmp_path: Path) -> None:
    write(tmp_path, "kernels.py", "def relu_fake(x):\n    return x.new_empty(x.shape)\n")
    status, out, err = check(
        tmp_path,
        """
        - func: lib::relu(Tensor x) -> Tensor
          dispatch:
            CPU: relu_cpu
          fake: kernels:relu_fake
        """,
        """
        - name: lib::relu(Tensor x) -> Tensor
          x: grad * (x > 0)
        """,
    )
    assert (status, err) == (0, "")
    assert out.endswith("ok: lib: 1 operator, 1 with gradient formulas (C++ and Python)\n")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            "- func: lib::relu(Tensor x) -> Tensor\n",
            "native_functions.yaml:1:9: error: operator 'relu' has no kernel: give it a "
            "'dispatch' table of C++ kernels or a 'python_dispatch' table of Python kernels\n"
            "  - func: lib::relu(Tensor x) -> Tensor\n"
            "          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n",
        ),
        (
            "- func: relu(Tensor x) -> Tensor\n  dispatch:\n    CPU: relu_cpu\n",
            "native_functions.yaml:1:9: error: a library operator needs its namespace, as in "
            "'mylib::relu'\n"
            "  - func: relu(Tensor x) -> Tensor\n"
            "          ^~~~~~~~~~~~~~~~~~~~~~~~\n",
        ),
        (
            "- func: lib::relu(Tensor x) -> Tensor\n  structured: True\n  dispatch:\n"
            "    CPU: relu_cpu\n",
            "native_functions.yaml:2:3: error: 'structured' is not allowed in a library spec: "
            "it drives ATen's own code generation\n"
            "    structured: True\n"
            "    ^~~~~~~~~~\n",
        ),
        (
            "- func: lib::relu(Tensor x) -> Tensor\n  dispatch:\n    MPS: relu_mps\n",
            "native_functions.yaml:3:5: error: dispatch key 'MPS' cannot have kernels in a "
            "library spec (one of CPU, CUDA, Meta, CompositeImplicitAutograd, "
            "CompositeExplicitAutograd, Autograd)\n"
            "      MPS: relu_mps\n"
            "      ^~~\n",
        ),
        (
            "- func: lib::relu_(Tensor(a!) x) -> Tensor(a!)\n  dispatch:\n    CPU: relu_\n",
            "native_functions.yaml:1:37: error: a custom operator cannot return an alias of an "
            "input ('Tensor(a!)'): torch.compile cannot functionalize it; an operator that "
            "mutates its arguments returns nothing ('-> ()')\n"
            "  - func: lib::relu_(Tensor(a!) x) -> Tensor(a!)\n"
            "                                      ^~~~~~~~~~\n",
        ),
        (
            "- func: lib::relu(Tensor x) -> Tensor\n  dispatch:\n    CPU: relu_cpu\n"
            "  python_dispatch:\n    CPU: kernels:relu\n",
            "native_functions.yaml:5:5: error: dispatch key 'CPU' has more than one kernel\n"
            "      CPU: kernels:relu\n"
            "      ^~~\n",
        ),
        (
            "- func: lib::relu(Tensor x) -> Tensor\n  python_dispatch:\n    CPU: kernels.relu\n",
            "native_functions.yaml:3:10: error: a Python kernel must be 'module.path:function', "
            "not 'kernels.relu'\n"
            "      CPU: kernels.relu\n"
            "           ^~~~~~~~~~~~\n",
        ),
        (  # a factory: the dispatcher picks a backend by the tensors' devices, or `device`
            "- func: lib::ones(int n) -> Tensor\n  dispatch:\n    CPU: ones_cpu\n"
            "    Meta: ones_meta\n",
            "native_functions.yaml:1:9: error: 'lib::ones' has no tensor or device argument, so "
            "no call reaches its CPU and Meta kernels: register its kernel as "
            "CompositeExplicitAutograd, or add an argument 'Device? device=None' to choose the "
            "backend by\n"
            "  - func: lib::ones(int n) -> Tensor\n"
            "          ^~~~~~~~~~~~~~~~~~~~~~~~~~\n",
        ),
        (  # named outputs are the fields of the Python function's NamedTuple
            "- func: lib::pair(Tensor x) -> (Tensor from, Tensor to)\n  dispatch:\n"
            "    CompositeExplicitAutograd: pair\n",
            "native_functions.yaml:1:9: error: 'pair': output name 'from' cannot name a field of "
            "the Python result (a NamedTuple); rename the output\n"
            "  - func: lib::pair(Tensor x) -> (Tensor from, Tensor to)\n"
            "          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n",
        ),
    ],
)
def test_bad_library_entries(tmp_path: Path, spec: str, expected: str) -> None:
    status, _, err = check(tmp_path, spec)
    assert (status, err) == (1, expected)


def test_python_kernels_must_resolve(tmp_path: Path) -> None:
    write(tmp_path, "kernels.py", "import torch\n\ndef relu_cpu(x):\n    return x.relu()\n")
    status, _, err = check(
        tmp_path,
        """
        - func: lib::relu(Tensor x) -> Tensor
          python_dispatch:
            CPU: kernels:relu_cpu
            CUDA: kernels:relu_cuda
          fake: fakes:relu
        """,
    )
    assert status == 1
    assert err == (
        "native_functions.yaml:4:11: error: Python function 'kernels:relu_cuda' does not "
        "resolve: module 'kernels' defines no 'relu_cuda'\n"
        "      CUDA: kernels:relu_cuda\n"
        "            ^~~~~~~~~~~~~~~~~\n"
        "native_functions.yaml:5:9: error: Python function 'fakes:relu' does not resolve: "
        f"no module 'fakes' under {tmp_path} (set the Python path with --python-path)\n"
        "    fake: fakes:relu\n"
        "          ^~~~~~~~~~\n"
    )


SPEC = """
- func: lib::mul(Tensor x, Tensor y, float alpha=1.0) -> Tensor
  dispatch:
    CPU: mul_cpu
    Meta: mul_meta
"""


@pytest.mark.parametrize(
    ("derivatives", "expected"),
    [
        (
            "- name: lib::div(Tensor x, Tensor y) -> Tensor\n  x: grad / y\n",
            "derivatives.yaml:1:9: error: derivatives entry for 'div', which is not in the spec\n"
            "  - name: lib::div(Tensor x, Tensor y) -> Tensor\n"
            "          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n",
        ),
        (
            "- name: lib::mul(Tensor x, Tensor z, float alpha=1.0) -> Tensor\n  x: grad\n",
            "derivatives.yaml:1:28: error: derivatives entry for 'mul' does not match its schema: "
            "expected 'mul(Tensor x, Tensor y, float alpha=1.0) -> Tensor'\n"
            "  - name: lib::mul(Tensor x, Tensor z, float alpha=1.0) -> Tensor\n"
            "                             ^~~~~~~~\n",
        ),
        (  # defaults are part of the schema: the formulas see the spec's
            "- name: mul(Tensor x, Tensor y, float alpha=2.0) -> Tensor\n  x: grad\n",
            "derivatives.yaml:1:33: error: derivatives entry for 'mul' does not match its schema: "
            "expected 'mul(Tensor x, Tensor y, float alpha=1.0) -> Tensor'\n"
            "  - name: mul(Tensor x, Tensor y, float alpha=2.0) -> Tensor\n"
            "                                  ^~~~~~~~~~~~~~~\n",
        ),
        (
            "- name: lib::mul(Tensor x, *, Tensor y, float alpha=1.0) -> Tensor\n  x: grad\n",
            "derivatives.yaml:1:31: error: derivatives entry for 'mul' does not match its schema: "
            "expected 'mul(Tensor x, Tensor y, float alpha=1.0) -> Tensor'\n"
            "  - name: lib::mul(Tensor x, *, Tensor y, float alpha=1.0) -> Tensor\n"
            "                                ^~~~~~~~\n",
        ),
        (
            "- name: lib::mul(Tensor x, Tensor y, float alpha=1.0) -> Tensor\n  x, z: grad * y\n",
            "derivatives.yaml:2:6: error: 'mul' has no input named 'z'\n"
            "    x, z: grad * y\n"
            "       ^\n",
        ),
        (
            "- name: lib::mul(Tensor x, Tensor y, float alpha=1.0) -> Tensor\n"
            "  alpha: grad.sum()\n",
            "derivatives.yaml:2:3: error: 'alpha' is not a tensor input of 'mul': it has no "
            "gradient\n"
            "    alpha: grad.sum()\n"
            "    ^~~~~\n",
        ),
        (
            "- name: lib::mul(Tensor x, Tensor y, float alpha=1.0) -> Tensor\n  result: x * y\n",
            "derivatives.yaml:2:3: error: forward-mode derivatives ('result:' formulas) are not "
            "supported; give each input's gradient\n"
            "    result: x * y\n"
            "    ^~~~~~\n",
        ),
        (
            "- name: lib::mul(Tensor x, Tensor y, float alpha=1.0) -> Tensor\n  x: grads[1] * y\n",
            "derivatives.yaml:2:6: error: 'grads[1]' is out of range: 'mul' has 1 output(s)\n"
            "    x: grads[1] * y\n"
            "       ^~~~~~~~~~~~\n",
        ),
    ],
)
def test_bad_derivatives(tmp_path: Path, derivatives: str, expected: str) -> None:
    status, _, err = check(tmp_path, SPEC, derivatives)
    assert (status, err) == (1, expected)


def test_an_autograd_kernel_and_formulas_conflict(tmp_path: Path) -> None:
    status, _, err = check(
        tmp_path,
        SPEC + "    Autograd: mul_autograd\n",
        "- name: lib::mul(Tensor x, Tensor y, float alpha=1.0) -> Tensor\n  x: grad * y\n",
    )
    assert status == 1
    assert err.startswith(
        "derivatives.yaml:1:9: error: 'lib::mul' has an Autograd kernel in its dispatch table "
        "and gradient formulas; keep one of them\n"
    )


def test_plain_check_points_at_the_library_flag(tmp_path: Path) -> None:
    native = write(
        tmp_path, "native_functions.yaml", "- func: relu(Tensor x) -> Tensor\n  doc: hi\n"
    )
    err = io.StringIO()
    assert main(["check", native], out=io.StringIO(), err=err) == 1
    assert err.getvalue() == (
        f"{native}:2:3: error: this is a library spec ('doc:' is a key of library specs); "
        "read it with `opgen check --library`\n"
        "    doc: hi\n"
        "    ^~~\n"
    )


def test_missing_fake_kernel_is_a_warning(tmp_path: Path) -> None:
    """Not for operators that mutate arguments and return nothing: PyTorch derives theirs."""
    status, _, err = check(
        tmp_path,
        """
        - func: lib::relu(Tensor x) -> Tensor
          dispatch:
            CPU: relu_cpu
        - func: lib::relu_(Tensor(a!) self) -> ()
          dispatch:
            CPU: relu_
        - func: lib::relu.out(Tensor x, *, Tensor(a!) out) -> ()
          dispatch:
            CPU: relu_out
        """,
    )
    assert status == 0
    assert err == (
        "native_functions.yaml:1:9: warning: 'lib::relu' has no fake kernel (a Meta kernel or "
        "'fake:'), so torch.compile and opcheck cannot trace it\n"
        "  - func: lib::relu(Tensor x) -> Tensor\n"
        "          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
    )


def test_formulas_need_tensor_outputs(tmp_path: Path) -> None:
    status, _, err = check(
        tmp_path,
        "- func: lib::norms(Tensor x) -> Tensor[]\n  dispatch:\n    CPU: norms\n    Meta: norms\n",
        "- name: lib::norms(Tensor x) -> Tensor[]\n  x: grads[0]\n",
    )
    assert status == 1
    assert err.startswith(
        "derivatives.yaml:1:9: error: gradient formulas are supported on operators that return "
        "tensors only, and 'lib::norms' returns 'Tensor[]'\n"
    )
