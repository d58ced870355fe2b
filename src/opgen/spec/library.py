"""The library dialect: opgen's spec language for a PyTorch custom-op library.

A library spec is a `native_functions.yaml` for the author's own namespace
(`mylib::rms_norm(...)`), read with `LoadOptions(library=True)`. It differs from
PyTorch's own spec in three ways:

- Keys that drive ATen's own code generation (`structured`, `autogen`,
  `ufunc_inner_loop`, `variants`, ...) are not allowed.
- `dispatch:` registers kernels for `CPU`, `CUDA`, `Meta`,
  `CompositeImplicitAutograd`, `CompositeExplicitAutograd` and `Autograd`. An
  unqualified kernel name lives in the C++ namespace `<ns>::native`; a
  qualified one (`mylib::cpu::rms_norm`) exactly where it says. Every operator
  needs a kernel: there is no implicit composite kernel.
- Three keys are added:
  - `python_dispatch:` dispatch key to a Python kernel, `module.path:function`
    (e.g. a Triton implementation for CUDA);
  - `fake:` the Python fake (meta) kernel, `module.path:function`, which
    `torch.compile` and `opcheck` use to compute output shapes;
  - `doc:` the docstring of the generated Python function.

`read_extensions` reads the added keys of one entry; whether each Python path
resolves to a definition is checked by the target, which knows where the
author's Python code lives.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Set
from types import MappingProxyType

from opgen.diagnostics import Diagnostic, Location, SpecError, did_you_mean
from opgen.frozen import frozen
from opgen.spec.keys import DispatchKey
from opgen.spec.yaml.load import YamlMap

# The keys of PyTorch's spec language that mean something for a custom-op library.
LIBRARY_KEYS = frozenset(
    {"func", "dispatch", "tags", "device_guard", "use_const_ref_for_mutable_tensors",
     "cpp_no_default_args"}
)  # fmt: skip
EXTENSION_KEYS = frozenset({"python_dispatch", "fake", "doc"})

LIBRARY_DISPATCH_KEYS = tuple(
    DispatchKey(name)
    for name in (
        "CPU", "CUDA", "Meta", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
        "Autograd",
    )
)  # fmt: skip
# Keys a Python kernel may be registered for (an Autograd kernel comes from derivatives).
PYTHON_DISPATCH_KEYS = tuple(k for k in LIBRARY_DISPATCH_KEYS if k is not DispatchKey.Autograd)

# (Compiled where used: only libraries with Python kernels need them.)
_MODULE = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_ATTRIBUTE = r"[A-Za-z_]\w*"


@frozen
class PythonRef:
    """A Python function named `module.path:function`, and where the spec names it."""

    module: str  # the dotted module path, before the colon
    function: str  # the function's name in that module
    location: Location  # where the spec names it

    def __str__(self) -> str:
        return f"{self.module}:{self.function}"

    @staticmethod
    def parse(text: object, location: Location, what: str) -> PythonRef:
        if not isinstance(text, str):
            raise SpecError(f"{what} must be a string 'module.path:function'", location)
        module, colon, function = text.partition(":")
        if not colon or not re.fullmatch(_MODULE, module) or not re.fullmatch(_ATTRIBUTE, function):
            raise SpecError(f"{what} must be 'module.path:function', not '{text}'", location)
        return PythonRef(module, function, location)


@frozen
class OperatorExtensions:
    """What a library entry adds to PyTorch's spec language."""

    python_kernels: Mapping[DispatchKey, PythonRef]  # `python_dispatch:`: kernels by key
    fake: PythonRef | None  # `fake:`: the function computing outputs' metadata
    doc: str | None  # `doc:`: the operator's docstring


NO_EXTENSIONS = OperatorExtensions(MappingProxyType({}), None, None)


def read_extensions(entry: YamlMap) -> OperatorExtensions:
    """The `python_dispatch`, `fake` and `doc` keys of a library entry."""
    if not EXTENSION_KEYS.intersection(entry):
        return NO_EXTENSIONS
    fake = entry.get("fake")
    fake_at = entry.value_location("fake")
    doc = entry.get("doc")
    if doc is not None and not isinstance(doc, str):
        raise SpecError("'doc' must be a string", entry.value_location("doc"))
    return OperatorExtensions(
        python_kernels=MappingProxyType(_read_python_dispatch(entry)),
        fake=None if fake is None else PythonRef.parse(fake, fake_at, "'fake'"),
        doc=doc,
    )


def _read_python_dispatch(entry: YamlMap) -> dict[DispatchKey, PythonRef]:
    raw = entry.get("python_dispatch")
    if raw is None:
        return {}
    if not isinstance(raw, YamlMap) or not raw:
        raise SpecError(
            "'python_dispatch' must be a mapping from dispatch keys to Python functions",
            entry.value_location("python_dispatch"),
        )
    kernels: dict[DispatchKey, PythonRef] = {}
    dispatch = entry.get("dispatch")
    for keys, target in raw.items():
        ref = PythonRef.parse(target, raw.value_location(keys), "a Python kernel")
        offset = 0
        for piece in str(keys).split(","):
            name = piece.strip()
            start = offset + len(piece) - len(piece.lstrip())
            at = raw.key_location(keys).shifted(start, len(name))
            offset += len(piece) + 1
            key = DispatchKey.maybe_parse(name)
            if key not in PYTHON_DISPATCH_KEYS:
                allowed = ", ".join(str(k) for k in PYTHON_DISPATCH_KEYS)
                raise SpecError(f"a Python kernel's dispatch key must be one of {allowed}", at)
            if key in kernels or (isinstance(dispatch, Mapping) and _names(dispatch, key)):
                raise SpecError(f"dispatch key '{name}' has more than one kernel", at)
            kernels[key] = ref
    return kernels


def _names(dispatch: Mapping[object, object], key: DispatchKey) -> bool:
    """Whether a `dispatch:` table lists `key`."""
    return any(key.value in (k.strip() for k in str(keys).split(",")) for keys in dispatch)


def kernel_namespace(written: str, operator_namespace: str) -> str:
    """The C++ namespace of a library kernel written with namespace `written` (maybe '')."""
    return written or f"{operator_namespace}::native"


def described_keys(keys: tuple[DispatchKey, ...]) -> str:
    return ", ".join(str(k) for k in keys)


def unknown_key_errors(
    entry: YamlMap, native_keys: Set[str], library: bool
) -> Iterator[Diagnostic]:
    """A diagnostic for each key of `entry` that is not in its dialect."""
    known = LIBRARY_KEYS | EXTENSION_KEYS if library else native_keys
    for key in entry:
        if key in known:
            continue
        at = entry.key_location(key)
        if library and key in native_keys:
            yield Diagnostic(
                at,
                f"'{key}' is not allowed in a library spec: it drives ATen's own code generation",
            )
        elif not library and key in EXTENSION_KEYS:
            yield Diagnostic(
                at,
                f"unknown key '{key}' in operator entry ('{key}' belongs to library specs, "
                "which are read with --library)",
            )
        elif isinstance(key, str) and DispatchKey.maybe_parse(key) is not None:
            yield Diagnostic(
                at,
                f"unknown key '{key}' in operator entry: a dispatch key goes under 'dispatch:', "
                "indented below it",
            )
        else:
            hint = did_you_mean(str(key), known, listed_up_to=len(known) if library else 0)
            yield Diagnostic(at, f"unknown key '{key}' in operator entry{hint}")
