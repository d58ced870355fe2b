"""Mistakes in a library's C++ surface when it is built, at the place they are made: a kernel
defined away from its declaration fails to link (the generated CMake function), and a C++
error in a gradient formula points at derivatives.yaml. One tiny library each."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.examples.example_build import compile_library

from opgen.cli import main

torch = pytest.importorskip("torch")
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="GNU toolchain messages")


def generate(directory: Path, spec: str, derivatives: str | None = None) -> Path:
    (directory / "native_functions.yaml").write_text(spec, encoding="utf-8")
    if derivatives is not None:
        (directory / "derivatives.yaml").write_text(derivatives, encoding="utf-8")
    native, out = str(directory / "native_functions.yaml"), directory / "out"
    assert main(["torch-library", native, "-o", str(out)], io.StringIO(), io.StringIO()) == 0
    return out


@linux
@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_a_kernel_in_the_wrong_namespace_fails_to_link(tmp_path: Path) -> None:
    """`CPU: hid::scale_shift_cpu` declares the kernel in `hid`; defined in `hid::native`, it
    is flagged where it is defined and is an undefined symbol at link time, not at import.
    With no CMAKE_BUILD_TYPE, everything is compiled with -O2."""
    spec = "- func: hid::scale_shift(Tensor x, float a, float b) -> Tensor\n  dispatch:\n"
    generate(tmp_path, spec + "    CPU: hid::scale_shift_cpu\n")
    (tmp_path / "kernels.cpp").write_text(
        '#include "hid/kernels.h"\n\n'
        "namespace hid::native {\n"
        "at::Tensor scale_shift_cpu(const at::Tensor& x, double a, double b) {\n"
        "  return x * a + b;\n"
        "}\n"
        "}  // namespace hid::native\n"
    )
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\n"
        "project(hid CXX)\n"
        "find_package(Torch REQUIRED)\n"
        "include(out/hid_library.cmake)\n"
        "opgen_add_hid_library(hid_C kernels.cpp)\n"
    )
    env = {**os.environ, "LC_ALL": "C"}
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = ["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "build"), *generator]
    configure += [f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}"]
    configure += ["-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"]
    subprocess.run(configure, check=True, capture_output=True, env=env)
    build = ["cmake", "--build", str(tmp_path / "build"), "--parallel", "2"]
    done = subprocess.run(build, capture_output=True, text=True, env=env)
    assert done.returncode != 0
    assert (
        "kernels.cpp:4:12: warning: no previous declaration for 'at::Tensor "
        "hid::native::scale_shift_cpu(const at::Tensor&, double, double)' "
        "[-Wmissing-declarations]\n"
    ) in done.stdout
    assert (
        "undefined reference to `hid::scale_shift_cpu(at::Tensor const&, double, double)'\n"
    ) in done.stdout
    commands = json.loads((tmp_path / "build" / "compile_commands.json").read_text())
    assert [" -O2 " in c["command"] for c in commands] == [True, True]


@linux
def test_a_formula_error_points_at_derivatives_yaml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiler names the formula's line and column in derivatives.yaml, and shows it."""
    spec = "- func: bad::twice(Tensor x) -> Tensor\n  dispatch:\n    CPU: twice_cpu\n"
    derivatives = (
        "- name: bad::twice(Tensor x) -> Tensor\n"
        "  x: grad * x.no_such_method()\n"  # opgen does not know Tensor's methods
    )
    out = generate(tmp_path, spec, derivatives)
    monkeypatch.setenv("LC_ALL", "C")  # plain quotes in the compiler's messages
    with pytest.raises(RuntimeError) as error:
        sources = [str(out / "src" / "bad_library.cpp")]
        compile_library("bad_C", sources, out / "include", tmp_path / "build")
    yaml = tmp_path / "derivatives.yaml"
    assert (
        f"{yaml}:2:15: error: 'class at::Tensor' has no member named 'no_such_method'\n"
        "    2 |   x: grad * x.no_such_method()\n"
        "      |               ^~~~~~~~~~~~~~\n"
    ) in str(error.value)
