"""`opgen executorch-oplist` and `opgen executorch-op-variants`: their flags (upstream's
and no others), usage errors (status 2), the files they write, bad input (status 1), and
the YAML writer against PyYAML's `safe_dump`."""

from __future__ import annotations

import io
import os
import textwrap
from pathlib import Path

import pytest
import yaml

from opgen.cli import main
from opgen.targets.contract import RunOptions, generate
from opgen.targets.executorch_oplist.command import TARGET
from opgen.targets.executorch_oplist.options import OplistOptions, parse_root_ops

EMPTY = """\
build_features: []
custom_classes: []
et_kernel_metadata: {}
include_all_non_op_selectives: false
include_all_operators: false
kernel_metadata: {}
operators: {}
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def oplist(tmp_path: Path, *argv: str) -> str:
    """What `opgen executorch-oplist ARGV` writes (it must succeed silently)."""
    output = tmp_path / "selected_operators.yaml"
    assert run("executorch-oplist", *argv, "--output_path", str(output)) == (0, "", "")
    return output.read_text()


def test_nothing_selected(tmp_path: Path) -> None:
    assert oplist(tmp_path) == EMPTY
    assert oplist(tmp_path, "--include_all_operators") == EMPTY.replace(
        "include_all_operators: false", "include_all_operators: true"
    )


def test_root_ops_and_ops_dict(tmp_path: Path) -> None:
    text = oplist(
        tmp_path,
        "--root_ops=aten::mul.out, aten::add.out,,",
        '--ops_dict={"aten::add.out": ["Float", "v1/3;0,1", "Float"], "aten::sub.out": []}',
        "--include-all-operators",
    )
    op = """\
    debug_info:
    - None
    include_all_overloads: false
    is_root_operator: true
    is_used_for_training: true
"""
    assert text == textwrap.dedent(
        """\
        build_features: []
        custom_classes: []
        et_kernel_metadata:
          aten::add.out:
          - default
          - v1/3;0,1
          - v1/6;
          aten::mul.out:
          - default
          aten::sub.out:
          - default
        include_all_non_op_selectives: false
        include_all_operators: true
        kernel_metadata: {}
        operators:
        """
    ) + "".join(f"  {name}:\n{op}" for name in ("aten::add.out", "aten::mul.out", "aten::sub.out"))


@pytest.mark.parametrize(
    ("text", "ops"),
    [
        ("a,b", ("a", "b")),
        (" a , b ,", ("a", "b")),
        ("a b  c", ("a", "b", "c")),
        ("a b,c", ("a b", "c")),  # a comma anywhere: commas only
        ("a\tb", ("a\tb",)),  # spaces only, not other whitespace
    ],
)
def test_root_ops_are_split_as_upstream_splits_them(text: str, ops: tuple[str, ...]) -> None:
    assert parse_root_ops(text) == ops


def test_names_yaml_would_misread_are_quoted(tmp_path: Path) -> None:
    text = oplist(tmp_path, "--root_ops", "on,a: b,1:20")
    assert "\n  '1:20':\n" in text and "\n  'a: b':\n" in text and "\n  'on':\n" in text


def test_output_path_may_be_a_directory(tmp_path: Path) -> None:
    assert run("executorch-oplist", "--output_path", str(tmp_path)) == (0, "", "")
    assert (tmp_path / "selected_operators.yaml").read_text() == EMPTY
    new = tmp_path / "new" / ""
    assert run("executorch-oplist", "--output_path", str(new) + os.sep) == (0, "", "")
    assert (tmp_path / "new" / "selected_operators.yaml").read_text() == EMPTY
    named = tmp_path / "deeper" / "ops.yaml"
    assert run("executorch-oplist", "--output", str(named)) == (0, "", "")  # abbreviated
    assert named.read_text() == EMPTY


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: --output_path"),
        (["--output_path", "y", "--output-path", "x"], "unrecognized arguments: --output-path x"),
        (["--output_path", "x", "--ops_dict", "{"], "--ops_dict is not valid JSON"),
        (["--output_path", "x", "--ops_dict", "[]"], "--ops_dict must be a JSON object"),
        (
            ["--output_path", "x", "--ops_dict", '{"aten::add.out": "Float"}'],
            "--ops_dict: the kernels of 'aten::add.out' must be a list of dtype names or "
            'kernel keys (strings), not "Float"',
        ),
        (
            ["--output_path", "x", "--ops_dict", '{"aten::add.out": ["Half"]}'],
            "--ops_dict: 'Half' (for 'aten::add.out') is neither a kernel key ('v1/...') nor a "
            "dtype; the dtypes are Byte, Char, Short, Int, Long, Float, Double, Bool, QInt8, "
            "QUInt8, QInt32, QUInt4X2, QUInt2X4",
        ),
    ],
)
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run("executorch-oplist", *argv)
    assert status == 2 and out == "" and message in err + capsys.readouterr().err


def test_a_kernel_yaml_is_read_for_its_names(tmp_path: Path) -> None:
    kernels = tmp_path / "functions.yaml"
    kernels.write_text(
        textwrap.dedent(
            """\
            - op: add.out
              kernels:
                - arg_meta: null
                  kernel_name: torch::executor::add_out
            - func: my_ops::mul3.out(Tensor input, *, Tensor(a!) output) -> Tensor(a!)
              kernels: []
            - op: custom::relu
            - func: neg(Tensor self) -> Tensor
            """
        )
    )
    text = oplist(tmp_path, "--ops_schema_yaml_path", str(kernels))
    selection = yaml.safe_load(text)
    assert list(selection["operators"]) == [
        "aten::add.out", "aten::neg", "custom::relu", "my_ops::mul3.out"
    ]  # fmt: skip
    assert {op["debug_info"][0] for op in selection["operators"].values()} == {str(kernels)}


def test_kernel_yaml_errors_are_located(tmp_path: Path) -> None:
    kernels = tmp_path / "functions.yaml"
    kernels.write_text("- op: add.out\n- func: a::b::c(Tensor x) -> Tensor\n- 3\n- {}\n")
    status, out, err = run(
        "executorch-oplist", "--ops_schema_yaml_path", str(kernels), "--output_path", "x"
    )
    assert (status, out) == (1, "")
    assert err == (
        f"{kernels}:2:9: error: operator namespace 'a::b' must be one name\n"
        "  - func: a::b::c(Tensor x) -> Tensor\n"
        "          ^~~~~~\n"
        f"{kernels}:3:3: error: an entry must be a mapping with 'op:' or 'func:', not the "
        "number 3\n"
        "  - 3\n"
        "    ^\n"
        f"{kernels}:4:3: error: an entry needs 'op:' or 'func:'\n"
        "  - {}\n"
        "    ^\n"
    )


def test_a_missing_model_is_bad_input(tmp_path: Path) -> None:
    model = tmp_path / "missing.pte"
    status, out, err = run(
        "executorch-oplist", "--model_file_path", str(model), "--output_path", str(tmp_path)
    )
    assert (status, out, err) == (1, "", f"{model}: error: no such file\n")
    assert not (tmp_path / "selected_operators.yaml").exists()


def test_a_bad_model_is_one_line_quoting_nothing(tmp_path: Path) -> None:
    model = tmp_path / "model.pte"
    model.write_bytes(b"PK\x03\x04 a zip\nof\nlines\n")
    status, out, err = run(
        "executorch-oplist", "--model_file_path", str(model), "--output_path", "x"
    )
    assert (status, out) == (1, "")
    assert err == (
        f"{model}: error: not an ExecuTorch program: the file identifier at byte 4 is "
        "b' a z', not 'ET12' (a .pte) or 'BP08' (a bundled program)\n"
    )


def test_the_python_api(tmp_path: Path) -> None:
    options = OplistOptions("ops.yaml", RunOptions(str(tmp_path)), root_ops=("aten::add.out",))
    (files,) = generate(TARGET, options).outputs
    assert files.paths() == ["ops.yaml"]
    assert "aten::add.out:\n  - default\n" in files.text("ops.yaml")


# executorch-op-variants


def variants(tmp_path: Path, selected: str, *flags: str) -> tuple[int, str, str]:
    path = tmp_path / "selected_operators.yaml"
    path.write_text(textwrap.dedent(selected))
    return run("executorch-op-variants", *flags, f"--yaml-file={path}", f"--output-dir={tmp_path}")


HEADER = """\
#pragma once
/**
 * Generated by executorch/codegen/tools/gen_selected_op_variants.py
 */

inline constexpr bool should_include_kernel_dtype(
  const char *operator_name,
  executorch::aten::ScalarType scalar_type
) {
  return %s;
}
"""


def test_the_dtypes_each_kernel_keeps(tmp_path: Path) -> None:
    selected = """\
        et_kernel_metadata:
          aten::add.out:
          - v1/6;0,1|3;0,1
          - v1/11;0
          my::op: [default, v1/6;0]
          aten::mul.out: [v1/6;0, default, v1/4;0]
          aten::relu.out: [v1]
        """
    assert variants(tmp_path, selected) == (0, "", "")
    body = (
        '((std::string_view(operator_name).compare("add.out") == 0)\n'
        "        && (scalar_type == executorch::aten::ScalarType::Bool"
        " || scalar_type == executorch::aten::ScalarType::Float"
        " || scalar_type == executorch::aten::ScalarType::Int))\n"
        ' || ((std::string_view(operator_name).compare("my::op") == 0)\n'
        "        && (true))\n"
        ' || ((std::string_view(operator_name).compare("mul.out") == 0)\n'
        "        && (scalar_type == executorch::aten::ScalarType::Float))\n"
        ' || ((std::string_view(operator_name).compare("relu.out") == 0)\n'
        "        && (true))"
    )
    assert (tmp_path / "selected_op_variants.h").read_text() == HEADER % body


def test_no_kernel_metadata_keeps_everything(tmp_path: Path) -> None:
    assert variants(tmp_path, "operators: {}\n", "--yaml_file_path=unused") == (0, "", "")
    assert (tmp_path / "selected_op_variants.h").read_text() == HEADER % "true"


def test_a_string_of_keys_is_read_as_its_characters(tmp_path: Path) -> None:
    status, out, err = variants(tmp_path, "et_kernel_metadata:\n  aten::add.out: default\n")
    path = tmp_path / "selected_operators.yaml"
    assert (status, out) == (0, "")
    assert err.startswith(
        f"{path}:2:18: warning: the kernel keys of 'aten::add.out' should be a list; this "
        "string is read as its characters\n"
    )


def test_an_unknown_dtype_is_bad_input(tmp_path: Path) -> None:
    status, out, err = variants(tmp_path, "et_kernel_metadata:\n  add.out: [v1/30;0]\n")
    path = tmp_path / "selected_operators.yaml"
    assert (status, out) == (1, "")
    assert err.startswith(
        f"{path}:2:13: error: kernel key 'v1/30;0' of 'add.out' has dtype '30', which is not a "
        "ScalarType number (0 to 29)\n"
    )
    assert not (tmp_path / "selected_op_variants.h").exists()


def test_op_variants_flags_are_required(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("executorch-op-variants", "--output-dir", "x")[0] == 2
    assert "the following arguments are required: --yaml-file-path/--yaml_file_path" in (
        capsys.readouterr().err
    )
