"""The options of `opgen aten`: the flags of `python -m torchgen.gen`, and what follows from them.

`AtenOptions` holds the flags as given (same names, same defaults as torch
2.13's `torchgen.gen`). The run's derived choices, such as which dispatch keys
get registrations or `<Key>Functions.h` headers and which `dispatch:` entries
are dropped, are computed here once, so emitters never look at flags directly
when a derived set says it better.
"""

from __future__ import annotations

import os
from enum import Enum

from opgen.frozen import frozen
from opgen.releases import HEADERONLY_ENUM_TAG, NEWEST, XPU_FAMILY_NEEDS_FLAG, Release
from opgen.spec.keys import DispatchKey, is_generic_dispatch_key
from opgen.targets.contract import RunOptions

K = DispatchKey

# The keys that may get a `Register<Key>.cpp`, in the order torchgen emits them.
REGISTRATION_KEYS = (
    K.CPU,
    K.SparseCPU,
    K.SparseCsrCPU,
    K.MkldnnCPU,
    K.CUDA,
    K.MPS,
    K.XPU,
    K.SparseXPU,
    K.SparseCsrXPU,
    K.SparseCUDA,
    K.SparseCsrCUDA,
    K.SparseMPS,
    K.SparseCsrMPS,
    K.QuantizedCPU,
    K.QuantizedCUDA,
    K.CompositeImplicitAutograd,
    K.CompositeImplicitAutogradNestedTensor,
    K.CompositeExplicitAutograd,
    K.CompositeExplicitAutogradNonFunctional,
    K.NestedTensorCPU,
    K.NestedTensorCUDA,
    K.NestedTensorXPU,
    K.NestedTensorHPU,
    K.Meta,  # generated for every structured kernel, even without a `Meta:` entry
    K.SparseMeta,
    K.SparseCsrMeta,
    K.QuantizedMeta,
    K.NestedTensorMeta,
    K.ZeroTensor,
    K.MTIA,
)

# The XPU family: without --xpu, torch 2.14 on ignores the entries of all of them.
_XPU_KEYS = frozenset({K.XPU, K.SparseXPU, K.SparseCsrXPU, K.NestedTensorXPU})

# The keys that always get a `<Key>Functions.h` header.
_FUNCTIONS_KEYS = frozenset(
    {
        K.CPU,
        K.CUDA,
        K.CompositeImplicitAutograd,
        K.CompositeImplicitAutogradNestedTensor,
        K.CompositeExplicitAutograd,
        K.CompositeExplicitAutogradNonFunctional,
        K.Meta,
        K.MTIA,
    }
)
_MPS_KEYS = frozenset({K.MPS, K.SparseMPS, K.SparseCsrMPS})


class AtenPart(Enum):
    """The `--generate` choices: the parts of the files a run generates."""

    headers = "headers"
    sources = "sources"
    declarations_yaml = "declarations_yaml"


@frozen
class AtenOptions:
    # --install-dir is the output directory; also --dry-run, -o (output dependencies), -j.
    run: RunOptions = RunOptions("build/aten/src/ATen")
    source_path: str = "aten/src/ATen"
    per_operator_headers: bool = False
    aoti_install_dir: str = "torch/csrc/inductor/aoti_torch/generated"
    headeronly_install_dir: str | None = None  # default: <install_dir>/core (torch 2.12 on)
    rocm: bool = False
    mps: bool = False
    xpu: bool = False
    mtia: bool = False
    op_registration_whitelist: tuple[str, ...] | None = None
    op_selection_yaml_path: str | None = None
    backend_whitelist: tuple[str, ...] | None = None
    static_dispatch_backend: tuple[str, ...] | None = None
    skip_dispatcher_op_registration: bool = False
    force_schema_registration: bool = False
    generate: frozenset[AtenPart] = frozenset(AtenPart)
    update_aoti_c_shim: bool = False
    extend_aoti_c_shim: bool = False
    # Not torchgen flags: the AOTInductor fallback-op table (default: found beside
    # --source-path, else the installed torchgen's), and how many processes render.
    aoti_fallback_ops: str | None = None
    # torch 2.15 on: the native AOT declarations (None: the default beside
    # --source-path, `native_aot_dir`; "": none).
    native_aot_ops_dir: str | None = None
    # The torch release whose torchgen the run reproduces (`opgen.releases`), and what to
    # say on stderr about how it was chosen (`opgen.targets.torch_version`).
    release: Release = NEWEST
    release_notice: str | None = None

    # -- inputs ----------------------------------------------------------------

    @property
    def native_yaml(self) -> str:
        return f"{self.source_path}/native/native_functions.yaml"

    @property
    def tags_yaml(self) -> str:
        return f"{self.source_path}/native/tags.yaml"

    @property
    def template_dir(self) -> str:
        return f"{self.source_path}/templates"

    @property
    def native_aot_dir(self) -> str:
        """Where `<entry>/aot.py` declarations are looked for ("" turns them off): by
        default `torch/_native/ops` of the PyTorch checkout whose `aten/src/ATen` is read."""
        if self.native_aot_ops_dir is not None:
            return self.native_aot_ops_dir
        return os.path.join(self.source_path, "..", "..", "..", "torch", "_native", "ops")

    # -- output roots ----------------------------------------------------------
    # Joined with '/', never os.path.join: CMake reads these paths back.

    @property
    def install_dir(self) -> str:
        return self.run.output_dir

    @property
    def core_dir(self) -> str:
        return f"{self.install_dir}/core"

    @property
    def ops_dir(self) -> str:
        return f"{self.install_dir}/ops"

    @property
    def headeronly_dir(self) -> str:
        return self.headeronly_install_dir or f"{self.install_dir}/core"

    @property
    def headeronly_root(self) -> bool:
        """Whether header-only files (enum_tag.h) have a root of their own, outside
        core_generated.cmake (`HEADERONLY_ENUM_TAG`); before, they are core files."""
        return self.release.has(HEADERONLY_ENUM_TAG)

    # -- derived choices -------------------------------------------------------

    @property
    def ignored_keys(self) -> frozenset[DispatchKey]:
        """`dispatch:` entries dropped while reading the spec, as if never written."""
        ignored: set[DispatchKey] = set()
        if not (self.mps or self.update_aoti_c_shim):
            ignored |= _MPS_KEYS
        if not (self.xpu or self.update_aoti_c_shim):
            family = self.release.has(XPU_FAMILY_NEEDS_FLAG)
            ignored |= _XPU_KEYS if family else {K.XPU}
        if not self.mtia:
            ignored.add(K.MTIA)
        return frozenset(ignored)

    @property
    def dispatch_keys(self) -> tuple[DispatchKey, ...]:
        """The keys that get registrations, in emission order."""
        # Exactly the keys whose entries are ignored (before torch 2.14, only XPU itself
        # of the XPU family: SparseXPU and friends keep their empty registrations).
        dropped = self.ignored_keys
        keys = [k for k in REGISTRATION_KEYS if k not in dropped]
        if self.backend_whitelist:
            allowed = set(self.backend_whitelist)
            keys = [k for k in keys if is_generic_dispatch_key(k) or k.value in allowed]
        return tuple(keys)

    @property
    def static_dispatch_keys(self) -> tuple[DispatchKey, ...]:
        keys = [DispatchKey.maybe_parse(k) for k in self.static_dispatch_backend or ()]
        return tuple(k for k in keys if k is not None)  # `usage_errors` reports the others

    def usage_errors(self) -> list[str]:
        """What is wrong with the flags themselves, before any file is read."""
        errors = []
        if self.op_registration_whitelist is not None and self.op_selection_yaml_path:
            errors.append(
                "--op-registration-whitelist and --op-selection-yaml-path cannot be given together"
            )
        for key in self.static_dispatch_backend or ():
            if DispatchKey.maybe_parse(key) is None:
                errors.append(f"--static-dispatch-backend: unknown dispatch key '{key}'")
        if self.headeronly_install_dir is not None and not self.headeronly_root:
            errors.append(
                f"--headeronly-install-dir: torch {self.release}'s torchgen has no such "
                "flag (it writes enum_tag.h into <install-dir>/core)"
            )
        return errors

    @property
    def functions_keys(self) -> frozenset[DispatchKey]:
        """The keys that get a `<Key>Functions.h` header."""
        keys = set(_FUNCTIONS_KEYS)
        if self.mps or self.update_aoti_c_shim:
            keys |= _MPS_KEYS
        if self.xpu or self.update_aoti_c_shim:
            keys.add(K.XPU)
        keys.update(self.static_dispatch_keys)
        return frozenset(keys)

    @property
    def aoti_backends(self) -> tuple[DispatchKey | None, ...]:
        """The backends that get an AOTInductor C shim; None is the dispatcher-calling one."""
        backends: list[DispatchKey | None] = [K.CPU, K.CUDA, None]
        if self.mps or self.update_aoti_c_shim:
            backends.append(K.MPS)
        if self.xpu or self.update_aoti_c_shim:
            backends.append(K.XPU)
        return tuple(backends)

    @property
    def device_families(self) -> tuple[str, ...]:
        """The device-specific source families written beside the CPU ones."""
        return ("cuda", "xpu") if self.xpu else ("cuda",)
