"""Generate and compile the example library (examples/torch_library), for tests and benchmarks.

opgen writes the library into `generated`; `torch.utils.cpp_extension.load`
compiles the generated sources with the example's kernels in `build` (ninja
rebuilds only what changed) and loads the library into this process. The
generated package and the example's Python kernels are then importable.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

EXAMPLE = Path(__file__).parents[2] / "examples" / "torch_library"


@dataclass(frozen=True)
class BuiltExample:
    generated: Path  # opgen's output directory
    library: Path  # the compiled shared library


def _opgen(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "opgen", *args], check=True, capture_output=True, text=True
    )
    return done.stdout


def build_example(generated: Path, build: Path) -> BuiltExample:
    from torch.utils.cpp_extension import load

    spec = str(EXAMPLE / "native_functions.yaml")
    _opgen("torch-library", spec, "-o", str(generated))
    sources = _opgen("torch-library", spec, "-o", str(generated), "--list-sources").split()
    build.mkdir(parents=True, exist_ok=True)
    load(
        name="mylib_C",
        sources=[str(EXAMPLE / "csrc" / "kernels.cpp"), *sources],
        extra_include_paths=[str(generated / "include")],
        build_directory=str(build),
        is_python_module=False,
    )
    sys.path[:0] = [str(generated), str(EXAMPLE)]
    return BuiltExample(generated, build / "mylib_C.so")
