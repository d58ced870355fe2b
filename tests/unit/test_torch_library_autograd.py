"""`opgen torch-library`'s C++ Autograd kernels, exact text: the fast path below autograd,
formulas behind `#line` directives, and the headers formulas include."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

from opgen.cli import main

SPEC = """
- func: lib::mul(Tensor x, Tensor? y=None, float alpha=1.0) -> Tensor
  dispatch:
    CPU: mul_cpu
    Meta: mul_meta
"""
DERIVATIVES = """\
- include: lib/grad_helpers.h
- include: <vector>
- include: lib/grad_helpers.h
- name: lib::mul(Tensor x, Tensor? y=None, float alpha=1.0) -> Tensor
  x: grad * alpha
  y: |
    lib::grad_y(grad,
                x)
"""


def generated(tmp_path: Path) -> tuple[str, str]:
    """The generated src/lib_library.cpp, and the name its `#line`s give it."""
    (tmp_path / "native_functions.yaml").write_text(textwrap.dedent(SPEC), encoding="utf-8")
    (tmp_path / "derivatives.yaml").write_text(DERIVATIVES, encoding="utf-8")
    native, out = str(tmp_path / "native_functions.yaml"), str(tmp_path / "out")
    assert main(["torch-library", native, "-o", out], io.StringIO(), io.StringIO()) == 0
    source = tmp_path / "out" / "src" / "lib_library.cpp"
    return source.read_text(), f"{out}/src/lib_library.cpp"


def test_the_kernel_redispatches_below_autograd_when_nothing_needs_it(tmp_path: Path) -> None:
    """No input requires grad (or grad mode is off) and none has a forward-mode tangent: the
    operator runs below autograd, without the Function's node and context."""
    text, _ = generated(tmp_path)
    assert (
        "inline bool needs_autograd(const at::Tensor& t) {\n"
        "  return t.defined() &&\n"
        "      ((t.requires_grad() && at::GradMode::is_enabled()) || "
        "t._fw_grad(/*level=*/0).defined());\n"
        "}\n\n"
        "inline bool needs_autograd(const std::optional<at::Tensor>& t) {\n"
        "  return t.has_value() && needs_autograd(*t);\n"
        "}\n"
    ) in text
    assert (
        "at::Tensor autograd_mul(c10::DispatchKeySet dispatchKeySet, const at::Tensor & x, "
        "const ::std::optional<at::Tensor> & y, double alpha) {\n"
        "  if (!needs_autograd(x) && !needs_autograd(y)) {\n"
        "    static auto op = c10::Dispatcher::singleton()\n"
        '        .findSchemaOrThrow("lib::mul", "")\n'
        "        .typed<at::Tensor (const at::Tensor &, const ::std::optional<at::Tensor> &, "
        "double)>();\n"
        "    at::AutoDispatchBelowADInplaceOrView guard;\n"
        "    return op.redispatch(dispatchKeySet & c10::after_autograd_keyset, x, y, alpha);\n"
        "  }\n"
        "  return MulFunction::apply(x, y, alpha);\n"
        "}\n"
    ) in text


def test_formulas_stand_at_their_place_in_derivatives_yaml(tmp_path: Path) -> None:
    """A one-line formula at its line and column; a block scalar from the line after its
    `|`; after each, a `#line` back to the generated file's own numbering."""
    text, source = generated(tmp_path)
    yaml = f"{tmp_path}/derivatives.yaml"
    lines = text.split("\n")
    x = lines.index("      grad_inputs[0] =")
    assert lines[x : x + 4] == [
        "      grad_inputs[0] =",
        f'#line 5 "{yaml}"',
        "     grad * alpha;",  # at column 6, as in `  x: grad * alpha`
        f'#line {x + 5} "{source}"',  # the line after the directive is line x + 5
    ]
    y = lines.index("      grad_inputs[1] =")
    assert lines[y : y + 5] == [
        "      grad_inputs[1] =",
        f'#line 7 "{yaml}"',
        "lib::grad_y(grad,",
        "            x);",
        f'#line {y + 6} "{source}"',
    ]


def test_formula_headers_are_included_once_each(tmp_path: Path) -> None:
    text, _ = generated(tmp_path)
    assert (
        "#include <torch/library.h>\n"
        "#include <torch/autograd.h>\n"
        '#include "lib/grad_helpers.h"\n'
        "#include <vector>\n"
        "\n"
        '#include "lib/kernels.h"\n'
    ) in text
