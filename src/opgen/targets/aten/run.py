"""One `opgen aten` run: the spec as the flags read it, and the output sets files go to.

torchgen.gen keeps one `FileManager` per output family; `AtenOutputs` keeps one
`OutputSet` for each, with the same roots, so that each family's dependency
list (`-o`) names exactly the files torchgen's would.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from opgen.api.signatures import SignatureSet
from opgen.cached import cached
from opgen.diagnostics import Location, SpecError
from opgen.frozen import field, frozen
from opgen.output import OutputSet, TemplateDir
from opgen.releases import CPU_DLL_CUDA_KERNELS_CHECKED
from opgen.spec.backend import BackendIndex
from opgen.spec.keys import CUDA_DISPATCH_KEYS, DispatchKey
from opgen.spec.model import LoadOptions, Spec, load_spec
from opgen.spec.selection import OperatorSelection
from opgen.targets.aten.native_headers import CPU_DLL_CUDA_KERNELS
from opgen.targets.aten.options import AtenOptions
from opgen.template import Template

if TYPE_CHECKING:
    from opgen.targets.aten.dispatch_plan import KernelTable


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
    def of(options: AtenOptions) -> AtenOutputs:
        templates = TemplateDir(options.template_dir, Template.from_file)

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

    def with_dependency_lists(self) -> list[tuple[str, OutputSet]]:
        """The sets that get a dependency list with `-o`, with the list's file-name prefix."""
        listed = [("", self.cpu), ("cpu_vec_", self.cpu_vec), ("core_", self.core)]
        listed.append(("ops_", self.ops))
        listed.extend((f"{device}_", s) for device, s in self.devices.items())
        return listed


@frozen(eq=False)
class AtenRun:
    """Everything one run's emitters read, and the sets they fill."""

    options: AtenOptions
    spec: Spec
    selection: OperatorSelection
    signatures: SignatureSet
    outputs: AtenOutputs
    # Lines for the user that are not errors (torchgen prints them to stdout).
    notes: list[str] = field(default_factory=list)

    @staticmethod
    def start(options: AtenOptions) -> AtenRun:
        """Read the inputs the flags name; raises SpecError for bad input."""
        selection = OperatorSelection.from_flags(
            options.op_registration_whitelist, options.op_selection_yaml_path
        )
        spec = load_spec(
            options.native_yaml,
            options.tags_yaml,
            LoadOptions(ignore_keys=options.ignored_keys, release=options.run.release),
        )
        if options.run.release.has(CPU_DLL_CUDA_KERNELS_CHECKED):
            _check_cpu_dll_cuda_kernels(spec, options.native_yaml)
        return AtenRun(options, spec, selection, SignatureSet(), AtenOutputs.of(options))

    def backend_index(self, key: DispatchKey) -> BackendIndex:
        """The kernels for `key`; keys without any get an empty index, as torchgen's do.

        torchgen's empty index says `Undefined` for its key (it is a defaultdict's
        default), and some outputs show it, so this one does too.
        """
        found = self.spec.backend_indices.get(key)
        if found is not None:
            return found
        return BackendIndex(DispatchKey.Undefined, True, False, False, {})

    @cached
    def kernel_table(self) -> KernelTable:
        """Each key's kernels and their plans, shared by the families that render kernels."""
        from opgen.targets.aten.dispatch_plan import KernelTable  # it imports this module

        return KernelTable(self)


def _check_cpu_dll_cuda_kernels(spec: Spec, native_yaml: str) -> None:
    """Every CUDA kernel declared as built into torch_cpu must be one of the spec's.

    torchgen keeps the list of them by hand; a kernel renamed or removed in the spec
    would leave the list stale, so 2.15's torchgen refuses such a spec.
    """
    registered = {
        metadata.kernel
        for key, index in spec.backend_indices.items()
        if key in CUDA_DISPATCH_KEYS
        for metadata in index.index.values()
    }
    missing = sorted(CPU_DLL_CUDA_KERNELS - registered)
    if missing:
        families = ", ".join(sorted(str(k) for k in CUDA_DISPATCH_KEYS))
        raise SpecError(
            f"the CUDA kernels that torch builds into torch_cpu (declared TORCH_API) must be "
            f"registered under a CUDA-family dispatch key ({families}), and these are not: "
            f"{', '.join(missing)}",
            Location(native_yaml, 1),
        )
