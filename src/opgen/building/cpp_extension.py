"""`torch_library()`: a custom-op library's `setup()` keywords, compiled by torch's
`CppExtension`.

    setup(**torch_library("native_functions.yaml", kernels=["kernels.cpp"]))

runs `opgen torch-library` when setup.py runs (setuptools must know the generated
package before it builds anything), then asks opgen for what it wrote
(`--list-files`, `--list-sources`) and returns the keywords that build and install
the library: the generated package `<pkg>` (its `.py`, stub and `py.typed`) and the
extension `<pkg>._C`, the generated sources compiled with the author's kernels. The
package loads `_C` beside it when imported. The flags are those of the generated
CMake function: `-O2`, `-Wmissing-declarations` (a kernel defined with another
signature or namespace than `kernels.h` declares is reported where it is defined)
and, on Linux, `--no-undefined` (such a kernel is then a link error, not an
undefined symbol when the library is imported).

Paths are relative to the directory setup.py runs in (pip runs it in the project's),
as setuptools' own are; torch is imported only when this is called.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from opgen.building.commands import BuildFailed, opgen_listing, require_wheel_support, run_opgen

COMPILE_FLAGS = ("-O2", "-Wmissing-declarations")
LINK_FLAGS = ("-Wl,--no-undefined",) if sys.platform.startswith("linux") else ()


def torch_library(
    spec: str = "native_functions.yaml",
    *,
    kernels: Sequence[str] = (),
    output_dir: str = "build/generated",
    options: Sequence[str] = (),
) -> dict[str, Any]:
    """Run `opgen torch-library SPEC -o OUTPUT_DIR OPTIONS` (its messages on standard
    error; `BuildFailed` if it fails); the keywords of `setuptools.setup()` that build
    the library from what it wrote and the C++ `kernels`: `packages`, `package_dir`,
    `package_data`, and for a library with C++ `ext_modules` and `cmdclass` (torch's
    `BuildExtension`). `options` are more flags of `opgen torch-library` (`--package`,
    `--tags`, `--derivatives`, `--python-path`)."""
    require_wheel_support()
    arguments = ["torch-library", spec, "-o", output_dir, *options]
    run_opgen(arguments)
    files = [_relative(path, output_dir) for path in opgen_listing([*arguments, "--list-files"])]
    sources = opgen_listing([*arguments, "--list-sources"])
    package = _package(files, spec)
    package_dir = f"{output_dir}/{package}"
    keywords: dict[str, Any] = {
        "packages": [package],
        "package_dir": {package: package_dir},
        "package_data": {
            package: [f.name for f in files if f.parent == PurePath(package) and f.suffix != ".py"]
        },
    }
    if not sources:  # a library without C++: the package defines its operators itself
        if kernels:
            raise BuildFailed(
                f"error: {spec} names no C++ kernel, so there is nothing to compile "
                f"{', '.join(kernels)} into: leave out kernels="
            )
        return keywords
    try:
        from torch.utils.cpp_extension import BuildExtension, CppExtension
    except ImportError as e:
        raise BuildFailed(
            f"error: building {package} needs torch in the environment the build runs in "
            f"(pip install --no-build-isolation builds with the installed torch): {e}"
        ) from None
    extension = CppExtension(  # type: ignore[no-untyped-call]
        f"{package}._C",
        [*kernels, *sources],
        include_dirs=[os.path.abspath(f"{output_dir}/include")],  # the compiler runs elsewhere
        extra_compile_args=list(COMPILE_FLAGS),
        extra_link_args=list(LINK_FLAGS),
    )
    return {**keywords, "ext_modules": [extension], "cmdclass": {"build_ext": BuildExtension}}


def _relative(path: str, output_dir: str) -> PurePath:
    return PurePath(os.path.relpath(path, output_dir))


def _package(files: Sequence[PurePath], spec: str) -> str:
    """The generated package: the directory of the one top-level `__init__.py`."""
    for file in files:
        if len(file.parts) == 2 and file.name == "__init__.py":
            return file.parts[0]
    raise BuildFailed(f"error: opgen torch-library wrote no Python package for {spec}")
