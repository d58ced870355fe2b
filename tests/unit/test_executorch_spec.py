"""ExecuTorch kernel YAMLs: snippets in, exact kernel keys, kernels and errors out.

A kernel YAML is read against an ATen spec (`ATEN` below). Each kernel is written
here as `namespace::name` of its `BackendMetadata`; each key as the string the
runtime matches. The malformed-executorch corpus (tests/malformed_executorch/)
holds the errors case by case; conformance with upstream's codegen is
tests/conformance/test_executorch_model.py.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.diagnostics import SpecError
from opgen.spec import Spec, load_spec
from opgen.spec.backend import BackendMetadata
from opgen.spec.executorch import (
    DEFAULT_KERNEL_KEY,
    ETKernelIndex,
    ETKernelKey,
    ETKernelKeyOpArgMeta,
    ETParsedYaml,
    ETReadOptions,
    load_executorch_yaml,
)
from opgen.spec.schema import OperatorName

ATEN = """
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  dispatch:
    CPU: add_cpu
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: add_out_cpu
- func: relu(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CPU: relu_cpu
  autogen: relu.out
- func: clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
  dispatch:
    CPU: clamp_cpu
- func: clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: clamp_out_cpu
"""

Read = Callable[..., ETParsedYaml]


@pytest.fixture(scope="module")
def aten(tmp_path_factory: pytest.TempPathFactory) -> Spec:
    path = tmp_path_factory.mktemp("aten") / "native_functions.yaml"
    path.write_text(ATEN.lstrip())
    return load_spec(str(path), None)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "functions.yaml"


@pytest.fixture
def read(aten: Spec, path: Path) -> Read:
    """The kernel YAML written inline (dedented), read against ATEN."""

    def load(text: str, *, custom_ops: bool = False) -> ETParsedYaml:
        path.write_text(textwrap.dedent(text).lstrip())
        return load_executorch_yaml(str(path), aten, ETReadOptions(custom_ops=custom_ops))

    return load


@pytest.fixture
def error_of(read: Read, path: Path) -> Callable[..., str]:
    """Every diagnostic of a bad kernel YAML, with its path written as `$FILE`."""

    def error(text: str, *, custom_ops: bool = False) -> str:
        with pytest.raises(SpecError) as e:
            read(text, custom_ops=custom_ops)
        return str(e.value).replace(str(path), "$FILE")

    return error


def kernels(parsed: ETParsedYaml, name: str) -> list[tuple[str, str]]:
    """An operator's kernels in order: (key string, `namespace::kernel`)."""
    index = parsed.kernel_index.index[OperatorName.parse(name)]
    return [(k.to_native_string(), f"{m.cpp_namespace}::{m.kernel}") for k, m in index.items()]


# --- the default kernel and kernel names


def test_arg_meta_null_is_the_default_kernel_in_the_names_namespace_plus_native(
    read: Read,
) -> None:
    parsed = read("""
        - op: add.out
          kernels:
            - arg_meta: null
              kernel_name: torch::executor::add_out
        """)
    assert kernels(parsed, "add.out") == [("default", "torch::executor::native::add_out")]


def test_a_kernel_without_arg_meta_is_the_default_kernel(read: Read) -> None:
    parsed = read("""
        - op: add.out
          kernels:
            - kernel_name: custom::add_out
        """)
    assert kernels(parsed, "add.out") == [("default", "custom::native::add_out")]


def test_a_kernel_name_without_namespace_is_in_at_native_and_three_levels_is_the_most(
    read: Read,
) -> None:
    parsed = read("""
        - op: add.out
          kernels:
            - arg_meta: null
              kernel_name: add_out_plain
        - op: relu.out
          kernels:
            - arg_meta: null
              kernel_name: vendor::fast::cpu::relu_out
        """)
    assert kernels(parsed, "add.out") == [("default", "at::native::add_out_plain")]
    assert kernels(parsed, "relu.out") == [("default", "vendor::fast::cpu::native::relu_out")]
    metadata = parsed.kernel_index.index[OperatorName.parse("relu.out")][DEFAULT_KERNEL_KEY]
    assert metadata == BackendMetadata("relu_out", False, "vendor::fast::cpu::native")


# --- keys from aliases


def test_an_alias_of_two_dtypes_gives_a_key_each_with_every_argument_using_it_alike(
    read: Read,
) -> None:
    parsed = read("""
        - op: add.out
          type_alias:
            T0: [Double, Float]
          dim_order_alias:
            D0: [0, 1, 2, 3]
            D1: [0, 2, 3, 1]
          kernels:
            - arg_meta: null
              kernel_name: torch::executor::add_out
            - arg_meta:
                self: [T0, D1]
                other: [T0, D0]
                out: [T0, D1]
              kernel_name: torch::executor::add_out_typed
        """)
    # Arguments in name order (other, out, self): upstream's rewrite of a functions
    # YAML sorts every mapping.
    assert kernels(parsed, "add.out") == [
        ("default", "torch::executor::native::add_out"),
        ("v1/7;0,1,2,3|7;0,2,3,1|7;0,2,3,1", "torch::executor::native::add_out_typed"),
        ("v1/6;0,1,2,3|6;0,2,3,1|6;0,2,3,1", "torch::executor::native::add_out_typed"),
    ]


def test_a_custom_ops_yaml_keeps_arg_meta_as_written(read: Read) -> None:
    parsed = read(
        """
        - func: my_ops::scale.out(Tensor x, Tensor y, *, Tensor(a!) out) -> Tensor(a!)
          type_alias:
            T0: [Int]
          dim_order_alias:
            D0: [0, 1]
            D1: [1, 0]
          kernels:
            - arg_meta:
                y: [T0, D1]
                x: [T0, D0]
              kernel_name: my_ops::scale_out
        """,
        custom_ops=True,
    )
    assert kernels(parsed, "scale.out") == [("v1/3;1,0|3;0,1", "my_ops::native::scale_out")]


def test_two_aliases_give_their_product_the_alias_used_first_varying_slowest(read: Read) -> None:
    parsed = read("""
        - op: add.out
          type_alias:
            T0: [Float, Double]
            T1: [Int, Long]
          dim_order_alias:
            D0: [0, 1]
          kernels:
            - arg_meta:
                self: [T0, D0]
                other: [T1, D0]
              kernel_name: add_out_mixed
        """)
    # In name order `other` (T1) comes first, so T1 varies slowest.
    assert [key for key, _ in kernels(parsed, "add.out")] == [
        "v1/3;0,1|6;0,1",
        "v1/3;0,1|7;0,1",
        "v1/4;0,1|6;0,1",
        "v1/4;0,1|7;0,1",
    ]


def test_every_dtype_a_key_can_name_has_executorchs_scalar_type_code(read: Read) -> None:
    parsed = read("""
        - op: relu.out
          type_alias:
            T0: [Byte, Char, Short, Int, Long, Float, Double, Bool]
          dim_order_alias:
            D0: [0]
          kernels:
            - arg_meta:
                self: [T0, D0]
              kernel_name: relu_out
        """)
    codes = [key.split(";")[0].removeprefix("v1/") for key, _ in kernels(parsed, "relu.out")]
    assert codes == ["0", "1", "2", "3", "4", "6", "7", "11"]


def test_dim_orders_print_as_upstream_prints_a_tuple_without_its_parentheses() -> None:
    def string(dim_order: tuple[int, ...]) -> str:
        return ETKernelKeyOpArgMeta("self", "Float", dim_order).to_native_string()

    assert string((0, 1, 2, 3)) == "6;0,1,2,3"
    assert string((0,)) == "6;0,"  # a one-element tuple's comma
    assert string(()) == "6;"


def test_an_empty_arg_meta_is_a_key_of_no_argument(read: Read) -> None:
    parsed = read("""
        - op: relu.out
          kernels:
            - arg_meta: {}
              kernel_name: relu_out_any
        """)
    assert kernels(parsed, "relu.out") == [("v1/", "at::native::relu_out_any")]


def test_gen_from_yaml_is_the_expansion_on_its_own() -> None:
    keys = ETKernelKey.gen_from_yaml(
        {"self": ("T", "D"), "out": ("T", "D")}, {"T": ["Bool", "Long"]}, {"D": [1, 0]}
    )
    assert [k.to_native_string() for k in keys] == ["v1/11;1,0|11;1,0", "v1/4;1,0|4;1,0"]
    assert keys[0].arg_meta[1] == ETKernelKeyOpArgMeta("out", "Bool", (1, 0))
    assert DEFAULT_KERNEL_KEY.to_native_string() == "default"


# --- operators


def test_op_takes_only_the_schema_from_the_aten_spec_derived_operators_included(
    read: Read, path: Path
) -> None:
    parsed = read("""
        - op: relu.out
        - op: aten::add.Tensor
        - func: my_ops::scale.out(Tensor x, float factor, *, Tensor(a!) out) -> Tensor(a!)
        """)
    assert [(f.namespace, str(f.func)) for f in parsed.native_functions] == [
        ("aten", "relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"),
        ("aten", "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"),
        ("my_ops", "scale.out(Tensor x, float factor, *, Tensor(a!) out) -> Tensor(a!)"),
    ]
    add = parsed.native_functions[1]
    assert [v.value for v in add.variants] == ["function"]  # not the ATen entry's
    assert [str(f.loc) for f in parsed.native_functions] == [
        f"{path}:1",
        f"{path}:2",
        f"{path}:3",
    ]
    assert parsed.from_aten == {OperatorName.parse("relu.out"), OperatorName.parse("add.Tensor")}


def test_an_op_entry_is_read_as_a_spec_entry_with_errors_where_it_is_written(
    error_of: Callable[..., str],
) -> None:
    # The operator's schema is at its 'op:' value.
    assert error_of("- op: add.out\n- op: add.out\n") == (
        "$FILE:2:7: error: operator 'add.out' is already in this file, on line 1"
    )
    assert error_of("""
        - op: clamp.out
          cpp_no_default_args: [maximum]
        """) == (
        "$FILE:2:25: error: cpp_no_default_args names 'maximum', which is not an argument "
        "with a default"
    )
    assert error_of("- op: add.out\n  structured_delegate: add.Tensor\n") == (
        "$FILE:2:24: error: 'structured_delegate' is not allowed on an out= operator; "
        "did you mean 'structured'?"
    )


def test_a_custom_ops_yaml_has_no_op_entries(error_of: Callable[..., str]) -> None:
    assert error_of("- op: add.out\n", custom_ops=True) == (
        "$FILE:1:3: error: a custom-ops YAML is read without the ATen spec, so its entries "
        "give their schema with 'func:', not an operator name with 'op:'"
    )


def test_errors_are_collected_over_the_file(error_of: Callable[..., str]) -> None:
    assert error_of("""
        - op: add.ou
        - op: relu.out
          kernels:
            - arg_meta: null
        - op: clamp.out
          kernals: []
        """).splitlines() == [
        "$FILE:1:7: error: 'add.ou' is not an operator of the ATen spec; did you mean "
        "'add.out'? (an operator of your own has 'func:' and its schema)",
        "$FILE:4:7: error: a kernel needs 'kernel_name:', the C++ function that implements it",
        "$FILE:6:3: error: unknown key 'kernals'; did you mean 'kernels'?",
    ]


# --- which kernels a file keeps


def test_without_kernels_anywhere_dispatch_tables_give_the_default_kernels(read: Read) -> None:
    parsed = read("""
        - op: add.out
          dispatch:
            CPU: torch::executor::add_out
        - op: relu.out
        - op: clamp.out
          dispatch: {}
        """)
    assert kernels(parsed, "add.out") == [("default", "torch::executor::native::add_out")]
    # No dispatch table: the implicit CompositeImplicitAutograd kernel, named as the operator.
    assert kernels(parsed, "relu.out") == [("default", "at::native::relu_out")]
    assert OperatorName.parse("clamp.out") not in parsed.kernel_index.index


def test_of_several_dispatch_keys_the_last_in_the_files_order_of_keys_wins(read: Read) -> None:
    parsed = read("""
        - op: add.out
          dispatch:
            CUDA: add_out_cuda
            CPU: add_out_cpu
        - op: clamp.out
          dispatch:
            Meta: clamp_out_meta
            CPU: clamp_out_cpu
        """)
    # Each table is read sorted (CPU, CUDA; CPU, Meta), so the file's keys are CPU, CUDA, Meta.
    assert kernels(parsed, "add.out") == [("default", "at::native::add_out_cuda")]
    assert kernels(parsed, "clamp.out") == [("default", "at::native::clamp_out_meta")]
    assert [index.dispatch_key.name for index in parsed.backend_indices] == ["CPU", "CUDA", "Meta"]


def test_with_kernels_dispatch_tables_give_none_and_a_warning(read: Read, path: Path) -> None:
    parsed = read("""
        - op: add.out
          kernels:
            - arg_meta: null
              kernel_name: add_out
        - op: relu.out
          dispatch:
            CPU: relu_out
        - op: clamp.out
          kernels: []
        """)
    assert list(map(str, parsed.kernel_index.index)) == ["add.out"]
    assert [str(w) for w in parsed.warnings] == [
        f"{path}:6:3: warning: 'dispatch:' gives no kernel in a file whose entries have "
        "'kernels:'; list this kernel under 'kernels:' (with 'arg_meta: null' for the "
        "default one)"
    ]


def test_an_empty_file_has_no_operators(read: Read) -> None:
    parsed = read("# nothing yet\n")
    assert parsed.native_functions == ()
    assert parsed.kernel_index.index == {}


def test_get_kernels_and_merge_indices(read: Read) -> None:
    functions = read("""
        - op: add.out
          kernels:
            - kernel_name: add_out
        - op: relu.out
        """)
    add, relu = functions.native_functions
    assert list(functions.kernel_index.get_kernels(add)) == [DEFAULT_KERNEL_KEY]
    assert functions.kernel_index.get_kernels(relu) == {}
    replaced = BackendMetadata("add_out_custom", False, "custom::native")
    custom = ETKernelIndex({add.func.name: {DEFAULT_KERNEL_KEY: replaced}})
    merged = ETKernelIndex.merge_indices(functions.kernel_index, custom)
    assert merged.get_kernels(add) == {DEFAULT_KERNEL_KEY: replaced}


# --- `opgen check --executorch`


def test_check_reads_the_yaml_against_native_yaml_or_aten_yaml_path(tmp_path: Path) -> None:
    native = tmp_path / "native_functions.yaml"
    native.write_text(ATEN.lstrip())
    et = tmp_path / "functions.yaml"
    et.write_text("- op: relu.out\n  kernels:\n    - kernel_name: relu_out\n")
    for argv in (
        ["check", str(native), "--executorch", str(et)],
        ["check", "--aten-yaml-path", str(native), "--executorch", str(et)],
    ):
        out, err = io.StringIO(), io.StringIO()
        assert main(argv, out, err) == 0, err.getvalue()
        assert out.getvalue().splitlines()[1] == (
            f"{et}: ok: 1 operator (1 by 'op:', 0 by 'func:'), 1 kernel key"
        )
    out, err = io.StringIO(), io.StringIO()
    argv = ["check", str(et), "--aten-yaml-path", str(native), "--executorch", str(et)]
    assert main(argv, out, err) == 2
    assert err.getvalue() == "opgen check: error: NATIVE_YAML and --aten-yaml-path name two specs\n"


def test_check_werror_fails_on_an_ignored_dispatch_table(tmp_path: Path) -> None:
    native = tmp_path / "native_functions.yaml"
    native.write_text(ATEN.lstrip())
    et = tmp_path / "functions.yaml"
    et.write_text(
        "- op: relu.out\n  kernels:\n    - kernel_name: relu_out\n"
        "- op: add.out\n  dispatch:\n    CPU: add_out\n"
    )
    argv = ["check", str(native), "--executorch", str(et)]
    assert main(argv, io.StringIO(), io.StringIO()) == 0
    err = io.StringIO()
    assert main([*argv, "--werror"], io.StringIO(), err) == 1
    assert f"{et}:5:3: warning: 'dispatch:' gives no kernel" in err.getvalue()
