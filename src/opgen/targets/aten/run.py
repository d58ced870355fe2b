"""The model of one `opgen aten` run, and the output sets its emitters fill.

`AtenRun` holds everything the emitters read, read and planned before any of them
runs: the spec as the flags read it, the release, the operator selection, the
kernel table, the native AOT declarations and the AOTInductor fallback-op table.
It never changes. Each emitter makes its own `AtenOutputs` (`AtenRun.outputs`),
fresh sets over the run's one `TemplateDir`, so that every template is compiled
once whichever emitter renders it.

torchgen.gen keeps one `FileManager` per output family; `AtenOutputs` keeps one
`OutputSet` for each, with the same roots, so that each family's dependency
list (`-o`) names exactly the files torchgen's would.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from opgen.api.signatures import SignatureSet
from opgen.frozen import frozen
from opgen.output import OutputSet, TemplateDir
from opgen.releases import NATIVE_AOT_STUBS, Release
from opgen.spec.backend import BackendIndex
from opgen.spec.keys import DispatchKey
from opgen.spec.model import Spec
from opgen.spec.selection import OperatorSelection
from opgen.targets.aten.aoti_table import FallbackTables, load_fallback_tables
from opgen.targets.aten.dispatch_plan import KernelTable, backend_index, device_family
from opgen.targets.aten.native_aot import NativeAotStubs, native_aot_stubs
from opgen.targets.aten.options import AtenOptions, AtenPart
from opgen.targets.emitters import Emitted
from opgen.template import Template


@frozen
class AtenOutputs:
    cpu: OutputSet  # <install_dir>: the aggregate headers and most sources
    cpu_vec: OutputSet  # <install_dir>: vectorized ufunc kernels
    core: OutputSet  # <install_dir>/core
    ops: OutputSet  # <install_dir>/ops: per-operator headers
    aoti: OutputSet  # the AOTInductor C shim
    headeronly: OutputSet  # header-only files such as enum_tag.h
    devices: Mapping[str, OutputSet]  # "cuda" (and "xpu"): <install_dir>, device sources

    @staticmethod
    def of(options: AtenOptions, templates: TemplateDir) -> AtenOutputs:
        def at(root: str) -> OutputSet:
            return OutputSet(root, templates)

        return AtenOutputs(
            cpu=at(options.install_dir),
            cpu_vec=at(options.install_dir),
            core=at(options.core_dir),
            ops=at(options.ops_dir),
            aoti=at(options.aoti_install_dir),
            headeronly=at(options.headeronly_dir),
            devices={device: at(options.install_dir) for device in options.device_families},
        )

    def all(self) -> Iterator[OutputSet]:
        yield from (self.cpu, self.cpu_vec, self.core, self.ops, self.aoti, self.headeronly)
        yield from self.devices.values()

    def by_name(self) -> dict[str, OutputSet]:
        """Every set, by the name emitters give it in `Emitted.files`."""
        named = {
            "cpu": self.cpu,
            "cpu_vec": self.cpu_vec,
            "core": self.core,
            "ops": self.ops,
            "aoti": self.aoti,
            "headeronly": self.headeronly,
        }
        named.update(self.devices)
        return named

    def emitted(self, notes: tuple[str, ...] = ()) -> Emitted:
        """What an emitter made: its sets that hold any file, and its notes."""
        made = {name: s for name, s in self.by_name().items() if s.paths()}
        return Emitted(made, notes)

    def for_key(self, key: DispatchKey) -> OutputSet:
        """The set of the key's files: its device family's (`--xpu` makes an xpu one), else
        the CPU set."""
        family = device_family(key)
        if family is None:
            return self.cpu
        return self.devices.get(family, self.cpu)

    def with_dependency_lists(self) -> list[tuple[str, OutputSet]]:
        """The sets that get a dependency list with `-o`, with the list's file-name prefix."""
        listed = [("", self.cpu), ("cpu_vec_", self.cpu_vec), ("core_", self.core)]
        listed.append(("ops_", self.ops))
        listed.extend((f"{device}_", s) for device, s in self.devices.items())
        return listed


@frozen(eq=False)
class AtenRun:
    """Everything one run's emitters read; immutable.

    `signatures` derives each function's signatures, `templates` compiles each template
    and `kernels` plans each dispatch key, each on first use, in the process that renders
    what needs it: memos of pure functions of the rest, which change where the work is
    done, never what the model says.
    """

    options: AtenOptions
    release: Release
    spec: Spec
    selection: OperatorSelection
    signatures: SignatureSet
    templates: TemplateDir
    # Read for the parts that render kernels (sources, headers); None for the others.
    kernels: KernelTable | None
    native_aot: NativeAotStubs  # torch 2.15 on, for sources and headers; else none
    fallback_tables: FallbackTables | None  # for the sources' AOTInductor shims
    # The checked-in shim headers the sources are checked against (without
    # --update-aoti-c-shim): each one's text by file name, None for one not found.
    shim_headers: Mapping[str, str | None]

    @staticmethod
    def of(options: AtenOptions, spec: Spec, selection: OperatorSelection) -> AtenRun:
        """The run of `options` over a spec already read: its kernels, native AOT
        declarations and fallback-op table read for the parts it generates (in that
        order, so errors come in the order the parts' files would meet them)."""
        parts = options.generate
        renders_kernels = AtenPart.sources in parts or AtenPart.headers in parts
        kernels = KernelTable.of(spec, options.dispatch_keys) if renders_kernels else None
        native_aot = NativeAotStubs()
        if renders_kernels and options.release.has(NATIVE_AOT_STUBS):
            native_aot = native_aot_stubs(options.native_aot_dir, spec)
        tables: FallbackTables | None = None
        headers: Mapping[str, str | None] = MappingProxyType({})
        if AtenPart.sources in parts:
            tables = load_fallback_tables(
                options.source_path, options.aoti_fallback_ops, options.release
            )
            if not options.update_aoti_c_shim:
                headers = _checked_in_shim_headers(options)
        return AtenRun(
            options,
            options.release,
            spec,
            selection,
            SignatureSet(),
            TemplateDir(options.template_dir, Template.from_file),
            kernels,
            native_aot,
            tables,
            headers,
        )

    def outputs(self) -> AtenOutputs:
        """Fresh, empty output sets (an emitter's own), over the run's templates."""
        return AtenOutputs.of(self.options, self.templates)

    def kernel_table(self) -> KernelTable:
        """The kernel table, which the parts that render kernels have."""
        if self.kernels is None:
            raise ValueError("the run reads the kernel table only for sources and headers")
        return self.kernels

    def backend_index(self, key: DispatchKey) -> BackendIndex:
        """The kernels for `key` (an empty index, as torchgen's, for a key without any)."""
        return backend_index(self.spec, key)


def shim_header_name(key: DispatchKey | None) -> str:
    """The AOTInductor shim header of a backend (`key` None: the dispatcher-calling one)."""
    return f"c_shim_{'aten' if key is None else key.lower()}.h"


def _checked_in_shim_headers(options: AtenOptions) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for key in options.aoti_backends:
        name = shim_header_name(key)
        try:
            with open(os.path.join(options.aoti_install_dir, name), encoding="utf-8") as f:
                found[name] = f.read()
        except FileNotFoundError:
            found[name] = None
    return found
