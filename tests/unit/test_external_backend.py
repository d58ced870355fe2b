"""A backend YAML read against a part of the spec (`read_external_backend`'s `elsewhere`).

`opgen backend` and `opgen lazy` read the spec in parts of whole operator
families, one per process (`opgen.spec.partial.family_parts`). Each part
checks the operators it holds; the others are listed unchecked, as another
part's, and get no kernel in its indices.
"""

from __future__ import annotations

import pytest

from opgen.diagnostics import SpecError
from opgen.spec.external_backend import read_external_backend
from opgen.spec.keys import DispatchKey
from opgen.spec.model import empty_spec, load_spec
from opgen.spec.yaml.load import parse_yaml

SPEC = "- func: abs(Tensor self) -> Tensor\n- func: sin(Tensor self) -> Tensor\n"
YAML = """\
backend: XLA
cpp_namespace: torch_xla
supported:
  - abs
  - sin
  - cos
symint:
  - cos
"""


def test_another_parts_operators_are_listed_unchecked_and_without_kernels() -> None:
    backend = read_external_backend(
        parse_yaml("xla.yaml", YAML),
        load_spec("native_functions.yaml", None, native_text=SPEC.splitlines(True)[0]),
        frozenset({"sin", "cos"}),
    )
    assert [str(op.name) for op in backend.supported] == ["abs", "sin", "cos"]
    assert [str(op.name) for op in backend.symint] == ["cos"]  # checked by its own part
    assert [str(n) for n in backend.indices[DispatchKey.XLA].index] == ["abs"]


def test_an_operator_of_no_part_is_an_error() -> None:
    with pytest.raises(SpecError) as caught:
        spec = load_spec("native_functions.yaml", None, native_text=SPEC)
        read_external_backend(parse_yaml("xla.yaml", YAML), spec, frozenset({"sin"}))
    assert [str(d) for d in caught.value.diagnostics] == [
        "xla.yaml:6:5: error: 'cos' is not an operator of the spec",
        "xla.yaml:8:5: error: 'cos' is not an operator of the spec",
    ]


def test_the_files_settings_alone() -> None:
    backend = read_external_backend(
        parse_yaml("xla.yaml", YAML), empty_spec(), frozenset({"abs", "sin", "cos"})
    )
    assert backend.backend_key is DispatchKey.XLA and backend.autograd_key is None
    assert backend.kernel_class == "XLANativeFunctions"
    assert dict(backend.indices[DispatchKey.XLA].index) == {}


@pytest.mark.parametrize(
    ("line", "may_have"),
    [
        ("    XLA: abs_xla", True),
        ("    CPU, XLA: abs", True),
        ("    CPU, CUDA , AutogradXLA : abs", True),
        ("# XLA: only a comment", False),
        ("    # XLA: an indented comment", False),
        ("    XLAPreview: abs", False),
        ("    CPU: abs  # not XLA: a comment after the kernel", False),
        ("XLA: not indented, not a dispatch line", False),
    ],
)
def test_whether_the_spec_may_give_the_backend_kernels(line: str, may_have: bool) -> None:
    """A spec that may give kernels for the backend's keys is read whole, in one process."""
    from opgen.targets.backend.generate import _may_have_kernels

    spec = f"- func: abs(Tensor self) -> Tensor\n  dispatch:\n{line}\n"
    assert _may_have_kernels(spec, "XLA") is may_have
