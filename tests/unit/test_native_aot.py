"""Native AOT stubs (`opgen.targets.aten.native_aot`): aot.py declarations in, C++ out.

Each test writes a small declaration directory (`<ops>/<entry>/aot.py`) beside a
small spec, and reads back NativeAotStubs.h/.cpp, a structured wrapper of
`Register<Key>.cpp`, or the located error a bad declaration gives.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from opgen.cli import build_parser
from opgen.diagnostics import SpecError
from opgen.releases import parse_release
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import DispatchKey
from opgen.spec.model import load_spec
from opgen.spec.selection import OperatorSelection
from opgen.targets.aten.command import options_from
from opgen.targets.aten.native_aot_files import (
    emit_native_aot_stub_declarations,
    emit_native_aot_stub_definitions,
)
from opgen.targets.aten.options import AtenOptions, AtenPart
from opgen.targets.aten.run import AtenRun
from opgen.targets.aten.structured_kernels import StructuredWrappers
from opgen.targets.contract import RunOptions
from opgen.targets.dispatch_registration import dispatch_headers

K = DispatchKey

SPEC = """
- func: topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True, *,
    Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
  structured: True
  dispatch:
    CPU: topk_out_cpu
    CUDA: topk_out_cuda
- func: topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True)
    -> (Tensor values, Tensor indices)
  structured_delegate: topk.values
- func: gt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CUDA: gt_scalar_out
- func: gt.Scalar(Tensor self, Scalar other) -> Tensor
  structured_delegate: gt.Scalar_out
- func: gt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CUDA: gt_tensor_out
- func: gt.Tensor(Tensor self, Tensor other) -> Tensor
  structured_delegate: gt.Tensor_out
- func: relu(Tensor self) -> Tensor
  dispatch:
    CPU: relu
"""

# A declaration as a module: its constants and functions at module scope.
TOPK = """\
ATEN_OP = "topk"
DISPATCH_KEY = "CUDA"
KERNEL_MODULE = "kernels.py"
ARCHS = ("sm_90a", "sm_100")


def kernel_precompile_grid():
    return [{"K": [16, 32]}]


def covered_axes(self, k, dim=-1):
    return {}


def cpp_dispatch(spec):
    return "k == 16"


def cpp_launch(spec, launch_fn):
    return ""
"""

# Declarations as objects, returned by declarations().
GT_FAMILY = """\
class Gt:
    ATEN_OP = "gt.Tensor"
    DISPATCH_KEY = "CUDA"
    KERNEL_MODULE = "kernels.py"
    UNCONDITIONAL = True

    def kernel_precompile_grid(self):
        return [{}]

    def covered_axes(self, *args):
        return {}

    def cpp_dispatch(self, spec):
        return ""

    def cpp_launch(self, spec, launch_fn):
        return ""


def declarations():
    return [Gt()]
"""

TOPK_SIGNATURE = (
    "const at::Tensor & self, int64_t k, int64_t dim, bool largest, bool sorted, "
    "const at::Tensor & values, const at::Tensor & indices"
)


def write_ops(root: Path, entries: dict[str, str]) -> Path:
    """`<root>/ops/<entry>/aot.py` for each entry; an empty text makes an entry without one."""
    ops = root / "ops"
    ops.mkdir(parents=True, exist_ok=True)
    for entry, text in entries.items():
        (ops / entry).mkdir()
        if text:
            (ops / entry / "aot.py").write_text(text)
    return ops


def make_run(tmp_path: Path, ops_dir: str | None, release: str = "2.15") -> AtenRun:
    source = tmp_path / "aten" / "src" / "ATen"
    (source / "templates").mkdir(parents=True, exist_ok=True)
    (source / "templates" / "NativeAotStubs.h").write_text("${native_aot_stub_declarations}")
    (source / "templates" / "NativeAotStubs.cpp").write_text("${native_aot_stub_definitions}")
    spec_path = tmp_path / "native_functions.yaml"
    spec_path.write_text(textwrap.dedent(SPEC))
    found = parse_release(release)
    assert found is not None
    options = AtenOptions(
        run=RunOptions(str(tmp_path / "out")),
        source_path=str(source),
        native_aot_ops_dir=ops_dir,
        release=found,
        # The declarations are read for sources and headers alike; the sources would
        # also read the AOTInductor fallback-op table.
        generate=frozenset({AtenPart.headers}),
    )
    spec = load_spec(str(spec_path), None)
    return AtenRun.of(options, spec, OperatorSelection.everything())


def stub_files(run: AtenRun) -> dict[str, str]:
    files: dict[str, str] = {}
    for emitted in (emit_native_aot_stub_declarations(run), emit_native_aot_stub_definitions(run)):
        for out in emitted.files.values():
            files.update((path, out.text(path)) for path in out.paths())
    return files


def group(run: AtenRun, name: str) -> NativeFunctionsGroup:
    (found,) = (g for g in run.spec.groups if str(g.functional.func.name) == name)
    return found


def impl_lines(run: AtenRun, key: DispatchKey, name: str) -> list[str]:
    """The line calling impl() in each structured wrapper of group `name` for `key`."""
    wrappers = StructuredWrappers(run.signatures, run.native_aot)
    plan = run.kernel_table().plan(key)
    item = plan.of(group(run, name))
    assert item is not None
    texts = [wrappers.definition(plan.index, p, item.primary) for p in item.kernels]
    return [line for text in texts for line in text.splitlines() if "op.impl(" in line]


# -- what is generated ------------------------------------------------------------------


def test_a_module_declaration_declares_and_defines_one_stub(tmp_path: Path) -> None:
    run = make_run(tmp_path, str(write_ops(tmp_path, {"topk": TOPK})))
    assert stub_files(run) == {
        "NativeAotStubs.h": f"using topk_aot_fn = bool (*)({TOPK_SIGNATURE});\n"
        "DECLARE_DISPATCH(topk_aot_fn, topk_aot_stub)",
        "NativeAotStubs.cpp": "DEFINE_DISPATCH(topk_aot_stub);\n"
        "REGISTER_NO_CPU_DISPATCH(topk_aot_stub)",
    }


def test_stubs_are_listed_by_operator_and_entries_without_aot_py_are_skipped(
    tmp_path: Path,
) -> None:
    ops = write_ops(tmp_path, {"a_gt": GT_FAMILY, "b_readme_only": "", "c_topk": TOPK})
    run = make_run(tmp_path, str(ops))
    assert stub_files(run)["NativeAotStubs.cpp"] == (
        "DEFINE_DISPATCH(gt_Tensor_aot_stub);\nREGISTER_NO_CPU_DISPATCH(gt_Tensor_aot_stub)\n"
        "DEFINE_DISPATCH(topk_aot_stub);\nREGISTER_NO_CPU_DISPATCH(topk_aot_stub)"
    )


def test_without_declarations_both_files_are_written_empty(tmp_path: Path) -> None:
    assert stub_files(make_run(tmp_path, str(tmp_path / "missing"))) == {
        "NativeAotStubs.h": "",
        "NativeAotStubs.cpp": "",
    }


def test_the_default_directory_is_beside_the_source_and_an_empty_flag_reads_none(
    tmp_path: Path,
) -> None:
    default = tmp_path / "torch" / "_native"
    default.mkdir(parents=True)
    write_ops(default, {"topk": TOPK.replace("KERNEL_MODULE", "KERNEL")})
    with pytest.raises(SpecError, match="KERNEL_MODULE must be set to a string"):
        stub_files(make_run(tmp_path, None))
    assert stub_files(make_run(tmp_path, "")) == {"NativeAotStubs.h": "", "NativeAotStubs.cpp": ""}


def test_before_torch_2_15_nothing_is_read_or_written(tmp_path: Path) -> None:
    ops = write_ops(tmp_path, {"topk": "raise RuntimeError('read')"})
    run = make_run(tmp_path, str(ops), release="2.14")
    assert stub_files(run) == {}
    assert impl_lines(run, K.CUDA, "topk") == [
        "op.impl(self, k, dim, largest, sorted, op.outputs_[0], op.outputs_[1]);",
        "op.impl(self, k, dim, largest, sorted, op.maybe_get_output(0), op.maybe_get_output(1));",
    ]


def test_the_structured_wrappers_of_the_declared_key_try_the_stub_first(tmp_path: Path) -> None:
    run = make_run(tmp_path, str(write_ops(tmp_path, {"topk": TOPK})))
    stub = "at::native::topk_aot_stub"
    device = "c10::DeviceType::CUDA"
    functional = "self, k, dim, largest, sorted, op.outputs_[0], op.outputs_[1]"
    assert impl_lines(run, K.CUDA, "topk")[0] == (
        f"if (!(at::globalContext().allowNativeAot() && {stub}.is_device_supported({device}) "
        f"&& {stub}({device}, {functional}))) {{ op.impl({functional}); }}"
    )
    assert len(impl_lines(run, K.CUDA, "topk")) == 2  # the out= wrapper too
    assert impl_lines(run, K.CPU, "topk")[0] == f"op.impl({functional});"


def test_an_unconditional_declaration_is_gated_by_the_private_mask(tmp_path: Path) -> None:
    run = make_run(tmp_path, str(write_ops(tmp_path, {"gt": GT_FAMILY})))
    (functional, _) = impl_lines(run, K.CUDA, "gt.Tensor")
    assert functional.startswith("if (!(!at::globalContext().maskUnconditionalNativeAot() && ")
    # The qualified name hooks that overload only.
    assert impl_lines(run, K.CUDA, "gt.Scalar")[0] == "op.impl(self, other, op.outputs_[0]);"


def test_registrations_include_the_stubs_for_cuda_only(tmp_path: Path) -> None:
    run = make_run(tmp_path, None)
    cuda, cpu = run.backend_index(K.CUDA), run.backend_index(K.CPU)
    include = "#include <ATen/NativeAotStubs.h>"
    flags = {"per_operator_headers": False, "rocm": False}
    assert include in dispatch_headers(cuda, **flags, native_aot_stubs=True)
    assert include not in dispatch_headers(cuda, **flags)
    assert include not in dispatch_headers(cpu, **flags, native_aot_stubs=True)


def test_the_flag_has_torchgens_two_spellings() -> None:
    parse = build_parser().parse_args
    assert options_from(parse(["aten"])).native_aot_ops_dir is None
    assert options_from(parse(["aten", "--native-aot-ops-dir", "x"])).native_aot_ops_dir == "x"
    assert options_from(parse(["aten", "--native_aot_ops_dir="])).native_aot_ops_dir == ""
    default = AtenOptions(source_path="repo/aten/src/ATen").native_aot_dir
    assert default == "repo/aten/src/ATen/../../../torch/_native/ops"


# -- bad declarations -------------------------------------------------------------------


def error_of(tmp_path: Path, entries: dict[str, str]) -> str:
    ops = str(write_ops(tmp_path, entries))
    with pytest.raises(SpecError) as raised:
        stub_files(make_run(tmp_path, ops))  # read with the run, or (two keys) rendered
    return str(raised.value).replace(str(tmp_path / "ops"), "ops")


BAD_DECLARATIONS = [
    (
        TOPK.replace('ATEN_OP = "topk"', "ATEN_OP = None"),
        "ops/topk/aot.py:1: error: ATEN_OP must be set to a string",
    ),
    (
        TOPK.replace("def cpp_dispatch(spec):", "def cpp_dispatch():"),
        "ops/topk/aot.py:15: error: cpp_dispatch() must take 1 positional parameter(s), "
        "not 0 (it renders once per precompile point)",
    ),
    (
        TOPK.replace("def cpp_launch(spec, launch_fn):", "cpp_launch = 3\ndef _(spec, launch_fn):"),
        "ops/topk/aot.py:19: error: cpp_launch() must be defined",
    ),
    (
        TOPK + "\ncpp_helpers = 'none'\n",
        "ops/topk/aot.py:22: error: cpp_helpers must be a function or None",
    ),
    (
        TOPK.replace('("sm_90a", "sm_100")', '("sm_90a", "sm_130")'),
        "ops/topk/aot.py:4: error: ARCHS must be a non-empty sequence of architectures such "
        "as ('sm_90a', 'sm_100'), sm_<major><minor> with an optional 'a' and a major from 3 "
        "to 12; got ('sm_90a', 'sm_130')",
    ),
    (
        TOPK.replace('[{"K": [16, 32]}]', "[]"),
        "ops/topk/aot.py:7: error: kernel_precompile_grid() must return a non-empty list of dicts",
    ),
    (
        TOPK.replace('return [{"K": [16, 32]}]', "return 1 / 0"),
        "ops/topk/aot.py:8: error: kernel_precompile_grid() raised "
        "ZeroDivisionError: division by zero",
    ),
    (
        TOPK + "UNCONDITIONAL = 1\n",
        "ops/topk/aot.py:21: error: UNCONDITIONAL must be True or False, not 1",
    ),
    (
        TOPK.replace('"CUDA"', '"Cuda"'),
        "ops/topk/aot.py:2: error: DISPATCH_KEY: unknown dispatch key 'Cuda'",
    ),
    (
        "import opgen_test_no_such_module\n" + TOPK,
        "ops/topk/aot.py:1: error: loading it raised ModuleNotFoundError: "
        "No module named 'opgen_test_no_such_module'",
    ),
    (
        TOPK.replace("def cpp_launch(spec, launch_fn):", "def cpp_launch(spec, launch_fn)"),
        "ops/topk/aot.py:19:32: error: invalid Python: expected ':'",
    ),
    (
        "def declarations():\n    return []\n",
        "ops/topk/aot.py:1: error: declarations() must return a non-empty list of declarations",
    ),
    (
        GT_FAMILY.replace("    KERNEL_MODULE", "    # KERNEL_MODULE"),
        "ops/topk/aot.py:20: error: declarations()[0] (gt.Tensor): KERNEL_MODULE must be set "
        "to a string",
    ),
    (
        TOPK.replace('"topk"', '"relu"'),
        "ops/topk/aot.py:1: error: the native AOT declaration of relu for CUDA names no "
        "structured operator: its stub is called between meta() and impl(), so only a "
        "structured operator can have one",
    ),
    (
        TOPK.replace('"topk"', '"gt"'),
        "ops/topk/aot.py:1: error: the native AOT declaration of gt for CUDA is ambiguous: "
        "'gt' is the base name of the structured groups gt.Scalar, gt.Tensor; name the "
        "overload in ATEN_OP (such as 'gt.Scalar')",
    ),
    (
        TOPK.replace('"topk"', '"topk.values"'),
        "ops/topk/aot.py:1: error: the native AOT declaration of topk.values for CUDA names "
        "no structured group: the structured overloads of 'topk' are topk",
    ),
]


@pytest.mark.parametrize("text, expected", BAD_DECLARATIONS)
def test_a_bad_declaration_is_a_located_error(tmp_path: Path, text: str, expected: str) -> None:
    assert error_of(tmp_path, {"topk": text}) == expected


def test_an_operator_is_declared_once_per_key(tmp_path: Path) -> None:
    assert error_of(tmp_path, {"a": TOPK, "b": TOPK}) == (
        "ops/b/aot.py:1: error: topk is declared twice for CUDA (each operator and key once)"
    )


def test_declarations_for_two_keys_fail_to_render_as_in_torchgen(tmp_path: Path) -> None:
    cpu_gt = GT_FAMILY.replace('"CUDA"', '"CPU"')
    ops = write_ops(tmp_path / "dry", {"gt": cpu_gt, "topk": TOPK})
    emit_native_aot_stub_definitions(make_run(tmp_path / "dry", str(ops)))  # a dry run passes
    assert error_of(tmp_path, {"gt": cpu_gt, "topk": TOPK}) == (
        "ops/topk/aot.py:1: error: native AOT declarations for more than one dispatch key "
        "(CPU, CUDA): torch 2.15's torchgen cannot order them in NativeAotStubs.h and fails; "
        "declare one dispatch key"
    )
