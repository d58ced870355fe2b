"""`opgen.building`, setup.py's helper, without compiling: what it returns for setup(), what it
writes on standard error, and the one line that ends a failed build.

The builds themselves are in test_tutorials.py (the tutorials' setup.py files) and
test_pip_diagnostics.py (a bad spec under `pip install`).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from opgen.building import BuildFailed, mlx_modules, run_opgen, torch_library
from opgen.building.cmake_build import BuildWithCMake, OpgenExtension

PYTHON_ONLY = """\
- func: pyonly::twice(Tensor x) -> Tensor
  python_dispatch:
    CPU: pyonly_kernels:twice
  fake: pyonly_kernels:twice
"""
KERNELS = "def twice(x):\n    return x * 2\n"


def test_importing_it_imports_neither_torch_nor_mlx() -> None:
    code = "import sys, opgen.building; print(sorted({m.split('.')[0] for m in sys.modules}))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    loaded = ast.literal_eval(done.stdout)
    assert "setuptools" in loaded
    assert "torch" not in loaded
    assert "mlx" not in loaded


def test_a_failed_run_ends_the_build_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The diagnostics go to standard error as opgen writes them; the exception's message
    is the line setuptools prints last, and a SystemExit has no traceback."""
    monkeypatch.chdir(tmp_path)
    Path("bad.yaml").write_text("- func: bad::f(Tensr x) -> Tensor\n  dispatch:\n    CPU: f\n")
    with pytest.raises(BuildFailed) as failed:
        run_opgen(["torch-library", "bad.yaml", "-o", "out"])
    assert isinstance(failed.value, SystemExit)
    assert failed.value.code == (
        "error: opgen torch-library bad.yaml -o out failed: bad input, located above "
        "(exit status 1)"
    )
    out, err = capfd.readouterr()
    assert out == ""
    assert err == (
        "bad.yaml:1:16: error: unknown type 'Tensr'; did you mean 'Tensor'?\n"
        "  - func: bad::f(Tensr x) -> Tensor\n"
        "                 ^~~~~\n"
    )


def test_a_usage_error_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BuildFailed) as failed:
        run_opgen(["torch-library", "missing.yaml"])
    assert failed.value.code == (
        "error: opgen torch-library missing.yaml failed: bad usage, described above (exit status 2)"
    )
    assert "the following arguments are required: -o/--output-dir" in capfd.readouterr().err


def test_a_library_without_cpp_is_a_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """No extension to compile, so torch is not needed to build it. opgen's summary goes to
    standard error with the rest (setup.py's standard output is setuptools')."""
    monkeypatch.chdir(tmp_path)
    Path("native_functions.yaml").write_text(PYTHON_ONLY)
    Path("pyonly_kernels.py").write_text(KERNELS)
    assert torch_library() == {
        "packages": ["pyonly"],
        "package_dir": {"pyonly": "build/generated/pyonly"},
        "package_data": {"pyonly": ["__init__.pyi", "py.typed"]},
    }
    out, err = capfd.readouterr()
    assert (out, err) == (
        "",
        "pyonly: 1 operator, 0 with gradient formulas (Python only): 3 files in "
        "build/generated, wrote 3\n",
    )
    with pytest.raises(BuildFailed) as failed:
        torch_library(kernels=["kernels.cpp"])
    assert failed.value.code == (
        "error: native_functions.yaml names no C++ kernel, so there is nothing to compile "
        "kernels.cpp into: leave out kernels="
    )


def test_a_library_with_cpp_is_an_extension_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Its warnings are written once: the listing runs that follow do not repeat them."""
    pytest.importorskip("torch")
    monkeypatch.chdir(tmp_path)
    Path("ops.yaml").write_text("- func: tl::twice(Tensor x) -> Tensor\n  dispatch:\n    CPU: f\n")
    keywords = torch_library("ops.yaml", kernels=["k.cpp"], options=["--package", "tlpkg"])
    [extension] = keywords.pop("ext_modules")
    assert keywords.pop("cmdclass")["build_ext"].__name__ == "BuildExtension"
    assert keywords == {
        "packages": ["tlpkg"],
        "package_dir": {"tlpkg": "build/generated/tlpkg"},
        "package_data": {"tlpkg": ["__init__.pyi", "py.typed"]},
    }
    assert extension.name == "tlpkg._C"
    assert extension.sources == ["k.cpp", "build/generated/src/tl_library.cpp"]
    assert str(tmp_path / "build/generated/include") in extension.include_dirs
    assert {"-O2", "-Wmissing-declarations"} <= set(extension.extra_compile_args)
    warning = "ops.yaml:1:9: warning: 'tl::twice' has no fake kernel"
    assert capfd.readouterr().err.count(warning) == 1


def test_mlx_modules_are_built_with_cmake() -> None:
    keywords = mlx_modules(
        {"pkg.ops": "ops.yaml", "kernels": "kernels.yaml"}, options=["--no-derivatives"]
    )
    assert keywords["cmdclass"] == {"build_ext": BuildWithCMake}
    extensions = keywords["ext_modules"]
    assert all(isinstance(e, OpgenExtension) for e in extensions)
    assert [(e.name, e.opgen, e.project) for e in extensions] == [
        ("pkg.ops", ("mlx", "ops.yaml", "--no-derivatives"), "."),
        ("kernels", ("mlx", "kernels.yaml", "--no-derivatives"), "."),
    ]
