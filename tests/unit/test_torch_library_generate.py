"""`opgen torch-library` output for small library specs: the exact generated text."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

from opgen.cli import main

SPEC = """
- func: lib::mul(Tensor x, Tensor y, *, float alpha=1.0) -> Tensor
  dispatch:
    CPU: mul_cpu
    CUDA: lib::cuda::mul
  fake: kernels:mul_fake
  tags: pt2_compliant_tag
  doc: x * y * alpha.
- func: lib::fill_(Tensor(a!) self, SymInt[] size) -> ()
  dispatch:
    CompositeExplicitAutograd: fill_
"""
TAGS = "- tag: pt2_compliant_tag\n  desc: works with torch.compile\n"
DERIVATIVES = """
- name: lib::mul(Tensor x, Tensor y, *, float alpha=1.0) -> Tensor
  x: grad * y * alpha
"""


def generate(tmp_path: Path, *flags: str) -> tuple[int, str, Path]:
    (tmp_path / "native_functions.yaml").write_text(textwrap.dedent(SPEC), encoding="utf-8")
    (tmp_path / "tags.yaml").write_text(TAGS, encoding="utf-8")
    (tmp_path / "derivatives.yaml").write_text(DERIVATIVES, encoding="utf-8")
    (tmp_path / "kernels.py").write_text("def mul_fake(x, y, *, alpha):\n    return x\n")
    out = io.StringIO()
    native = str(tmp_path / "native_functions.yaml")
    status = main(
        ["torch-library", native, "-o", str(tmp_path / "out"), *flags], out, io.StringIO()
    )
    return status, out.getvalue(), tmp_path / "out"


def test_files_and_summary(tmp_path: Path) -> None:
    status, out, root = generate(tmp_path)
    assert status == 0
    assert out == (
        f"lib: 2 operators, 1 with gradient formulas (C++ and Python): 7 files in {root}, wrote 7\n"
    )
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        "include/lib/kernels.h",
        "include/lib/ops.h",
        "lib/__init__.py",
        "lib/__init__.pyi",
        "lib/py.typed",
        "lib_library.cmake",
        "src/lib_library.cpp",
    ]
    assert generate(tmp_path)[1].endswith("wrote 0\n")  # unchanged files are not rewritten


def test_listing_writes_nothing(tmp_path: Path) -> None:
    status, out, root = generate(tmp_path, "--list-sources")
    assert (status, out) == (0, f"{root}/src/lib_library.cpp\n")
    assert not root.exists()


def test_kernel_declarations_in_their_namespaces(tmp_path: Path) -> None:
    root = generate(tmp_path)[2]
    text = (root / "include/lib/kernels.h").read_text()
    assert text.endswith(
        "namespace lib::cuda {\n"
        "at::Tensor mul(const at::Tensor & x, const at::Tensor & y, double alpha=1.0);\n"
        "} // namespace lib::cuda\n\n"
        "namespace lib::native {\n"
        "at::Tensor mul_cpu(const at::Tensor & x, const at::Tensor & y, double alpha=1.0);\n"
        "void fill_(at::Tensor & self, at::IntArrayRef size);\n"
        "} // namespace lib::native\n"
    )


def test_registrations(tmp_path: Path) -> None:
    text = (generate(tmp_path)[2] / "src/lib_library.cpp").read_text()
    assert (
        "at::Tensor wrapper_CUDA_mul(const at::Tensor & x, const at::Tensor & y, double alpha) {\n"
        "  const c10::OptionalDeviceGuard device_guard(at::device_of(x));\n"
        "  return lib::cuda::mul(x, y, alpha);\n"
        "}\n"
    ) in text
    assert (
        "void wrapper_CompositeExplicitAutograd_fill_("
        "at::Tensor & self, c10::SymIntArrayRef size) {\n"
        "  return lib::native::fill_(self, C10_AS_INTARRAYREF_SLOW(size));\n"
        "}\n"
    ) in text
    assert (
        "TORCH_LIBRARY(lib, m) {\n"
        '  m.def("mul(Tensor x, Tensor y, *, float alpha=1.0) -> Tensor", '
        "{at::Tag::pt2_compliant_tag});\n"
        '  m.def("fill_(Tensor(a!) self, SymInt[] size) -> ()");\n'
        "}\n"
    ) in text
    assert (
        'TORCH_LIBRARY_IMPL(lib, CPU, m) {\n  m.impl("mul", TORCH_FN(wrapper_CPU_mul));\n}\n'
    ) in text
    assert "TORCH_CHECK(!needs_y, \"lib::mul: the derivative for 'y' is not implemented\");" in text


def test_python_wrapper_and_stub(tmp_path: Path) -> None:
    root = generate(tmp_path)[2]
    init = (root / "lib/__init__.py").read_text()
    assert (
        "_mul = torch.ops.lib.mul.default\n\n\n"
        "def mul(x: Tensor, y: Tensor, *, alpha: float = 1.0) -> Tensor:\n"
        '    """x * y * alpha."""\n'
        "    return _mul(x, y, alpha=alpha)\n"
    ) in init
    assert (
        "from kernels import mul_fake as _fake_mul  # noqa: E402\n\n"
        'torch.library.register_fake("lib::mul", _fake_mul, lib=_lib)\n'
    ) in init
    stub = (root / "lib/__init__.pyi").read_text()
    assert "def fill_(self: Tensor, size: Sequence[int]) -> None: ...\n" in stub


def generate_spec(tmp_path: Path, spec: str) -> Path:
    """Generate the library of `spec` (and a `kernels.py` of Python kernels) into `out`."""
    (tmp_path / "native_functions.yaml").write_text(textwrap.dedent(spec), encoding="utf-8")
    (tmp_path / "kernels.py").write_text("def ramp_cpu(n, device=None):\n    pass\n")
    native = str(tmp_path / "native_functions.yaml")
    status = main(["torch-library", native, "-o", str(tmp_path / "out")], io.StringIO())
    assert status == 0
    return tmp_path / "out"


FACTORY = """
- func: lib::ramp(int n, Device? device=None) -> Tensor
  dispatch:
    CPU: ramp_cpu
    Meta: ramp_meta
"""


def test_a_factory_dispatches_on_its_device(tmp_path: Path) -> None:
    """No tensor argument to dispatch on: a BackendSelect kernel picks the backend."""
    text = (generate_spec(tmp_path, FACTORY) / "src/lib_library.cpp").read_text()
    assert (
        "// No tensor argument to dispatch on: the backend follows the tensor options.\n"
        "at::Tensor wrapper_BackendSelect_ramp(int64_t n, ::std::optional<at::Device> device) {\n"
        "  const c10::DispatchKeySet key_set(c10::computeDispatchKey(std::nullopt, std::nullopt, "
        "device));\n"
        "  static auto op = c10::Dispatcher::singleton()\n"
        '      .findSchemaOrThrow("lib::ramp", "")\n'
        "      .typed<at::Tensor (int64_t, ::std::optional<at::Device>)>();\n"
        "  return op.redispatch(key_set, n, device);\n"
        "}\n"
    ) in text
    assert (
        "TORCH_LIBRARY_IMPL(lib, BackendSelect, m) {\n"
        '  m.impl("ramp", TORCH_FN(wrapper_BackendSelect_ramp));\n'
        "}\n"
    ) in text


def test_a_python_factory_dispatches_on_its_device(tmp_path: Path) -> None:
    spec = FACTORY.replace("  dispatch:\n    CPU: ramp_cpu\n    Meta: ramp_meta\n", "") + (
        "  python_dispatch:\n    CPU: kernels:ramp_cpu\n"
    )
    init = (generate_spec(tmp_path, spec) / "lib/__init__.py").read_text()
    assert (
        "def _backend_select_ramp(key_set: torch._C.DispatchKeySet, n: int, "
        "device: torch.device | str | None = None) -> Tensor:\n"
        '    """No tensor argument to dispatch on: the backend follows `device`."""\n'
        '    device_type = torch.device("cpu" if device is None else device).type\n'
        "    backend = torch._C.DispatchKeySet(torch._C._dispatch_key_for_device(device_type))\n"
        "    return _ramp.redispatch(backend, n, device)\n\n\n"
        '_lib.impl("ramp", _backend_select_ramp, "BackendSelect", with_keyset=True)\n'
    ) in init


def test_named_outputs_return_a_named_tuple(tmp_path: Path) -> None:
    root = generate_spec(
        tmp_path,
        """
        - func: lib::minmax(Tensor x) -> (Tensor min, Tensor max)
          dispatch:
            CPU: minmax_cpu
            Meta: minmax_meta
        - func: lib::split2(Tensor x) -> (Tensor, Tensor)
          dispatch:
            CompositeExplicitAutograd: split2
        """,
    )
    init = (root / "lib/__init__.py").read_text()
    assert (
        "class MinmaxResult(NamedTuple):\n"
        '    """The outputs of `minmax`."""\n\n'
        "    min: Tensor\n"
        "    max: Tensor\n\n\n"
        "_minmax = torch.ops.lib.minmax.default\n\n\n"
        "def minmax(x: Tensor) -> MinmaxResult:\n"
        '    """lib::minmax(Tensor x) -> (Tensor min, Tensor max)"""\n'
        "    return MinmaxResult(*_minmax(x))\n"
    ) in init
    assert "def split2(x: Tensor) -> tuple[Tensor, Tensor]:\n" in init  # no names: a tuple
    assert '__all__ = [\n    "minmax",\n    "MinmaxResult",\n    "split2",\n]\n' in init
    assert (
        (root / "lib/__init__.pyi")
        .read_text()
        .endswith(
            "from typing import NamedTuple\n\n"
            "import torch\n"
            "from torch import Tensor\n\n"
            "class MinmaxResult(NamedTuple):\n"
            "    min: Tensor\n"
            "    max: Tensor\n\n"
            "def minmax(x: Tensor) -> MinmaxResult: ...\n"
            "def split2(x: Tensor) -> tuple[Tensor, Tensor]: ...\n"
        )
    )
