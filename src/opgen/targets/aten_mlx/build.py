"""`<package>.cmake`: the CMake function that builds the package's extension, `_ops`.

It finds Python, nanobind and MLX as `opgen mlx`'s does (`targets.mlx.build_files`), and
builds the generated sources as `nanobind_add_module(... NB_STATIC NB_DOMAIN mlx ...)`
(MLX's own module uses the `mlx` domain: outside it, MLX's arrays would be rejected at
call time), C++20, linked to MLX, named `_ops`.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.targets.mlx.build_files import FIND_PYTHON_NANOBIND_MLX


def cmake_file(module: str, sources: Sequence[str], generated: str) -> str:
    listed = "\n".join(f'  "${{CMAKE_CURRENT_LIST_DIR}}/{s}"' for s in sources)
    return f"""\
# {generated}
#
# Builds the extension `{module}._ops`:
#   include({module}.cmake)
#   opgen_add_{module}_module(<target>)
# then copy the module (named `_ops` by nanobind) into the package directory
# `{module}/` beside this file.

{FIND_PYTHON_NANOBIND_MLX}
set(OPGEN_{module}_SOURCES
{listed}
)

function(opgen_add_{module}_module target)
  nanobind_add_module(${{target}} NB_STATIC NOMINSIZE NB_DOMAIN mlx ${{OPGEN_{module}_SOURCES}})
  set_target_properties(${{target}} PROPERTIES OUTPUT_NAME _ops)
  target_include_directories(${{target}} PRIVATE "${{CMAKE_CURRENT_FUNCTION_LIST_DIR}}")
  target_link_libraries(${{target}} PRIVATE mlx)
  target_compile_features(${{target}} PRIVATE cxx_std_20)
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(NOT CMAKE_BUILD_TYPE AND NOT multi_config)
    target_compile_options(${{target}} PRIVATE $<IF:$<CXX_COMPILER_ID:MSVC>,/O2,-O2>)
  endif()
endfunction()
"""
