"""The torch releases opgen generates for, and what changed in torchgen between them.

torchgen's output is not fixed: each PyTorch release changes what its generators
emit and which specs it accepts. opgen reproduces each supported release, and this
module is the one place that knows how they differ. Every difference is a `Change`,
named for what it does, with the release that brought it and, for a behaviour a
later release dropped, the release that dropped it. Spec rules, API layers and
emitters ask `release.has(CHANGE)`; none of them compares version numbers.

A release is a minor version (`2.14`): patch releases do not change torchgen's
output, so `2.14.0` and `2.14.1` are the same `Release`. Which release a run is for
comes from `--torch-version` or the tree it generates for
(`opgen.targets.torch_version`).

Adding a release: append it to `SUPPORTED`, add a `Change` for each behaviour its
torchgen changed (and ask for it where the behaviour is emitted), and add it to the
releases the conformance tests fetch (`tests/conformance/releases.py`).
"""

from __future__ import annotations

import re

from opgen.cached import cached
from opgen.frozen import frozen


@frozen
class Release:
    """A PyTorch minor release, as torchgen's output knows it."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @cached
    def key(self) -> tuple[int, int]:
        return (self.major, self.minor)  # compared for every entry read: built once

    def has(self, change: Change) -> bool:
        """Whether this release's torchgen behaves as `change` says."""
        if self.key < change.since.key:
            return False
        return change.until is None or self.key < change.until.key


_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def parse_release(text: str) -> Release | None:
    """The release of a version string: `2.14`, `2.14.1`, `2.16.0a0+git3f2e1b`, `2.13.0+cpu`."""
    match = _VERSION.match(text.strip())
    return Release(int(match[1]), int(match[2])) if match else None


@frozen
class Change:
    """A behaviour of torchgen that not every supported release has."""

    name: str  # what it does, in a few words
    since: Release  # the first release that behaves so
    what: str  # one sentence: what is emitted or accepted
    until: Release | None = None  # the first release that no longer does


def _release(text: str) -> Release:
    found = parse_release(text)
    assert found is not None, text
    return found


# The releases opgen reproduces, oldest first; each is tested against that release's
# torchgen (the newest patch release of each minor version).
SUPPORTED: tuple[Release, ...] = tuple(
    _release(v) for v in ("2.10", "2.11", "2.12", "2.13", "2.14", "2.15")
)
TESTED_PATCHES: dict[Release, str] = {
    _release(v): v for v in ("2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0")
}
OLDEST = SUPPORTED[0]
NEWEST = SUPPORTED[-1]

_2_10 = _release("2.10")
_2_11 = _release("2.11")
_2_12 = _release("2.12")
_2_13 = _release("2.13")
_2_14 = _release("2.14")
_2_15 = _release("2.15")

# --- the spec ---------------------------------------------------------------------

NAMED_DIMENSIONS = Change(
    "named dimensions",
    _2_10,
    "the spec may use the types Dimname, Dimname? and Dimname[] (named tensors)",
    until=_2_13,
)
OUTPUT_NAME_PROPAGATION = Change(
    "structured outputs propagate names",
    _2_10,
    "a structured kernel's set_output_strided and set_output_raw_strided take the outputs' "
    "DimnameList names and propagate them",
    until=_2_13,
)
OUT_VARIANT_TAG = Change(
    "out_variant tag",
    _2_11,
    "at::Tag has out_variant",
)
AUTOMATIC_OUT_INPLACE_TAGS = Change(
    "automatic out and inplace tags",
    _2_13,
    "out= and inplace operators are tagged 'out' and 'inplace' (those of the spec when "
    "tags.yaml defines the tags, derived ones always)",
)
AUTOCAST_XPU_KEY = Change(
    "AutocastXPU dispatch key",
    _2_13,
    "the spec may name the dispatch key AutocastXPU",
)
PHILOX_NOT_RANDOM = Change(
    "_philox_ operators need no seeded tag",
    _2_15,
    "an operator whose name has 'rand' in it need not be tagged nondeterministic_seeded when "
    "its name also has '_philox_' (a dropout argument or a Generator still needs the tag)",
)

# --- the ATen target ----------------------------------------------------------------

HEADERONLY_ENUM_TAG = Change(
    "header-only enum_tag.h",
    _2_12,
    "enum_tag.h goes to --headeronly-install-dir and leaves core_generated.cmake",
)
AOTI_SKIPPED_ARGUMENT_DEFAULTS = Change(
    "AOTInductor versioned shims pass defaults",
    _2_12,
    "an older version of a versioned AOTInductor shim passes the schema default of each "
    "argument a newer version added, not std::nullopt",
)
AOTI_FEATURE_VERSIONS = Change(
    "AOTInductor shims by feature version",
    _2_13,
    "versioned entries of the fallback-op table name the version they arrived in ('since'), "
    "and the shim headers guard them with TORCH_FEATURE_VERSION",
)
CUMULATIVE_OUT_DTYPE = Change(
    "functionalized cumsum and cumprod keep the out dtype",
    _2_12,
    "the functionalization kernels of cumsum.out and cumprod.out (and of their dimname_out "
    "overloads) pass the out tensor's dtype when no dtype is given",
)
VMAP_QUANTIZED_FLASH_ATTENTION = Change(
    "vmap plumbing for quantized flash attention",
    _2_11,
    "_scaled_dot_product_flash_attention.quantized gets generated vmap plumbing although it "
    "also returns SymInts, like _scaled_dot_product_flash_attention",
)
ROCM_CUDA_GUARD = Change(
    "ROCm builds use the CUDA guard",
    _2_11,
    "with --rocm, the CUDA family's registrations and AOTInductor shims include "
    "c10/hip/HIPGuard.h and CUDA's structured kernels hold a c10::cuda::OptionalCUDAGuard, "
    "not HIPGuardImplMasqueradingAsCUDA.h and c10::hip::OptionalHIPGuardMasqueradingAsCUDA",
)
XPU_FAMILY_NEEDS_FLAG = Change(
    "the XPU family needs --xpu",
    _2_14,
    "without --xpu, the dispatch entries of SparseXPU, SparseCsrXPU and NestedTensorXPU are "
    "ignored like XPU's, and those keys get no Register*.cpp",
)
XPU_STRUCTURED_EXPORT = Change(
    "XPU structured kernels exported with TORCH_XPU_API",
    _2_10,
    "the structs of XPU's structured kernels are declared TORCH_XPU_API, not TORCH_API",
    until=_2_14,
)
DEVICE_EXPORT_MACROS = Change(
    "device DLL export macros",
    _2_15,
    "kernel declarations of the CUDA family are exported with TORCH_CUDA_CPP_API and of the "
    "XPU family with TORCH_XPU_API (a few CUDA kernels built into torch_cpu keep TORCH_API)",
)
CPU_DLL_CUDA_KERNELS_CHECKED = Change(
    "CUDA kernels built into torch_cpu must exist",
    _2_15,
    "torchgen.gen refuses a spec in which one of the CUDA kernels it exports with TORCH_API "
    "is registered under no CUDA-family key",
)
NATIVE_AOT_STUBS = Change(
    "native AOT stubs",
    _2_15,
    "torchgen.gen writes NativeAotStubs.h and NativeAotStubs.cpp from the aot.py manifests "
    "under --native-aot-ops-dir, and structured kernels of their operators try the stub first",
)
SINGLE_OUTPUT_VIEW_REPLAY = Change(
    "single-output replay of split and unbind",
    _2_15,
    "the ViewMeta forward of split.Tensor, split_with_sizes and unbind.int computes the one "
    "output it needs (slice or select), not every output",
)
VIEW_META_BY_VALUE = Change(
    "ViewMeta arguments by value",
    _2_14,
    "the ViewMeta classes of ViewMetaClasses.h keep their tensor and scalar arguments by "
    "value (at::Tensor), not as const references that may dangle",
)

# --- the autograd target --------------------------------------------------------------

COMPLEX_LDEXP = Change(
    "complex gradients of ldexp",
    _2_11,
    "ldexp joins the operators whose backward handles complex outputs",
)
COMPLEX_LINEAR_NARROW_COPY = Change(
    "complex gradients of linear and narrow_copy",
    _2_12,
    "linear and narrow_copy join the operators whose backward handles complex outputs",
)
INTRUSIVE_NODES = Change(
    "autograd nodes held by intrusive_ptr",
    _2_13,
    "VariableType creates nodes with c10::make_intrusive and backward nodes unpack saved "
    "outputs with getptr(), not std::shared_ptr and shared_from_this()",
)
TEN_AUTOGRAD_SHARDS = Change(
    "ten VariableType and TraceType shards",
    _2_13,
    "VariableType_*.cpp and TraceType_*.cpp are split into 10 shards, not 5",
)
NODE_CREATION_HOOKS = Change(
    "node-creation hooks",
    _2_14,
    "each VariableType kernel calls fire_node_creation_hooks on the node it attached, once "
    "the node holds its saved outputs (rebase_history's result, for inplace kernels)",
)
COMPLEX_POLAR_AND_SQRTH = Change(
    "complex gradients of linalg_polar and linalg_matrix_sqrth",
    _2_14,
    "linalg_polar and linalg_matrix_sqrth join the operators whose backward handles complex "
    "outputs, and cholesky leaves them (no throw_error_for_complex_autograd)",
)

STORAGE_SAVED_RESERVED = Change(
    "reserved storage lists in debug checks",
    _2_15,
    "VariableType's debug checks reserve the saved storage list of a tensor-list argument and "
    "emplace into it, and inplace foreach loops bind each grad_fn by const reference",
)
COMPLEX_NAN_TO_NUM = Change(
    "complex gradients of nan_to_num",
    _2_15,
    "nan_to_num joins the operators whose backward handles complex outputs",
)

# --- the Python bindings and stubs ------------------------------------------------------

HAS_NAMES_STUB = Change(
    "has_names in the stubs",
    _2_10,
    "the stubs declare TensorBase.has_names, which python_variable_methods.cpp binds by hand",
    until=_2_13,
)
OPTIONAL_ASARRAY_REQUIRES_GRAD = Change(
    "asarray's requires_grad optional",
    _2_12,
    "the stubs declare torch.asarray's requires_grad as _bool | None = None, not _bool = False",
)
LANCZOS_INTERPOLATION_STUB = Change(
    "Lanczos interpolation in the stubs",
    _2_12,
    "torch/_C/_nn.pyi declares _upsample_lanczos2d_aa among what "
    "torch.nn.functional.interpolate calls",
)
EXACT_TENSOR_LIST_HINTS = Change(
    "exact tensor-list hints",
    _2_12,
    "the stubs hint Tensor?[] as tuple[Tensor | None, ...] | list[Tensor | None] | None and "
    "Tensor[] without None, and any out= argument may be None",
)
HANDWRITTEN_TENSOR_QUERIES = Change(
    "hand-written tensor queries",
    _2_12,
    "dim, get_device, is_contiguous, numel and storage_offset get no generated Python "
    "binding: python_variable_methods.cpp defines them by hand",
)
HAS_TORCH_FUNCTION_METHODS = Change(
    "has_torch_function in methods without arguments",
    _2_13,
    "a Tensor method binding without arguments checks has_torch_function(self_), not "
    "check_has_torch_function(self_)",
)
METHOD_DEVICE_INIT_GUARD = Change(
    "device initialization of methods guarded",
    _2_13,
    "a Tensor method binding initializes the device only if self has no dispatch mode "
    "(tensor_has_dispatch)",
)
INPLACE_FOREACH_STUBS_RETURN_LISTS = Change(
    "inplace foreach stubs return their lists",
    _2_15,
    "the stubs declare torch._foreach_<op>_ as returning tuple[Tensor, ...] | list[Tensor], "
    "not None, and Tensor.__matmul__ as taking a Tensor only",
)
SYMBOLIC_SCALAR_HINTS = Change(
    "symbolic scalars in stubs",
    _2_14,
    "the stubs hint Scalar as Number | _complex | PySymType",
)

# --- the lazy target ---------------------------------------------------------------------

LAZY_TO_STRING_MOVES = Change(
    "lazy ToString moves its stream",
    _2_13,
    "a lazy IR node's ToString returns std::move(ss).str()",
)

# Every change, oldest first.
CHANGES: tuple[Change, ...] = (
    NAMED_DIMENSIONS,
    OUTPUT_NAME_PROPAGATION,
    XPU_STRUCTURED_EXPORT,
    HAS_NAMES_STUB,
    OUT_VARIANT_TAG,
    VMAP_QUANTIZED_FLASH_ATTENTION,
    ROCM_CUDA_GUARD,
    COMPLEX_LDEXP,
    HEADERONLY_ENUM_TAG,
    AOTI_SKIPPED_ARGUMENT_DEFAULTS,
    CUMULATIVE_OUT_DTYPE,
    COMPLEX_LINEAR_NARROW_COPY,
    EXACT_TENSOR_LIST_HINTS,
    HANDWRITTEN_TENSOR_QUERIES,
    OPTIONAL_ASARRAY_REQUIRES_GRAD,
    LANCZOS_INTERPOLATION_STUB,
    AUTOMATIC_OUT_INPLACE_TAGS,
    AUTOCAST_XPU_KEY,
    AOTI_FEATURE_VERSIONS,
    INTRUSIVE_NODES,
    TEN_AUTOGRAD_SHARDS,
    HAS_TORCH_FUNCTION_METHODS,
    METHOD_DEVICE_INIT_GUARD,
    LAZY_TO_STRING_MOVES,
    SYMBOLIC_SCALAR_HINTS,
    XPU_FAMILY_NEEDS_FLAG,
    VIEW_META_BY_VALUE,
    NODE_CREATION_HOOKS,
    COMPLEX_POLAR_AND_SQRTH,
    PHILOX_NOT_RANDOM,
    DEVICE_EXPORT_MACROS,
    CPU_DLL_CUDA_KERNELS_CHECKED,
    NATIVE_AOT_STUBS,
    SINGLE_OUTPUT_VIEW_REPLAY,
    STORAGE_SAVED_RESERVED,
    COMPLEX_NAN_TO_NUM,
    INPLACE_FOREACH_STUBS_RETURN_LISTS,
)
