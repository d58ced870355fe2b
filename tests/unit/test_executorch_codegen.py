"""`opgen executorch`: its flags (upstream's, and no others), usage errors (status 2), the
ExecuTorch conventions (`opgen.api.executorch`, `opgen.api.executorch_unboxing`) from
small schemas to exact C++, kernel selection, the files of a small spec rendered
through templates of this test's own, bad input (status 1, located), and a run with
torch, torchgen and executorch unimportable.

Conformance with ExecuTorch's codegen, on its templates and YAMLs:
tests/conformance/test_executorch_codegen.py.
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opgen.api import executorch as et
from opgen.api.executorch_unboxing import convert_arguments
from opgen.api.types import ArgumentStyle
from opgen.cli import build_parser, main
from opgen.diagnostics import SpecError
from opgen.spec.arguments import Argument, Return
from opgen.spec.schema import FunctionSchema
from opgen.spec.selection import OperatorSelection
from opgen.targets.executorch.command import options_from
from opgen.targets.executorch.options import ExecutorchOptions, ExecutorchPart
from opgen.targets.executorch.unboxed_kernels import selected_kernel_keys

STYLE = ArgumentStyle()


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def parsed(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["executorch", *argv])


REQUIRED = ("--source-path", "s", "--aten-yaml-path", "a.yaml", "--tags-path", "t.yaml")

# -- flags ---------------------------------------------------------------------------


def test_upstream_spellings_and_defaults() -> None:
    options = options_from(parsed(*REQUIRED))
    assert options.install_dir == "build/generated"
    assert options.generate == frozenset(ExecutorchPart)
    assert options.template_dir == "s/templates"
    assert (options.functions_yaml_path, options.custom_ops_yaml_path) == (None, None)
    spelled = options_from(
        parsed(
            "-s", "src", "--aten_yaml_path", "a.yaml", "--tags-path", "t.yaml",
            "--functions_yaml_path", "f.yaml", "--custom_ops_yaml_path", "c.yaml",
            "-d", "out", "-o", "deps.cmake", "--dry-run",
            "--static_dispatch_backend", "CPU", "--op_registration_whitelist", "aten::add",
            "--rocm", "--use_aten_lib", "--manual-registration", "--generate", "sources",
            "--add_exception_boundary",
        )
    )  # fmt: skip
    assert spelled == ExecutorchOptions(
        run=spelled.run,
        source_path="src",
        functions_yaml_path="f.yaml",
        custom_ops_yaml_path="c.yaml",
        aten_yaml_path="a.yaml",
        tags_path="t.yaml",
        op_registration_whitelist=("aten::add",),
        static_dispatch_backend=("CPU",),
        rocm=True,
        use_aten_lib=True,
        manual_registration=True,
        generate=frozenset({ExecutorchPart.sources}),
        add_exception_boundary=True,
        release=spelled.release,  # the installed torch's, which the test does not fix
    )
    assert (spelled.run.output_dir, spelled.run.output_dependencies) == ("out", "deps.cmake")
    assert spelled.run.dry_run
    dashed = parsed(*REQUIRED, "--functions-yaml-path", "f", "--custom-ops-yaml-path", "c")
    assert (dashed.functions_yaml_path, dashed.custom_ops_yaml_path) == ("f", "c")
    assert parsed(*REQUIRED, "--install_dir", "x", "--manual_registration").install_dir == "x"
    assert options_from(parsed(*REQUIRED, "--generate")).generate == frozenset()
    # Upstream reads an empty YAML path as none given.
    assert options_from(parsed(*REQUIRED, "--functions-yaml-path", "")).functions_yaml_path is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (REQUIRED[2:], "--source-path is required"),
        (REQUIRED[:2] + REQUIRED[4:], "--aten-yaml-path is required"),
        (REQUIRED[:4], "--tags-path is required"),
        (
            (*REQUIRED, "--op-registration-whitelist", "--op-selection-yaml-path", "s.yaml"),
            "--op-registration-whitelist and --op-selection-yaml-path cannot be given together",
        ),
    ],
)
def test_usage_errors(argv: tuple[str, ...], message: str) -> None:
    status, out, err = run("executorch", *argv)
    assert (status, out) == (2, "")
    assert f"opgen executorch: error: {message}" in err


@pytest.mark.parametrize(
    "flag", [("--generate", "declarations_yaml"), ("--jobs", "2"), ("--torch-version", "2.13")]
)
def test_flags_upstream_does_not_have_are_usage_errors(flag: tuple[str, ...]) -> None:
    with pytest.raises(SystemExit) as exit:
        build_parser().parse_args(["executorch", *REQUIRED, *flag])
    assert exit.value.code == 2


# -- ExecuTorch's C++ convention ----------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "ctype"),
    [
        ("int n", "int64_t"),
        ("SymInt n", "int64_t"),
        ("float x", "double"),
        ("bool flag", "bool"),
        ("str mode", "std::string_view"),
        ("ScalarType dtype", "torch::executor::ScalarType"),
        ("MemoryFormat? memory_format", "std::optional<torch::executor::MemoryFormat>"),
        ("int? dim", "std::optional<int64_t>"),
        ("Tensor self", "const torch::executor::Tensor &"),
        ("Tensor(a!) out", "torch::executor::Tensor &"),
        ("Tensor? weight", "const std::optional<torch::executor::Tensor> &"),
        ("Tensor(a!)? out", "torch::executor::Tensor &"),
        ("Scalar alpha", "const torch::executor::Scalar &"),
        ("Scalar? alpha", "const std::optional<torch::executor::Scalar> &"),
        ("int[] dims", "torch::executor::ArrayRef<int64_t>"),
        ("SymInt[2] size", "torch::executor::ArrayRef<int64_t>"),
        ("float[] scales", "torch::executor::ArrayRef<double>"),
        ("bool[3] mask", "torch::executor::ArrayRef<bool>"),
        ("int[]? dims", "std::optional<torch::executor::ArrayRef<int64_t>>"),
        ("Tensor[] tensors", "torch::executor::TensorList"),
        ("Tensor?[] indices", "torch::executor::ArrayRef<std::optional<torch::executor::Tensor>>"),
        ("Scalar[] values", "torch::executor::ArrayRef<const torch::executor::Scalar &>"),
    ],
)
def test_argument_types(argument: str, ctype: str) -> None:
    a = Argument.parse(argument)
    assert et.argument_type(a, style=STYLE).type.cpp_type() == ctype


def test_written_tensors_by_const_reference_when_the_function_asks() -> None:
    style = ArgumentStyle(const_ref_for_mutable_tensors=True)
    a = Argument.parse("Tensor(a!) out")
    assert et.argument_type(a, style=style).type.cpp_type() == "const torch::executor::Tensor &"


@pytest.mark.parametrize(
    ("returns", "ctype"),
    [
        ((), "void"),
        (("Tensor",), "torch::executor::Tensor"),
        (("Tensor(a!)",), "torch::executor::Tensor &"),
        (("float",), "double"),
        (("Scalar",), "torch::executor::Scalar"),
        (("Tensor[]",), "::std::vector<torch::executor::Tensor>"),
        (
            ("Tensor(a!) values", "Tensor(b!) indices"),
            "::std::tuple<torch::executor::Tensor &,torch::executor::Tensor &>",
        ),
    ],
)
def test_return_types(returns: tuple[str, ...], ctype: str) -> None:
    parsed = [Return.parse(r) for r in returns]
    assert et.returns_type(parsed, style=STYLE).cpp_type() == ctype


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("f(Tensor self, Layout layout) -> Tensor", "ExecuTorch has no C++ type for 'Layout'"),
        ("f(Tensor self, Generator? g) -> Tensor", "ExecuTorch has no C++ type for 'Generator'"),
        ("f(Tensor self, bool[] mask) -> Tensor", "'bool[]' without a size"),
        (
            "f(int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
            "bool? pin_memory=None) -> Tensor",
            "ExecuTorch has no tensor options",
        ),
        ("f(Tensor self) -> Tensor?", "ExecuTorch cannot return 'Tensor?'"),
    ],
)
def test_what_executorch_cannot_express(schema: str, message: str) -> None:
    sig = et.ExecutorchCppSignature(FunctionSchema.parse(schema))
    with pytest.raises(et.NoExecutorchType, match=re.escape(message)):
        sig.decl()


def test_signature_with_and_without_the_context() -> None:
    schema = "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
    sig = et.ExecutorchCppSignature(FunctionSchema.parse(schema))
    parameters = (
        "const torch::executor::Tensor & self, const torch::executor::Tensor & other, "
        "const torch::executor::Scalar & alpha, torch::executor::Tensor & out"
    )
    assert sig.name() == "add_outf"
    assert sig.decl() == (
        "torch::executor::Tensor & add_outf(torch::executor::KernelRuntimeContext & context, "
        f"{parameters})"
    )
    assert sig.decl("add_out", include_context=False) == (
        f"torch::executor::Tensor & add_out({parameters})"
    )


# -- unboxing ------------------------------------------------------------------------


def test_unboxing_each_kind_of_value() -> None:
    func = FunctionSchema.parse(
        "foo.out(Tensor self, int[] dims, bool? keep, Scalar[] values, *, Tensor(a!) out)"
        " -> Tensor(a!)"
    )
    names, lines = convert_arguments(
        et.arguments(func, style=STYLE),
        lambda t, mutable: et.argument_ctype(t, mutable=mutable, style=STYLE),
    )
    assert names == ("self_base", "dims_list_out", "keep_opt_out", "values_list_out", "out_base")
    t, s = "torch::executor::Tensor", "torch::executor::Scalar"
    assert lines == (
        "EValue& self = *stack[0];",
        "EValue& dims = *stack[1];",
        "EValue& keep = *stack[2];",
        "EValue& values = *stack[3];",
        "EValue& out = *stack[4];",
        f"const {t} & self_base = self.to<{t}>();",
        "",
        "    auto dims_list_out = dims.toIntList();",
        " " * 16,
        "",
        "    auto keep_opt_out = keep.toOptional<bool>();",
        " " * 12,
        f"std::vector<{s}> values_vec;",
        "",
        "    for (EValue values_elem: values_list_in) {",
        f"        const {s} & values_elem_base = values_elem.to<{s}>();",
        "        values_vec.push_back(values_elem_base);",
        "    }",
        f"    torch::executor::ArrayRef<const {s} &> values_list_out(values_vec);",
        " " * 16,
        f"{t} & out_base = out.to<{t}>();",
    )


def test_unboxing_copies_into_atens_containers_under_use_aten_lib() -> None:
    func = FunctionSchema.parse("f(bool[2] mask, Tensor?[] indices) -> Tensor")
    _, lines = convert_arguments(
        et.arguments(func, style=STYLE),
        lambda t, mutable: et.argument_ctype(t, mutable=mutable, style=STYLE),
    )
    assert "\n".join(lines[2:]) == textwrap.dedent(
        """
        #ifdef USE_ATEN_LIB
        std::array<bool, 2> mask_list_out;
        auto mask_list_in = mask.toBoolList();
        size_t _i = 0;
        for (auto mask_elem: mask_list_in) {
            mask_list_out[_i++] = mask_elem;
        }
        #else
        auto mask_list_out = mask.toBoolList();
        #endif
        <16 spaces>

        #ifdef USE_ATEN_LIB
        auto indices_list_in = indices.toListOptionalTensor();
        c10::List<::std::optional<at::Tensor>> indices_list_out;
        for (auto indices_elem: indices_list_in) {
            indices_list_out.push_back(indices_elem);
        }
        #else
        auto indices_list_out = indices.toListOptionalTensor();
        #endif
        <16 spaces>"""
    ).replace("<16 spaces>", " " * 16)


# -- kernel selection ----------------------------------------------------------------

KEYS = ["default", "v1/6;0,1|6;0,1"]


def selection(text: str) -> OperatorSelection:
    return OperatorSelection.from_yaml_text(textwrap.dedent(text))


def test_kernels_of_an_operator_without_kernel_keys_in_the_selection() -> None:
    assert selected_kernel_keys(OperatorSelection.everything(), "aten::add.out", KEYS, None) == KEYS
    allowlist = OperatorSelection.from_allowlist(["aten::add"])
    assert selected_kernel_keys(allowlist, "aten::add.out", KEYS, None) == []


def test_kernel_keys_match_by_dtypes_and_dim_orders_else_the_default_kernel() -> None:
    chosen = selection(
        """
        operators: {aten::add.out: {}}
        et_kernel_metadata:
          aten::add.out:
          - v2/6;0,1|6;0,1
          - v1/3;0,1|3;0,1
        """
    )
    assert selected_kernel_keys(chosen, "aten::add.out", KEYS, None) == KEYS
    assert selected_kernel_keys(chosen, "aten::add.out", ["default"], None) == ["default"]
    with pytest.raises(SpecError, match=re.escape("'v1/3;0,1|3;0,1' of 'aten::add.out'")) as error:
        selected_kernel_keys(chosen, "aten::add.out", KEYS[1:], "sel.yaml")
    assert str(error.value.location) == "sel.yaml"


# -- files, through templates of the test's own ---------------------------------------

ATEN = """\
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  dispatch:
    CPU: add_cpu
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: add_out_cpu
- func: relu(Tensor self) -> Tensor
  dispatch:
    CPU: relu_cpu
  autogen: relu.out
"""

FUNCTIONS = """\
- op: add.out
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::add_out
- op: relu.out
  kernels:
    - arg_meta: null
      kernel_name: torch::executor::relu_out
"""

CUSTOM_OPS = """\
- func: my_ops::scale.out(Tensor self, float factor, *, Tensor(a!) out) -> Tensor(a!)
  kernels:
    - arg_meta: null
      kernel_name: custom::scale_out
"""

TEMPLATES = {
    "Functions.h": "// ${generated_comment}\n${static_dispatch_extra_headers}\n"
    "${Functions_declarations}\n",
    "NativeFunctions.h": "${headers}\n// ${generated_comment}\n${nativeFunctions_declarations}\n",
    "RegisterCodegenUnboxedKernels.cpp": '#include "${fn_header}"\n// ${generated_comment}\n'
    "Kernel kernels[] = {\n    ${unboxed_kernels}\n};\n",
    "RegisterKernels.cpp": '#include "${fn_header}"\n'
    "Kernel kernels[] = {\n    ${unboxed_kernels}\n};\n",
    "RegisterKernels.h": "// ${generated_comment}\n",
    "RegisterDispatchKeyCustomOps.cpp": "${ops_headers}\n${dispatch_anonymous_definitions}\n"
    "${static_init_dispatch_registrations}\nnamespace ${dispatch_namespace} {\n"
    "${dispatch_namespaced_definitions}\n}\n",
    "RegisterSchema.cpp": "TORCH_LIBRARY_FRAGMENT(aten, m) {\n  ${aten_schema_registrations};\n}\n"
    "$schema_registrations\n",
}


@pytest.fixture
def inputs(tmp_path: Path, torchgen_native_dir: Path) -> dict[str, str]:
    """Flags naming a small ATen spec (with torch's tags), kernel YAMLs and templates."""
    (tmp_path / "templates").mkdir()
    for name, text in TEMPLATES.items():
        (tmp_path / "templates" / name).write_text(text)
    for name, text in (
        ("aten.yaml", ATEN),
        ("functions.yaml", FUNCTIONS),
        ("custom.yaml", CUSTOM_OPS),
    ):
        (tmp_path / name).write_text(text)
    return {
        "--source-path": str(tmp_path),
        "--aten-yaml-path": str(tmp_path / "aten.yaml"),
        "--tags-path": str(torchgen_native_dir / "tags.yaml"),
        "--install-dir": str(tmp_path / "out"),
        "--functions-yaml-path": str(tmp_path / "functions.yaml"),
    }


def generate(inputs: dict[str, str], *flags: str) -> tuple[int, str]:
    argv = [item for pair in inputs.items() for item in pair]
    status, _, err = run("executorch", *argv, *flags)
    return status, err


def test_the_files_of_a_small_spec(inputs: dict[str, str]) -> None:
    assert generate(inputs, "--manual_registration") == (0, "")
    out = Path(inputs["--install-dir"])
    assert sorted(p.name for p in out.iterdir()) == [
        "Functions.h",
        "NativeFunctions.h",
        "RegisterKernels.h",
        "RegisterKernelsEverything.cpp",
        "RegisterKernels_0.cpp",
    ]
    tensor, context = "torch::executor::Tensor", "torch::executor::KernelRuntimeContext & context"
    assert (out / "Functions.h").read_text() == textwrap.dedent(
        f"""\
        // @generated by gen.py from Functions.h
        #include "NativeFunctions.h"

        namespace aten {{

        // aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
        TORCH_API inline {tensor} & add_outf({context}, const {tensor} & self, const {tensor} & other, const torch::executor::Scalar & alpha, {tensor} & out) {{
            return ::torch::executor::native::add_out(context, self, other, alpha, out);
        }}


        // aten::relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
        TORCH_API inline {tensor} & relu_outf({context}, const {tensor} & self, {tensor} & out) {{
            return ::torch::executor::native::relu_out(context, self, out);
        }}

        }} // namespace aten
        """  # noqa: E501
    )
    assert (out / "RegisterKernels.h").read_text() == (
        "// @generated by torchgen/gen_executorch.py\n"
    )
    native = (out / "NativeFunctions.h").read_text()
    assert native.splitlines()[3:8] == [
        "// @generated by gen.py from NativeFunctions.h",
        "namespace torch {",
        "namespace executor {",
        "namespace native {",
        f"{tensor} & add_out(const {tensor} & self, const {tensor} & other, "
        f"const torch::executor::Scalar & alpha, {tensor} & out);",
    ]
    kernels = (out / "RegisterKernels_0.cpp").read_text()
    assert kernels == (out / "RegisterKernelsEverything.cpp").read_text()
    assert kernels.count("    Kernel(\n") == 2
    assert '        "aten::relu.out",\n' in kernels
    assert (
        "            torch::executor::native::relu_out(context, self_base, out_base);\n" in kernels
    )


def test_custom_ops_files(inputs: dict[str, str]) -> None:
    custom = str(Path(inputs["--aten-yaml-path"]).parent / "custom.yaml")
    assert generate(inputs, "--custom-ops-yaml-path", custom, "--generate", "sources") == (0, "")
    out = Path(inputs["--install-dir"])
    registered = (out / "RegisterCPUCustomOps.cpp").read_text()
    assert "at::Tensor & wrapper_CPU_out_scale_out(const at::Tensor & self, double factor, " in (
        registered
    )
    assert "  return custom::native::scale_out(self, factor, out);\n" in registered
    assert 'TORCH_LIBRARY_IMPL(my_ops, CPU, m) {\nm.impl("scale.out",\n' in registered
    stub = (out / "RegisterCPUStub.cpp").read_text()
    assert "    return out;\n" in stub
    assert "TORCH_LIBRARY(my_ops, m) {" in (out / "RegisterSchema.cpp").read_text()


def test_several_kernels_of_an_operator_in_the_headers(
    inputs: dict[str, str], tmp_path: Path
) -> None:
    keyed = FUNCTIONS + textwrap.dedent(
        """\
        - op: mul.out
          type_alias: {T0: [Float, Int]}
          dim_order_alias: {D0: [0, 1]}
          kernels:
            - arg_meta: {self: [T0, D0], other: [T0, D0], out: [T0, D0]}
              kernel_name: torch::executor::mul_out
        """
    )
    (tmp_path / "aten.yaml").write_text(
        ATEN
        + "- func: mul.Tensor(Tensor self, Tensor other) -> Tensor\n"
        + "- func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n"
    )
    (tmp_path / "functions.yaml").write_text(keyed)
    status, err = generate(inputs)
    assert status == 1
    assert err.startswith(f"{tmp_path / 'functions.yaml'}:9: error: 'mul.out' has 2 kernels")
    assert generate(inputs, "--generate", "sources") == (0, "")
    kernels = (Path(inputs["--install-dir"]) / "RegisterCodegenUnboxedKernels_0.cpp").read_text()
    assert '"aten::mul.out",\n        "v1/6;0,1|6;0,1|6;0,1",' in kernels
    assert '"aten::mul.out",\n        "v1/3;0,1|3;0,1|3;0,1",' in kernels


def test_a_kernel_without_output_is_an_error_at_its_entry(
    inputs: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "custom.yaml").write_text(
        "- func: my_ops::log(Tensor self) -> ()\n"
        "  kernels:\n    - arg_meta: null\n      kernel_name: custom::log\n"
    )
    status, err = generate(inputs, "--custom-ops-yaml-path", str(tmp_path / "custom.yaml"))
    assert status == 1
    assert err.startswith(
        f"{tmp_path / 'custom.yaml'}:1: error: 'log' returns nothing and has no out argument"
    )
    assert not Path(inputs["--install-dir"]).exists()


def test_a_missing_kernel_yaml_has_no_operators(inputs: dict[str, str], tmp_path: Path) -> None:
    inputs["--functions-yaml-path"] = str(tmp_path / "missing.yaml")
    status, err = generate(inputs, "--generate", "headers")
    assert (status, err) == (
        0,
        f"{tmp_path / 'missing.yaml'}: warning: no such file; read as a file without operators\n",
    )
    functions = (Path(inputs["--install-dir"]) / "Functions.h").read_text()
    assert "inline" not in functions


def test_runs_without_torch(inputs: dict[str, str]) -> None:
    """opgen imports none of torch, torchgen or executorch (the inputs are files)."""
    blocker = textwrap.dedent(
        """\
        import importlib.abc, sys

        class Blocked(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in ("torch", "torchgen", "executorch"):
                    raise ImportError(f"{name} is blocked")
                return None

        sys.meta_path.insert(0, Blocked())
        from opgen.cli import main
        status = main(sys.argv[1:])
        assert not {"torch", "torchgen", "executorch"} & set(sys.modules), "imported"
        sys.exit(status)
        """
    )
    argv = [item for pair in inputs.items() for item in pair]
    done = subprocess.run(
        [sys.executable, "-c", blocker, "executorch", *argv, "--use-aten-lib"],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert (Path(inputs["--install-dir"]) / "RegisterCodegenUnboxedKernels_0.cpp").is_file()


def test_a_source_path_without_templates(inputs: dict[str, str], tmp_path: Path) -> None:
    inputs["--source-path"] = str(tmp_path / "templates")
    status, err = generate(inputs)
    assert status == 1
    assert err.startswith(
        f"{tmp_path / 'templates' / 'templates'}: error: no templates: --source-path names the "
        f"directory holding templates/; it is the templates' own directory: --source-path "
        f"{tmp_path}\n"
    )
    assert generate(inputs, "--dry-run") == (0, "")  # which renders nothing, as upstream
