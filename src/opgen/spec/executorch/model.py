"""What reading an ExecuTorch kernel YAML gives: its operators, and each one's kernels.

`ETParsedYaml` holds the file's operators as `NativeFunction`s, in file order
(an `op:` entry's with the schema the ATen spec gives it), and the
`ETKernelIndex`: per operator, each kernel key and the kernel it selects, a
`BackendMetadata` whose namespace is the kernel name's with `::native` added
(`torch::executor::add_out` is `add_out` in `torch::executor::native`), as
upstream's codegen builds it. The names are upstream's
(`executorch.codegen.model`, `executorch.codegen.parse`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from opgen.diagnostics import Diagnostic, Location
from opgen.frozen import frozen
from opgen.spec.backend import BackendIndex, BackendMetadata
from opgen.spec.executorch.kernel_keys import DEFAULT_KERNEL_KEY, ETKernelKey
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.native import NativeFunction
from opgen.spec.schema import OperatorName


@frozen
class ETKernelIndex:
    """Per operator (by name, without namespace), its kernels by kernel key, in file order."""

    index: Mapping[OperatorName, Mapping[ETKernelKey, BackendMetadata]]  # kernels by key

    def get_kernels(
        self, g: NativeFunction | NativeFunctionsGroup
    ) -> Mapping[ETKernelKey, BackendMetadata]:
        """The kernels of `g` (of a group's functional operator); empty if it has none."""
        f = g.functional if isinstance(g, NativeFunctionsGroup) else g
        return self.index.get(f.func.name, {})

    @staticmethod
    def from_backend_indices(
        backend_indices: Sequence[BackendIndex],
    ) -> ETKernelIndex:
        """A file without `kernels:` keeps its `dispatch:` tables' kernels, each under the
        default key: the kernel of the last of the operator's keys in `backend_indices`'s
        order wins (upstream's `ETKernelIndex.from_backend_indices`)."""
        index: dict[OperatorName, dict[ETKernelKey, BackendMetadata]] = {}
        for backend_index in backend_indices:
            for name, metadata in backend_index.index.items():
                index.setdefault(name, {})[DEFAULT_KERNEL_KEY] = metadata
        return ETKernelIndex(index)

    @staticmethod
    def merge_indices(index_a: ETKernelIndex, index_b: ETKernelIndex) -> ETKernelIndex:
        """Both indices; a key of `index_b` replaces the same key of `index_a` (as upstream
        merges a functions YAML's index with a custom-ops YAML's)."""
        combined: dict[OperatorName, dict[ETKernelKey, BackendMetadata]] = {
            name: dict(kernels) for name, kernels in index_a.index.items()
        }
        for name, kernels in index_b.index.items():
            combined.setdefault(name, {}).update(kernels)
        return ETKernelIndex(combined)


@frozen(eq=False)
class ETParsedYaml:
    """A kernel YAML read against an ATen spec, every rule checked."""

    path: str  # the kernel YAML
    native_functions: tuple[NativeFunction, ...]  # in file order
    kernel_index: ETKernelIndex  # each operator's kernels by kernel key
    # The entries' `dispatch:` tables (and the kernel implied by an entry without one),
    # per dispatch key in the order keys first appear, as torchgen indexes them.
    backend_indices: tuple[BackendIndex, ...]
    from_aten: frozenset[OperatorName]  # the operators named by `op:`
    custom_ops: bool  # read as a custom-ops YAML (`func:` entries only)
    location: Location  # the document
    warnings: tuple[Diagnostic, ...] = ()  # what the file does that upstream accepts
