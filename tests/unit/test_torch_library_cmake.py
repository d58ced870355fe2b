"""`opgen torch-library`'s CMake function and kernel header, exact text: an optimised build
by default, and a kernel defined away from its declaration caught at build time."""

from __future__ import annotations

import io
from pathlib import Path

from opgen.cli import main

SPEC = """\
- func: hid::scale_shift(Tensor x, float a, float b) -> Tensor
  dispatch:
    CPU: hid::scale_shift_cpu
    Meta: scale_shift_meta
"""


def generate(tmp_path: Path) -> Path:
    (tmp_path / "native_functions.yaml").write_text(SPEC, encoding="utf-8")
    native, out = str(tmp_path / "native_functions.yaml"), tmp_path / "out"
    assert main(["torch-library", native, "-o", str(out)], io.StringIO(), io.StringIO()) == 0
    return out


def test_the_cmake_function(tmp_path: Path) -> None:
    text = (generate(tmp_path) / "hid_library.cmake").read_text()
    assert text.endswith(
        "function(opgen_add_hid_library target)\n"
        "  add_library(${target} SHARED ${OPGEN_hid_SOURCES} ${ARGN})\n"
        "  target_include_directories(${target} PRIVATE ${OPGEN_hid_INCLUDE_DIR})\n"
        "  target_link_libraries(${target} PRIVATE ${TORCH_LIBRARIES})\n"
        "  target_compile_features(${target} PRIVATE cxx_std_17)\n"
        "  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)\n"
        "  if(NOT CMAKE_BUILD_TYPE AND NOT multi_config)\n"
        "    target_compile_options(${target} PRIVATE $<IF:$<CXX_COMPILER_ID:MSVC>,/O2,-O2>)\n"
        "  endif()\n"
        '  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")\n'
        "    target_compile_options(${target} PRIVATE -Wmissing-declarations)\n"
        "  endif()\n"
        '  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")\n'
        '    target_link_options(${target} PRIVATE "LINKER:--no-undefined")\n'
        "  endif()\n"
        "endfunction()\n"
    )


def test_the_kernel_header_is_the_declaration(tmp_path: Path) -> None:
    """It says where each kernel must be defined, and declares it there."""
    text = (generate(tmp_path) / "include/hid/kernels.h").read_text()
    assert (
        "// in the spec's `dispatch:` tables (native calling convention). This header is\n"
        "// their only declaration: include it where you define them, and define each in\n"
        "// its namespace here (`<ns>::native` for a kernel named without namespace, else\n"
        "// the spec's) with its signature here. A kernel defined otherwise is an\n"
        "// undefined symbol when the library links (with --no-undefined, as the CMake\n"
        "// function and the example's setup.py link), not when it is imported.\n"
    ) in text
    assert text.endswith(
        "namespace hid {\n"
        "at::Tensor scale_shift_cpu(const at::Tensor & x, double a, double b);\n"
        "} // namespace hid\n\n"
        "namespace hid::native {\n"
        "at::Tensor scale_shift_meta(const at::Tensor & x, double a, double b);\n"
        "} // namespace hid::native\n"
    )
