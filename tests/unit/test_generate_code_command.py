"""`opgen generate-code` flags: generate_code.py's, in both spellings, and where its inputs are."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from opgen.cli import build_parser, main
from opgen.targets.generate_code.command import find_autograd_dir, options_from
from opgen.targets.generate_code.options import Subset


def run(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    status = main(list(argv), out=io.StringIO(), err=err)
    return status, err.getvalue()


def checkout(root: Path) -> Path:
    """A checkout's layout: its spec, and tools/autograd at the root."""
    native = root / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    (native / "native_functions.yaml").write_text("")
    (root / "tools" / "autograd").mkdir(parents=True)
    (root / "tools" / "autograd" / "derivatives.yaml").write_text("")
    (root / "version.txt").write_text("2.13.0\n")
    return native / "native_functions.yaml"


def packaged(root: Path) -> Path:
    """torchgen's packaged layout: packaged/ATen beside packaged/autograd."""
    native = root / "torchgen" / "packaged" / "ATen" / "native"
    native.mkdir(parents=True)
    (native / "native_functions.yaml").write_text("")
    (root / "torchgen" / "packaged" / "autograd").mkdir()
    (root / "torchgen" / "packaged" / "autograd" / "derivatives.yaml").write_text("")
    return native / "native_functions.yaml"


def test_tools_autograd_is_found_in_a_checkout(tmp_path: Path) -> None:
    assert find_autograd_dir(str(checkout(tmp_path))) == str(tmp_path / "tools" / "autograd")


def test_autograd_is_found_beside_the_packaged_aten(tmp_path: Path) -> None:
    found = find_autograd_dir(str(packaged(tmp_path)))
    assert found == str(tmp_path / "torchgen" / "packaged" / "autograd")


def test_without_tools_autograd_the_flag_is_asked_for(tmp_path: Path) -> None:
    native = tmp_path / "native_functions.yaml"
    status, err = run("generate-code", "--native-functions-path", str(native))
    assert (status, err) == (
        2,
        f"opgen generate-code: error: no tools/autograd (derivatives.yaml) found for "
        f"{native}: neither <root>/tools/autograd of a checkout nor packaged/autograd beside "
        "packaged/ATen; give --autograd-dir\n",
    )


def test_the_native_functions_path_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("generate-code") == (2, "")
    assert "the following arguments are required: --native-functions-path" in (
        capsys.readouterr().err
    )


def test_two_selections_are_a_usage_error(tmp_path: Path) -> None:
    native = str(checkout(tmp_path))
    status, err = run(
        "generate-code",
        "--native-functions-path",
        native,
        "--selected-op-list-path",
        "a.yaml",
        "--operators-yaml-path",
        "b.yaml",
    )
    assert (status, err) == (
        2,
        "opgen generate-code: error: --selected-op-list-path and --operators-yaml-path "
        "cannot be given together\n",
    )


def test_layout_under_the_gen_dir(tmp_path: Path) -> None:
    native = str(checkout(tmp_path))
    args = build_parser().parse_args(
        ["generate-code", "--native-functions-path", native, "--gen-dir", "g"]
    )
    options = options_from(args)
    assert options.autograd_out == os.path.join("g", "torch", "csrc", "autograd", "generated")
    assert options.functionalization_out == os.path.join(
        "g", "torch", "csrc", "functionalization", "generated"
    )
    assert options.lazy_out == os.path.join("g", "torch", "csrc", "lazy", "generated")
    assert options.python_install_dir == os.path.join(
        "g", "torch", "testing", "_internal", "generated"
    )
    assert options.tags_yaml == "aten/src/ATen/native/tags.yaml"  # upstream's, cwd-relative
    assert str(options.release) == "2.13"  # from the checkout's version.txt


def test_install_dir_takes_the_python_file_too(tmp_path: Path) -> None:
    native = str(checkout(tmp_path))
    args = build_parser().parse_args(
        ["generate-code", "--native-functions-path", native, "--install_dir", "i"]
    )
    options = options_from(args)
    assert options.autograd_out == os.path.join("i", "autograd", "generated")
    assert options.python_install_dir == "i"


def test_underscored_spellings(tmp_path: Path) -> None:
    native = str(checkout(tmp_path))
    dashed = [
        "--native-functions-path",
        native,
        "--tags-path",
        "t.yaml",
        "--gen-dir",
        "g",
        "--subset",
        "libtorch",
        "--disable-autograd",
        "--operators-yaml-path",
        "ops.yaml",
        "--force-schema-registration",
        "--gen-lazy-ts-backend",
        "--per-operator-headers",
    ]
    underscored = [flag.replace("-", "_") if flag.startswith("--") else flag for flag in dashed]
    underscored = ["--" + flag[2:] if flag.startswith("__") else flag for flag in underscored]
    for argv in (dashed, underscored):
        options = options_from(build_parser().parse_args(["generate-code", *argv]))
        assert options.subset is Subset.LIBTORCH
        assert options.disable_autograd and options.gen_lazy_ts_backend
        assert options.per_operator_headers
        assert options.operators_yaml_path == "ops.yaml"
        assert options.tags_yaml == "t.yaml"


def test_unknown_subset_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("generate-code", "--native-functions-path", "n.yaml", "--subset", "all")[0] == 2
    assert "invalid choice: 'all'" in capsys.readouterr().err


def test_a_legacy_list_that_is_not_a_list_is_located(tmp_path: Path) -> None:
    native = checkout(tmp_path)
    listed = tmp_path / "ops.yaml"
    listed.write_text("aten::add: true\n")
    status, err = run(
        "generate-code",
        "--native-functions-path",
        str(native),
        "--selected-op-list-path",
        str(listed),
    )
    assert status == 1
    assert err.startswith(
        f"{listed}:1:1: error: the selected operator list must be a list of operator names\n"
    )
