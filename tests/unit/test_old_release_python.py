"""What torch 2.10 to 2.12 generate differently from 2.13: Python bindings and stubs.

Each test renders one small piece for an older release and a newer one and checks
the exact text of both: how a Tensor method taking TensorOptions initializes the
device (`METHOD_DEVICE_INIT_GUARD`), whether the stubs declare `Tensor.has_names`
(`HAS_NAMES_STUB`), how `torch.asarray` hints `requires_grad`
(`OPTIONAL_ASARRAY_REQUIRES_GRAD`), and whether `_nn.pyi` declares Lanczos
interpolation (`LANCZOS_INTERPOLATION_STUB`).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from opgen.api import pyi
from opgen.api.signatures import SignatureSet
from opgen.python_bindings.bound import is_py_variable_method
from opgen.python_bindings.overloads import group_by_name, load_signatures
from opgen.releases import Release
from opgen.spec import Spec
from opgen.targets.pyi import nn_functions, tensor_methods, torch_functions
from opgen.targets.python.method_impl import method_impl

SpecOf = Callable[[str], Spec]

R2_11, R2_12, R2_13 = Release(2, 11), Release(2, 12), Release(2, 13)

NEW_BLANK = """\
- func: new_blank(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
  variants: method
  dispatch:
    CompositeExplicitAutograd: new_blank
"""  # noqa: E501
OPTIONS = (
    "  const auto options = TensorOptions()\n"
    "      .dtype(_r.scalartypeOptional(1))\n"
    "      .device(_r.deviceOptional(3))\n"
    "      .layout(_r.layoutOptional(2))\n"
    "      .requires_grad(_r.toBool(5))\n"
    "      .pinned_memory(_r.toBool(4));\n"
)
LAMBDA = "\n  auto dispatch_new_blank = "


def method_binding(spec: Spec, release: Release) -> str:
    signatures = SignatureSet()
    pairs = load_signatures(spec.functions, (), signatures, method=True)
    ((name, overloads),) = group_by_name(pairs, is_py_variable_method).items()
    return method_impl(name, None, overloads, signatures, method=True, release=release)


@pytest.mark.parametrize(
    ("release", "initialize"),
    [
        (R2_12, "  torch::utils::maybe_initialize_device(options);\n"),
        (
            R2_13,
            "  if (!at::impl::tensor_has_dispatch(self)) {\n"
            "    torch::utils::maybe_initialize_device(options);\n"
            "  }\n",
        ),
    ],
)
def test_a_method_initializes_the_device_unguarded_before_2_13(
    spec_of: SpecOf, release: Release, initialize: str
) -> None:
    text = method_binding(spec_of(NEW_BLANK), release)
    assert text.split(OPTIONS, 1)[1].split(LAMBDA, 1)[0] == initialize


def test_the_stubs_declare_has_names_before_2_13() -> None:
    def has_names(release: Release) -> list[str]:
        declared = tensor_methods.tensor_methods(pyi.hints_for(release))
        return [d.stub().text for key, d in declared if key == "has_names"]

    assert has_names(R2_12) == ["def has_names(self) -> _bool: ..."]
    assert has_names(R2_13) == []


@pytest.mark.parametrize(
    ("release", "requires_grad"),
    [(R2_11, "requires_grad: _bool = False"), (R2_12, "requires_grad: _bool | None = None")],
)
def test_asarray_takes_an_optional_requires_grad_from_2_12(
    release: Release, requires_grad: str
) -> None:
    declared = torch_functions.declarations(pyi.hints_for(release))
    assert [d.stub().text for d in declared if d.name == "asarray"] == [
        "def asarray(\n"
        "    obj: Any,\n"
        "    *,\n"
        "    dtype: _dtype | None = None,\n"
        "    device: DeviceLikeType | None = None,\n"
        "    copy: _bool | None = None,\n"
        f"    {requires_grad},\n"
        ") -> Tensor: ..."
    ]


def test_nn_stubs_declare_lanczos_interpolation_from_2_12() -> None:
    def aa(release: Release) -> list[str]:
        interpolate = nn_functions.sections(pyi.hints_for(release))[-1]
        return [d.stub().text for d in interpolate.definitions if d.name.endswith("_aa")]

    bilinear, bicubic = (
        f"def _upsample_{kind}2d_aa(\n"
        "    input: Tensor,\n"
        "    output_size: Sequence[int] | None,\n"
        "    align_corners: bool,\n"
        "    scale_factors: Sequence[float] | None,\n"
        ") -> Tensor: ..."
        for kind in ("bilinear", "bicubic")
    )
    assert aa(R2_11) == [bilinear, bicubic]
    assert aa(R2_12) == [bilinear, bicubic, bicubic.replace("bicubic", "lanczos")]
