"""The DLL export macros of kernel declarations, by torch release (`opgen.releases`).

Until 2.14 every in-tree kernel is declared `TORCH_API` (before 2.14, XPU's
structured kernels `TORCH_XPU_API`). From 2.15 (`DEVICE_EXPORT_MACROS`) a
declaration carries its key's device library: `TORCH_CUDA_CPP_API` for the CUDA
family, `TORCH_XPU_API` for the XPU family; seven CUDA kernels built into
torch_cpu keep `TORCH_API` in `NativeFunctions.h` (not in `CUDAFunctions_inl.h`);
a kernel repeated under another macro is declared once, `TORCH_API` if any copy
is, where its first copy was. And 2.15 refuses a spec in which one of those seven
kernels is registered under no CUDA-family key (`CPU_DLL_CUDA_KERNELS_CHECKED`).

Each case runs `opgen aten` (with `--xpu`) on `SPEC` up to the run's outputs, with
one-line templates that show only the declarations. torchgen 2.13.0, 2.14.1 and
2.15.0 write the same declarations for this spec.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from opgen.cli import build_parser
from opgen.diagnostics import Location, SpecError
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import DispatchKey
from opgen.targets.aten import ufunc
from opgen.targets.aten.command import options_from
from opgen.targets.aten.dispatch_headers import emit_dispatch_headers
from opgen.targets.aten.generate import read
from opgen.targets.aten.header_fragments import Fragments
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted

TAGS = Path(__file__).parents[1] / "malformed" / "tags.yaml"

# The seven kernels, under CUDA-family keys, as 2.15 requires.
IN_TORCH_CPU = """\
- func: _in_torch_cpu(Tensor self) -> Tensor
  dispatch:
    CUDA: count_nonzero_cuda
    QuantizedCUDA: masked_fill__quantized_cuda
    SparseCUDA: log_sigmoid_backward_cuda
    SparseCsrCUDA: log_sigmoid_backward_cuda_out
    NestedTensorCUDA: NestedTensor_softmax_dropout_cuda
- func: _in_torch_cpu_more(Tensor self) -> Tensor
  dispatch:
    CUDA: triton_multi_head_attention
    QuantizedCUDA: _index_put_impl_quantized_cuda_
"""

# thing_kernel: a CUDA copy first, the CPU copy (TORCH_API) two functions later.
# both_kernel: CUDA and XPU copies, neither TORCH_API: the first (CUDA) is kept.
SPEC = (
    IN_TORCH_CPU
    + """\
- func: thing(Tensor self) -> Tensor
  dispatch:
    CUDA: thing_kernel
- func: other(Tensor self) -> Tensor
  dispatch:
    CPU: other_cpu
- func: thing_alias(Tensor self) -> Tensor
  dispatch:
    CPU: thing_kernel
- func: both(Tensor self) -> Tensor
  dispatch:
    CUDA, XPU: both_kernel
- func: grow.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU, CUDA: grow_out
    XPU: grow_out_xpu
- func: grow(Tensor self) -> Tensor
  structured_delegate: grow.out
"""
)

TEMPLATES = {
    "DispatchKeyFunctions.h": "${inline_headers}\n",
    "DispatchKeyFunctions_inl.h": "${dispatch_namespaced_declarations}\n",
    "DispatchKeyFunction.h": "${dispatch_namespaced_declarations}\n",
}


def start(tmp_path: Path, version: str, spec: str = SPEC, *flags: str) -> AtenRun:
    source = tmp_path / "aten"
    (source / "native").mkdir(parents=True)
    (source / "native" / "native_functions.yaml").write_text(spec, encoding="utf-8")
    shutil.copy(TAGS, source / "native" / "tags.yaml")
    (source / "templates").mkdir()
    for name, text in TEMPLATES.items():
        (source / "templates" / name).write_text(text, encoding="utf-8")
    argv = ["aten", "--torch-version", version, "--xpu", "-s", str(source), "-d", "out", *flags]
    argv += ["--generate", "headers"]  # the sources would need the AOTInductor table
    return read(options_from(build_parser().parse_args(argv)))


def native_functions(run: AtenRun) -> str:
    """The declarations of `NativeFunctions.h`, without its blank lines."""
    lines = Fragments(run).native_declarations(run.spec.grouped)
    return "".join(f"{line}\n" for line in lines if line.strip())


def with_dispatch_headers(run: AtenRun) -> Emitted:
    return emit_dispatch_headers(run)


def dispatch_header(emitted: Emitted, path: str, device: str | None = None) -> str:
    """A `<Key>Functions_inl.h` `with_dispatch_headers` made, without its blank lines."""
    out = emitted.files["cpu" if device is None else device]
    return "".join(f"{line}\n" for line in out.text(path).splitlines() if line.strip())


def the_group(run: AtenRun, name: str) -> NativeFunctionsGroup:
    found = [
        g for g in run.spec.grouped if isinstance(g, NativeFunctionsGroup) and g.root_name == name
    ]
    assert len(found) == 1
    return found[0]


# --- NativeFunctions.h (and ops/<root>_native.h) ------------------------------------------

NATIVE_FUNCTIONS_2_14 = textwrap.dedent(
    """\
    namespace at {
    namespace native {
    TORCH_API at::Tensor count_nonzero_cuda(const at::Tensor & self);
    TORCH_API at::Tensor masked_fill__quantized_cuda(const at::Tensor & self);
    TORCH_API at::Tensor log_sigmoid_backward_cuda(const at::Tensor & self);
    TORCH_API at::Tensor log_sigmoid_backward_cuda_out(const at::Tensor & self);
    TORCH_API at::Tensor NestedTensor_softmax_dropout_cuda(const at::Tensor & self);
    TORCH_API at::Tensor triton_multi_head_attention(const at::Tensor & self);
    TORCH_API at::Tensor _index_put_impl_quantized_cuda_(const at::Tensor & self);
    TORCH_API at::Tensor thing_kernel(const at::Tensor & self);
    TORCH_API at::Tensor other_cpu(const at::Tensor & self);
    TORCH_API at::Tensor both_kernel(const at::Tensor & self);
    struct TORCH_API structured_grow_out : public at::meta::structured_grow {
    void impl(const at::Tensor & self, const at::Tensor & out);
    };
    struct TORCH_API structured_grow_out_xpu : public at::meta::structured_grow {
    void impl(const at::Tensor & self, const at::Tensor & out);
    };
    } // namespace native
    } // namespace at
    """
)


def test_2_14_declares_every_kernel_torch_api(tmp_path: Path) -> None:
    assert native_functions(start(tmp_path, "2.14")) == NATIVE_FUNCTIONS_2_14


def test_2_13_declares_xpu_structs_torch_xpu_api(tmp_path: Path) -> None:
    expected = NATIVE_FUNCTIONS_2_14.replace(
        "struct TORCH_API structured_grow_out_xpu", "struct TORCH_XPU_API structured_grow_out_xpu"
    )
    assert native_functions(start(tmp_path, "2.13")) == expected


def test_2_15_declares_kernels_with_their_device_macro(tmp_path: Path) -> None:
    # thing_kernel: at the CUDA copy's place, as the CPU copy declares it.
    expected = NATIVE_FUNCTIONS_2_14.replace(
        "TORCH_API at::Tensor both_kernel", "TORCH_CUDA_CPP_API at::Tensor both_kernel"
    ).replace(
        "struct TORCH_API structured_grow_out_xpu", "struct TORCH_XPU_API structured_grow_out_xpu"
    )
    assert native_functions(start(tmp_path, "2.15")) == expected


def test_2_15_cuda_only_kernels(tmp_path: Path) -> None:
    spec = IN_TORCH_CPU + textwrap.dedent(
        """\
        - func: only.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
          structured: True
          dispatch:
            CUDA: only_out_cuda
        - func: only(Tensor self) -> Tensor
          structured_delegate: only.out
        - func: plain(Tensor self) -> Tensor
          dispatch:
            NestedTensorCUDA: plain_nested
        """
    )
    declared = native_functions(start(tmp_path, "2.15", spec)).splitlines()
    assert declared[9:] == [
        "struct TORCH_CUDA_CPP_API structured_only_out_cuda : public at::meta::structured_only {",
        "void impl(const at::Tensor & self, const at::Tensor & out);",
        "};",
        "TORCH_CUDA_CPP_API at::Tensor plain_nested(const at::Tensor & self);",
        "} // namespace native",
        "} // namespace at",
    ]


# --- UfuncCUDA_<name>.cu --------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "macro"), [("2.14", "TORCH_API"), ("2.15", "TORCH_CUDA_CPP_API")]
)
def test_ufunc_cuda_struct(tmp_path: Path, version: str, macro: str) -> None:
    run = start(tmp_path, version)
    g = the_group(run, "grow")
    index = run.backend_index(DispatchKey.CUDA)
    assert ufunc.native_declaration(g, index, run.release) == [
        f"struct {macro} structured_grow_out : public at::meta::structured_grow {{\n"
        "void impl(const at::Tensor & self, const at::Tensor & out);\n"
        "};\n"
    ]
    cpu = run.backend_index(DispatchKey.CPU)
    assert ufunc.native_declaration(g, cpu, run.release)[0].startswith(
        "struct TORCH_API structured_grow_out :"
    )


# --- <Key>Functions_inl.h and ops/<root>_<key>_dispatch.h -------------------------------

CUDA_FUNCTIONS_2_15 = textwrap.dedent(
    """\
    namespace at {
    namespace cuda {
    TORCH_CUDA_CPP_API at::Tensor _in_torch_cpu(const at::Tensor & self);
    TORCH_CUDA_CPP_API at::Tensor _in_torch_cpu_more(const at::Tensor & self);
    TORCH_CUDA_CPP_API at::Tensor thing(const at::Tensor & self);
    TORCH_CUDA_CPP_API at::Tensor both(const at::Tensor & self);
    TORCH_CUDA_CPP_API at::Tensor grow(const at::Tensor & self);
    TORCH_CUDA_CPP_API at::Tensor & grow_out(at::Tensor & out, const at::Tensor & self);
    TORCH_CUDA_CPP_API at::Tensor & grow_outf(const at::Tensor & self, at::Tensor & out);
    } // namespace cuda
    } // namespace at
    """
)


def test_2_15_dispatch_declarations_use_the_device_macro(tmp_path: Path) -> None:
    # The kernels built into torch_cpu are no exception here: at::cuda:: is CUDA's.
    emitted = with_dispatch_headers(start(tmp_path, "2.15"))
    assert dispatch_header(emitted, "CUDAFunctions_inl.h", "cuda") == CUDA_FUNCTIONS_2_15
    assert dispatch_header(emitted, "XPUFunctions_inl.h", "xpu") == textwrap.dedent(
        """\
        namespace at {
        namespace xpu {
        TORCH_XPU_API at::Tensor both(const at::Tensor & self);
        TORCH_XPU_API at::Tensor grow(const at::Tensor & self);
        TORCH_XPU_API at::Tensor & grow_out(at::Tensor & out, const at::Tensor & self);
        TORCH_XPU_API at::Tensor & grow_outf(const at::Tensor & self, at::Tensor & out);
        } // namespace xpu
        } // namespace at
        """
    )
    assert "TORCH_API at::Tensor other(const at::Tensor & self);\n" in dispatch_header(
        emitted, "CPUFunctions_inl.h"
    )


def test_2_14_dispatch_declarations_are_torch_api(tmp_path: Path) -> None:
    emitted = with_dispatch_headers(start(tmp_path, "2.14"))
    expected = CUDA_FUNCTIONS_2_15.replace("TORCH_CUDA_CPP_API", "TORCH_API")
    assert dispatch_header(emitted, "CUDAFunctions_inl.h", "cuda") == expected


@pytest.mark.parametrize(("version", "macro"), [("2.14", "TORCH_API"), ("2.15", "TORCH_XPU_API")])
def test_per_operator_dispatch_header(tmp_path: Path, version: str, macro: str) -> None:
    emitted = with_dispatch_headers(start(tmp_path, version, SPEC, "--per-operator-headers"))
    assert emitted.files["ops"].text("grow_xpu_dispatch.h") == (
        f"{macro} at::Tensor grow(const at::Tensor & self);\n"
        f"{macro} at::Tensor & grow_out(at::Tensor & out, const at::Tensor & self);\n"
        f"{macro} at::Tensor & grow_outf(const at::Tensor & self, at::Tensor & out);\n"
    )


# --- the seven kernels must be CUDA kernels of the spec (2.15) ------------------------------


def test_2_15_refuses_a_spec_without_one_of_the_seven(tmp_path: Path) -> None:
    spec = SPEC.replace(
        "    CUDA: triton_multi_head_attention", "    CPU: triton_multi_head_attention"
    )
    with pytest.raises(SpecError) as raised:
        start(tmp_path, "2.15", spec)
    assert str(raised.value) == (
        f"{tmp_path}/aten/native/native_functions.yaml:1: error: the CUDA kernels that torch "
        "builds into torch_cpu (declared TORCH_API) must be registered under a CUDA-family "
        "dispatch key (AutogradCUDA, CUDA, NestedTensorCUDA, QuantizedCUDA, SparseCUDA, "
        "SparseCsrCUDA), and these are not: triton_multi_head_attention"
    )
    assert raised.value.location == Location(f"{tmp_path}/aten/native/native_functions.yaml", 1)


def test_2_14_accepts_a_spec_without_them(tmp_path: Path) -> None:
    spec = SPEC.replace(IN_TORCH_CPU, "")
    assert "count_nonzero_cuda" not in native_functions(start(tmp_path, "2.14", spec))
