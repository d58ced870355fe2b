"""`<module>.cmake`: a CMake function that builds the extension module.

Including the file finds what the build needs, through the Python
interpreter when CMake has not found it yet: Python (`Development.Module`),
nanobind (`python -m nanobind --cmake_dir`) and MLX (the CMake config MLX's
wheel ships under `mlx/share/cmake/MLX`). Those `find_package` calls run at
the file's scope, not in the function: nanobind's config sets variables its
functions need later.

`opgen_add_<module>_module(<target> <sources>...)` then builds the generated
sources with the author's as `nanobind_add_module(... NB_STATIC NB_DOMAIN mlx
...)`: MLX's own module uses the `mlx` domain, and a module outside it would
see MLX arrays as a foreign type and reject every call. C++20 (MLX's headers
need it), linked to the `mlx` target, named as the module is, optimised (-O2)
when no build type is set, and with -Wmissing-declarations so that an
`_impl` or kernel defined with another signature than its declaration is
reported where it is defined.

Every symbol must resolve when the module links, as `opgen torch-library`'s
libraries must: an `_impl` or kernel declared and not defined (or defined
with another signature) is a link error naming it, demangled, rather than an
ImportError. On Linux that is `--no-undefined`, and the module then links the
shared Python library the interpreter runs on (the one `sysconfig` names,
already loaded by the time the module is, so nothing else is loaded), since
an extension module leaves Python's symbols to the interpreter; an
interpreter built without a shared libpython (`Py_ENABLE_SHARED` 0) exports
them from its executable, which a link cannot name, so there the module
links as before, without the check (`OPGEN_PYTHON_SHARED_LIBRARY`, a cache
variable, is empty). On macOS it is `-undefined error`, which nanobind's list
of Python's symbols (`-U _Py...`) lets through.
"""

from __future__ import annotations

from collections.abc import Sequence

# Finding Python, nanobind and MLX: at the including file's scope.
FIND_PYTHON_NANOBIND_MLX = """\
if(NOT TARGET Python::Module)
  find_package(Python 3.10 COMPONENTS Interpreter Development.Module REQUIRED)
endif()
if(NOT COMMAND nanobind_add_module)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
    OUTPUT_VARIABLE nanobind_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  find_package(nanobind CONFIG REQUIRED)
endif()
if(NOT TARGET mlx)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
      "import mlx, os; print(os.path.join(mlx.__path__[0], 'share', 'cmake', 'MLX'))"
    OUTPUT_VARIABLE MLX_DIR OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  find_package(MLX CONFIG REQUIRED)
endif()
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT DEFINED OPGEN_PYTHON_SHARED_LIBRARY)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c "import os, sysconfig; v = sysconfig.get_config_var; \\
      lib = os.path.join(v('LIBDIR') or '', v('INSTSONAME') or ''); \\
      print(lib if v('Py_ENABLE_SHARED') and os.path.isfile(lib) else '')"
    OUTPUT_VARIABLE opgen_python_library
    OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  set(OPGEN_PYTHON_SHARED_LIBRARY "${opgen_python_library}" CACHE FILEPATH
    "the shared libpython MLX extension modules link to resolve every symbol (empty: none)")
endif()
"""


def cmake_file(module: str, sources: Sequence[str], header: str, comment: str) -> str:
    short = module.rpartition(".")[2]
    var = f"OPGEN_{short}"
    listed = "\n".join(f'  "${{CMAKE_CURRENT_LIST_DIR}}/{s}"' for s in sources)
    return f"""\
# {comment}
#
# Builds the MLX extension module `{module}`:
#   include({short}.cmake)
#   opgen_add_{short}_module(<target> <your sources>...)
# compiles the generated sources with yours (the `_impl` functions and kernels
# that {header} declares) into the module `{short}` (the file name nanobind
# gives it), in the nanobind domain `mlx`, linked to MLX. Every symbol must
# resolve at link time (on Linux with the shared Python library the interpreter
# runs on, if it has one), so one you declared and did not define is a link
# error naming it, not an ImportError.

{FIND_PYTHON_NANOBIND_MLX}
set({var}_SOURCES
{listed}
)
set({var}_INCLUDE_DIR "${{CMAKE_CURRENT_LIST_DIR}}")

function(opgen_add_{short}_module target)
  nanobind_add_module(${{target}} NB_STATIC NOMINSIZE NB_DOMAIN mlx ${{{var}_SOURCES}} ${{ARGN}})
  set_target_properties(${{target}} PROPERTIES OUTPUT_NAME {short})
  target_include_directories(${{target}} PRIVATE ${{{var}_INCLUDE_DIR}})
  target_link_libraries(${{target}} PRIVATE mlx)
  target_compile_features(${{target}} PRIVATE cxx_std_20)
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(NOT CMAKE_BUILD_TYPE AND NOT multi_config)
    target_compile_options(${{target}} PRIVATE $<IF:$<CXX_COMPILER_ID:MSVC>,/O2,-O2>)
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${{target}} PRIVATE -Wmissing-declarations)
  endif()
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND OPGEN_PYTHON_SHARED_LIBRARY)
    target_link_libraries(${{target}} PRIVATE "${{OPGEN_PYTHON_SHARED_LIBRARY}}")
    target_link_options(${{target}} PRIVATE "LINKER:--no-undefined")
  elseif(APPLE)
    target_link_options(${{target}} PRIVATE "LINKER:-undefined,error")
  endif()
endfunction()
"""
