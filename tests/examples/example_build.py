"""Generate and compile the example library (examples/torch_library), for tests and benchmarks.

opgen writes the library into `generated`; `torch.utils.cpp_extension.load`
compiles the generated sources with the example's kernels in `build` (ninja
rebuilds only what changed) and loads the library into this process. The
generated package and the example's Python kernels are then importable.

Every library is built as the example's setup.py builds it (`CXX_FLAGS`,
`LINK_FLAGS`): optimised, and with undefined symbols refused at link time.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

EXAMPLE = Path(__file__).parents[2] / "examples" / "torch_library"
CXX_FLAGS = ("-O2", "-Wmissing-declarations")
LINK_FLAGS = ("-Wl,--no-undefined",) if sys.platform.startswith("linux") else ()


@dataclass(frozen=True)
class BuiltExample:
    generated: Path  # opgen's output directory
    library: Path  # the compiled shared library


def _opgen(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "opgen", *args], check=True, capture_output=True, text=True
    )
    return done.stdout


def generate_library(spec: Path, generated: Path) -> list[str]:
    """Run opgen on `spec`; the C++ sources to compile."""
    _opgen("torch-library", str(spec), "-o", str(generated))
    return _opgen("torch-library", str(spec), "-o", str(generated), "--list-sources").split()


def compile_library(name: str, sources: Sequence[str], include: Path, build: Path) -> Path:
    """Compile and load a shared library; RuntimeError with the compiler's output if it fails."""
    from torch.utils.cpp_extension import load

    build.mkdir(parents=True, exist_ok=True)
    load(
        name=name,
        sources=list(sources),
        extra_include_paths=[str(include)],
        extra_cflags=list(CXX_FLAGS),
        extra_ldflags=list(LINK_FLAGS),
        build_directory=str(build),
        is_python_module=False,
    )
    return build / f"{name}.so"


def build_example(generated: Path, build: Path, extra_sources: Sequence[Path] = ()) -> BuiltExample:
    """The example library, with `extra_sources` compiled into it (as the benchmarks do)."""
    sources = generate_library(EXAMPLE / "native_functions.yaml", generated)
    kernels = [str(EXAMPLE / "csrc" / "kernels.cpp"), *map(str, extra_sources)]
    library = compile_library("mylib_C", [*kernels, *sources], generated / "include", build)
    sys.path[:0] = [str(generated), str(EXAMPLE)]
    return BuiltExample(generated, library)
