"""Extension modules that opgen generates and a CMake project builds, from setup.py.

    setup(**mlx_modules({"tinymlx": "tinymlx.yaml"}))

An `OpgenExtension` is one extension module: the opgen run that generates it (`["mlx",
"tinymlx.yaml"]`) and the CMake project that builds it (setup.py's directory by default,
whose CMakeLists.txt includes the generated `<module>.cmake` and calls its function).
`BuildWithCMake`, setup.py's `build_ext`, runs every extension's opgen into one
directory under the build's temporary one, configures the project with

    -DOPGEN_GENERATED=<that directory> -DPython_EXECUTABLE=<this interpreter>
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_LIBRARY_OUTPUT_DIRECTORY=<the modules' directory>

builds it, and installs for each extension `<module><EXT_SUFFIX>` as the module, the
stub opgen wrote for it (`<module>.pyi`, and `<module>/<submodule>.pyi` for each of its
submodules) beside it, and the package opgen wrote for it
(`<package>/`, as `opgen aten-mlx` writes one) around it. opgen runs when the
extensions are built, not when setup.py is read: its messages come with the
compiler's.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from setuptools import Extension  # type: ignore[import-untyped]
from setuptools.command.build_ext import build_ext  # type: ignore[import-untyped]

from opgen.building.commands import BuildFailed, require_wheel_support, run_command, run_opgen


class OpgenExtension(Extension):  # type: ignore[misc]
    """The extension module `name` (dotted), which `opgen OPGEN -o DIR` generates and the
    CMake project `project` builds from DIR (its `OPGEN_GENERATED`)."""

    def __init__(self, name: str, opgen: Sequence[str], project: str = ".") -> None:
        super().__init__(name, sources=[])
        self.opgen = tuple(opgen)
        self.project = project


class BuildWithCMake(build_ext):  # type: ignore[misc]
    """`build_ext` for `OpgenExtension`s (any other extension is built as setuptools
    builds it): opgen, then CMake, then each module, stub and package in place."""

    def build_extensions(self) -> None:
        ours = [e for e in self.extensions if isinstance(e, OpgenExtension)]
        for other in self.extensions:
            if not isinstance(other, OpgenExtension):
                self.build_extension(other)
        temp = Path(self.build_temp).resolve()
        generated = temp / "generated"
        for extension in ours:
            run_opgen([*extension.opgen, "-o", str(generated)])
        projects = list(dict.fromkeys(e.project for e in ours))
        for index, project in enumerate(projects):
            build = temp / ("cmake" if len(projects) == 1 else f"cmake-{index}")
            modules = self._build_project(Path(project).resolve(), generated, build)
            for extension in (e for e in ours if e.project == project):
                self._install(extension, generated, modules)

    def _build_project(self, project: Path, generated: Path, build: Path) -> Path:
        """Configure and build `project` in `build`; the directory holding its modules."""
        modules = build / "modules"
        run_command(
            [
                "cmake",
                *("-S", str(project), "-B", str(build)),
                f"-DOPGEN_GENERATED={generated}",
                f"-DPython_EXECUTABLE={sys.executable}",
                "-DCMAKE_BUILD_TYPE=Release",
                f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={modules}",
            ],
            f"configuring the CMake project {project} failed",
        )
        jobs = str(self.parallel or os.cpu_count() or 1)
        run_command(
            ["cmake", "--build", str(build), "--parallel", jobs],
            f"building the CMake project {project} failed",
        )
        return modules

    def _install(self, extension: OpgenExtension, generated: Path, modules: Path) -> None:
        package, _, short = extension.name.rpartition(".")
        built = modules / f"{short}{sysconfig.get_config_var('EXT_SUFFIX')}"
        if not built.is_file():
            raise BuildFailed(
                f"error: the CMake project {extension.project} built no {built.name} for "
                f"{extension.name}: its CMakeLists.txt must build the module {short} "
                f"(opgen_add_{short}_module(...) for `opgen mlx`)"
            )
        target = Path(self.get_ext_fullpath(extension.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)
        stub = generated / f"{short}.pyi"
        if stub.is_file():
            shutil.copyfile(stub, target.parent / stub.name)
        for sub_stub in sorted(generated.glob(f"{short}/*.pyi")):  # its submodules' stubs
            (target.parent / short).mkdir(exist_ok=True)
            shutil.copyfile(sub_stub, target.parent / short / sub_stub.name)
        package_files = generated.joinpath(*package.split(".")) if package else None
        if package_files is not None and package_files.is_dir():
            shutil.copytree(package_files, target.parent, dirs_exist_ok=True)


def mlx_modules(
    modules: Mapping[str, str], *, options: Sequence[str] = (), project: str = "."
) -> dict[str, Any]:
    """The keywords of `setuptools.setup()` that build each module of `modules` (dotted
    name to its spec, whose `module:` is the name's last part) with `opgen mlx SPEC
    OPTIONS` and the CMake project `project`: `ext_modules` and `cmdclass`."""
    require_wheel_support()
    extensions = [
        OpgenExtension(name, ["mlx", spec, *options], project) for name, spec in modules.items()
    ]
    return {"ext_modules": extensions, "cmdclass": {"build_ext": BuildWithCMake}}
