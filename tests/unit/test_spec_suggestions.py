"""Mistakes in PyTorch's spec language and the library dialect: each error says what was
probably meant, points at it, and comes with the other independent errors of the run."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from opgen.cli import main

TAGS = "- tag: pointwise\n  desc: Elementwise.\n- tag: core\n  desc: Core ATen.\n"


def check(directory: Path, spec: str, *flags: str, derivatives: str | None = None) -> str:
    """`opgen check` on `spec` (with a tags file unless `--library`); its stderr."""
    native = directory / "native_functions.yaml"
    native.write_text(textwrap.dedent(spec).lstrip("\n"), encoding="utf-8")
    if "--library" not in flags:
        (directory / "tags.yaml").write_text(TAGS, encoding="utf-8")
    if derivatives is not None:
        text = textwrap.dedent(derivatives).lstrip("\n")
        (directory / "derivatives.yaml").write_text(text, encoding="utf-8")
    err = io.StringIO()
    status = main(["check", *flags, "--torch-version", "2.13", str(native)], io.StringIO(), err)
    assert status == (1 if "error:" in err.getvalue() else 0)
    return err.getvalue().replace(f"{directory}/", "")


@pytest.mark.parametrize("flags", [(), ("--library",)])
def test_a_misspelt_type_key_and_dispatch_key_are_each_named(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    ns = "toy::" if flags else ""
    err = check(
        tmp_path,
        f"""
        - func: {ns}a(Tensor x, flaot beta) -> Tensor
          dispatch:
            CPU: a_cpu

        - func: {ns}b(Tensor x) -> Tensor
          dispatch:
            CPUU: b_cpu
        """,
        *flags,
    )
    col = 21 + len(ns)
    assert err == (
        f"native_functions.yaml:1:{col}: error: unknown type 'flaot'; did you mean 'float'?\n"
        f"  - func: {ns}a(Tensor x, flaot beta) -> Tensor\n"
        f"  {' ' * (col - 1)}^~~~~\n"
        "native_functions.yaml:7:5: error: unknown dispatch key 'CPUU'; did you mean 'CPU'?\n"
        "      CPUU: b_cpu\n"
        "      ^~~~\n"
    )


def test_an_unknown_key_is_reported_once_with_the_lines_of_its_repeats(tmp_path: Path) -> None:
    entries = "".join(
        f"- func: {name}(Tensor x) -> Tensor\n  dispach:\n    CPU: {name}_cpu\n"
        for name in ("a", "b", "c")
    )
    assert check(tmp_path, entries) == (
        "native_functions.yaml:2:3: error: unknown key 'dispach' in operator entry; "
        "did you mean 'dispatch'?\n"
        "    dispach:\n"
        "    ^~~~~~~\n"
        "native_functions.yaml:5:3: note: the same error is on lines 5, 8\n"
        "    dispach:\n"
        "    ^~~~~~~\n"
    )


def test_a_dispatch_key_at_entry_level_belongs_under_dispatch(tmp_path: Path) -> None:
    err = check(tmp_path, "- func: toy::a(Tensor x) -> Tensor\n  CPU: a_cpu\n", "--library")
    assert err == (
        "native_functions.yaml:2:3: error: unknown key 'CPU' in operator entry: a dispatch key "
        "goes under 'dispatch:', indented below it\n"
        "    CPU: a_cpu\n"
        "    ^~~\n"
    )


def test_unknown_tags_suggest_the_nearest(tmp_path: Path) -> None:
    spec = "- func: a(Tensor x) -> Tensor\n  dispatch:\n    CPU: a_cpu\n  tags: pointwize\n"
    assert check(tmp_path, spec) == (
        "native_functions.yaml:4:9: error: unknown tag 'pointwize' (not in the tags file); "
        "did you mean 'pointwise'?\n"
        "    tags: pointwize\n"
        "          ^~~~~~~~~\n"
    )


def test_a_library_knows_the_tags_of_its_torch_without_a_tags_file(tmp_path: Path) -> None:
    spec = """
        - func: toy::a(Tensor x) -> Tensor
          dispatch:
            CPU: a_cpu
            Meta: a_meta
          tags: [pt2_compliant_tag, pointwise, core]

        - func: toy::b(Tensor x) -> Tensor
          dispatch:
            CPU: b_cpu
            Meta: b_meta
          tags: [pt2_compliant]
        """
    assert check(tmp_path, spec, "--library") == (
        "native_functions.yaml:11:10: error: unknown tag 'pt2_compliant' (torch 2.13 has no such "
        "at::Tag, and no tags file adds it); did you mean 'pt2_compliant_tag'?\n"
        "    tags: [pt2_compliant]\n"
        "           ^~~~~~~~~~~~~\n"
    )


def test_a_tags_file_adds_to_torchs_tags(tmp_path: Path) -> None:
    (tmp_path / "tags.yaml").write_text("- tag: future_tag\n  desc: A newer torch's.\n")
    spec = """
        - func: toy::a(Tensor x) -> Tensor
          dispatch:
            CPU: a_cpu
            Meta: a_meta
          tags: [pt2_compliant_tag, future_tag]
        """
    assert check(tmp_path, spec, "--library") == ""


def test_tags_are_those_of_the_release(tmp_path: Path) -> None:
    """`inplace` and `out` are at::Tags from torch 2.13 on."""
    spec = "- func: toy::a(Tensor x) -> Tensor\n  dispatch:\n    CPU: a_cpu\n    Meta: a_meta\n"
    tagged = spec + "  tags: out_variant\n"
    assert check(tmp_path, tagged, "--library") == ""
    native = tmp_path / "native_functions.yaml"
    native.write_text(spec + "  tags: inplace\n")
    err = io.StringIO()
    assert main(["check", "--library", "--torch-version", "2.12", str(native)], err=err) == 1
    assert "unknown tag 'inplace' (torch 2.12 has no such at::Tag" in err.getvalue()


def test_a_library_namespace_hint_uses_the_libraries_namespace(tmp_path: Path) -> None:
    spec = """
        - func: toy::a(Tensor x) -> Tensor
          dispatch:
            CompositeExplicitAutograd: a

        - func: b(Tensor x) -> Tensor
          dispatch:
            CompositeExplicitAutograd: b
        """
    assert check(tmp_path, spec, "--library") == (
        "native_functions.yaml:5:9: error: a library operator needs its namespace, as in "
        "'toy::b'\n"
        "  - func: b(Tensor x) -> Tensor\n"
        "          ^~~~~~~~~~~~~~~~~~~~~\n"
    )


def test_unknown_keys_come_with_the_entrys_other_errors(tmp_path: Path) -> None:
    """A misspelt `dispatch:` does not also report a missing kernel; a bad type does show."""
    spec = """
        - func: toy::a(Tensor x, flaot y) -> Tensor
          dispach:
            CPU: a_cpu
          doc: A.
        """
    assert check(tmp_path, spec, "--library") == (
        "native_functions.yaml:1:26: error: unknown type 'flaot'; did you mean 'float'?\n"
        "  - func: toy::a(Tensor x, flaot y) -> Tensor\n"
        "                           ^~~~~\n"
        "native_functions.yaml:2:3: error: unknown key 'dispach' in operator entry; "
        "did you mean 'dispatch'?\n"
        "    dispach:\n"
        "    ^~~~~~~\n"
    )


def test_an_unknown_library_key_lists_the_dialects_keys(tmp_path: Path) -> None:
    spec = "- func: toy::a(Tensor x) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd: a\n"
    err = check(tmp_path, spec + "  zzz: 1\n", "--library")
    assert err.splitlines()[0] == (
        "native_functions.yaml:4:3: error: unknown key 'zzz' in operator entry; expected one of "
        "cpp_no_default_args, device_guard, dispatch, doc, fake, func, python_dispatch, tags, "
        "use_const_ref_for_mutable_tensors"
    )


LERP = """
    - func: toy::lerp3(Tensor x, Tensor y, float beta) -> Tensor
      dispatch:
        {key}: lerp3
    """


@pytest.mark.parametrize(
    ("key", "formula", "col"),
    [
        ("CompositeExplicitAutograd", "grad * (1 - betta)", 18),  # C++
        ("CompositeExplicitAutograd", "betta * grad.sum(-1, true)", 6),
        ("Meta", "grad * (1 - betta)", 18),
    ],
)
def test_a_formula_reading_an_unknown_name_is_an_error(
    tmp_path: Path, key: str, formula: str, col: int
) -> None:
    err = check(
        tmp_path,
        LERP.format(key=key),
        "--library",
        derivatives=f"- name: toy::lerp3(Tensor x, Tensor y, float beta) -> Tensor\n"
        f"  x: {formula}\n  y: grad * beta\n",
    )
    assert err.startswith(
        f"derivatives.yaml:2:{col}: error: 'betta' is not an input of 'lerp3', nor grad, grads, "
        "an output or grad_input_mask; did you mean 'beta'?\n"
        f"    x: {formula}\n"
        f"  {' ' * (col - 1)}^~~~~\n"
    )


def test_python_formulas_are_checked_as_python(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text("def lerp3(x, y, beta):\n    return x\n")
    spec = """
        - func: toy::lerp3(Tensor x, Tensor y, float beta) -> Tensor
          python_dispatch:
            CompositeExplicitAutograd: kernels:lerp3
        """
    derivatives = """
        - name: toy::lerp3(Tensor x, Tensor y, float beta) -> Tensor
          x: grad * (1 - beta) + sum(g for g in [grad]) * 0
          y: grad * torch.tensor(bta)
        """
    assert check(tmp_path, spec, "--library", derivatives=derivatives) == (
        "derivatives.yaml:3:26: error: 'bta' is not an input of 'lerp3', nor grad, grads, an "
        "output or grad_input_mask; did you mean 'beta'?\n"
        "    y: grad * torch.tensor(bta)\n"
        "                           ^~~\n"
    )


def test_cpp_formulas_may_use_types_constants_members_and_calls(tmp_path: Path) -> None:
    derivatives = """
        - name: toy::lerp3(Tensor x, Tensor y, float beta) -> Tensor
          x: "at::where(x > 0, grad, zeros_like(grad)).to(kFloat) * static_cast<double>(beta)"
          y: grad.sum(std::vector<int64_t>{0}) * Scalar(beta) * M_PI + result.sym_sizes()[0]
        """
    err = check(tmp_path, LERP.format(key="CPU"), "--library", derivatives=derivatives)
    assert "error" not in err


def test_a_misspelt_python_kernel_suggests_the_modules_function(tmp_path: Path) -> None:
    (tmp_path / "kern.py").write_text("def lerp3_fake(x):\n    return x\n")
    spec = """
        - func: toy::lerp3(Tensor x) -> Tensor
          dispatch:
            CPU: lerp3_cpu
          fake: kern:lerp3_fak
          python_dispatch:
            CUDA: kern:lerp3_cpu
        """
    assert check(tmp_path, spec, "--library") == (  # a kernel's sibling is not suggested
        "native_functions.yaml:6:11: error: Python function 'kern:lerp3_cpu' does not resolve: "
        "module 'kern' defines no 'lerp3_cpu'\n"
        "      CUDA: kern:lerp3_cpu\n"
        "            ^~~~~~~~~~~~~~\n"
        "native_functions.yaml:4:9: error: Python function 'kern:lerp3_fak' does not resolve: "
        "module 'kern' defines no 'lerp3_fak'; did you mean 'lerp3_fake'?\n"
        "    fake: kern:lerp3_fak\n"
        "          ^~~~~~~~~~~~~~\n"
    )
