"""An entry's `dispatch:` table: which kernel implements the operator for each key.

A line maps one or several keys (`CPU, CUDA: add_out`) to a kernel name,
`[namespace::]name` (in `at::native` by default; in a library spec, in the library's
namespace). Without a table an operator gets the implicit CompositeImplicitAutograd
kernel, unless it is structured, a structured delegate or a factory (factories must
not decompose). `read_dispatch` checks every key and kernel where it is written, and
the rules between them: each key once, composite keys that subsume each other, no
table that only repeats the default.
"""

from __future__ import annotations

from collections.abc import Iterator, Set

from opgen.diagnostics import SpecError, did_you_mean
from opgen.releases import AUTOCAST_XPU_KEY, NEWEST, Release
from opgen.spec.backend import DEFAULT_KERNEL_NAMESPACE, BackendMetadata, default_kernel_name
from opgen.spec.entry_fields import EntryFields, describe
from opgen.spec.keys import (
    COMPOSITE_DISPATCH_KEYS,
    STRUCTURED_DISPATCH_KEYS,
    SUPPORTED_DISPATCH_KEYS,
    DispatchKey,
)
from opgen.spec.library import LIBRARY_DISPATCH_KEYS, described_keys, kernel_namespace
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.syntax import SchemaError
from opgen.spec.yaml.load import YamlMap

CIA = DispatchKey.CompositeImplicitAutograd
CIA_NESTED = DispatchKey.CompositeImplicitAutogradNestedTensor
CEA_NON_FUNCTIONAL = DispatchKey.CompositeExplicitAutogradNonFunctional

Dispatch = dict[DispatchKey, BackendMetadata]


def read_dispatch(
    e: EntryFields,
    func: FunctionSchema,
    structured: bool,
    delegate: OperatorName | None,
    library: bool,
    ignore_keys: Set[DispatchKey],
    release: Release = NEWEST,
) -> tuple[Dispatch, bool]:
    """The kernels per dispatch key, and whether the operator is abstract.

    Keys are those `release` knows (AutocastXPU arrived in 2.13).
    """
    raw = e.entry.get("dispatch")
    if raw is None and library:
        if "python_dispatch" in e.entry:
            return {}, True
        raise MissingKernels(
            f"operator '{func.name}' has no kernel: give it a 'dispatch' table of C++ "
            "kernels or a 'python_dispatch' table of Python kernels",
            e.at("func"),
        )
    if raw is None:
        if structured or delegate is not None:
            return {}, True
        _check_not_factory(e, func)
        return {
            CIA: BackendMetadata(default_kernel_name(func), False, DEFAULT_KERNEL_NAMESPACE)
        }, False
    if not isinstance(raw, YamlMap):
        raise SpecError(f"'dispatch' must be a mapping, not {describe(raw)}", e.at("dispatch"))
    if e.entry.get("manual_kernel_registration") is True:
        raise SpecError(
            "'dispatch' has no effect with 'manual_kernel_registration: True'; remove one of them",
            e.entry.key_location("dispatch"),
        )
    dispatch: Dispatch = {}
    listed = 0
    redundant_cia = False
    for keys, kernel in raw.items():
        if not isinstance(keys, str):
            raise SpecError(
                f"dispatch keys must be names, not {describe(keys)}", raw.key_location(keys)
            )
        if not isinstance(kernel, str):
            raise SpecError(
                f"a kernel must be a name, not {describe(kernel)}", raw.value_location(keys)
            )
        try:
            metadata = _kernel(kernel, structured, _func_namespace(e) if library else None)
            for key in _read_dispatch_keys(keys, dispatch, library, release):
                listed += 1
                if key in ignore_keys:
                    continue
                dispatch[key] = (
                    metadata if key in STRUCTURED_DISPATCH_KEYS else metadata.unstructured
                )
                redundant_cia |= key is CIA and kernel == default_kernel_name(func)
        except _KernelError as error:
            raise error.at(raw.value_location(keys)) from None
        except SchemaError as error:
            raise error.at(raw.key_location(keys)) from None
    if not library:
        _check_dispatch(e, func, dispatch, listed, redundant_cia, delegate)
    abstract = set(dispatch) not in _IMPLICIT_ONLY
    return dispatch, abstract


# Dispatch tables whose operator still decomposes (is not abstract).
_IMPLICIT_ONLY = (frozenset({CIA}), frozenset({CIA_NESTED}), frozenset({CIA, CIA_NESTED}))
_SUPPORTED_DISPATCH_KEYS = frozenset(SUPPORTED_DISPATCH_KEYS)
_LIBRARY_DISPATCH_KEYS = frozenset(LIBRARY_DISPATCH_KEYS)


class MissingKernels(SpecError):
    """A library operator without a kernel (which a misspelt `dispatch:` also gives)."""


class _KernelError(SchemaError):
    """An error in a kernel name (the value of a dispatch line, not its keys)."""


def _read_dispatch_keys(
    keys: str, seen: Dispatch, library: bool, release: Release
) -> Iterator[DispatchKey]:
    """The keys of one dispatch line, `CPU, CUDA`; errors are SchemaErrors in `keys`."""
    supported = _LIBRARY_DISPATCH_KEYS if library else _SUPPORTED_DISPATCH_KEYS
    offset = 0
    for piece in keys.split(","):
        name = piece.strip()
        at = offset + len(piece) - len(piece.lstrip())
        offset += len(piece) + 1
        key = DispatchKey.maybe_parse(name)
        if key is DispatchKey.AutocastXPU and not release.has(AUTOCAST_XPU_KEY):
            key = None
        if key is None:
            choices = LIBRARY_DISPATCH_KEYS if library else SUPPORTED_DISPATCH_KEYS
            hint = (
                did_you_mean(name, (str(k) for k in choices), listed_up_to=8)
                if name
                else " (a trailing comma?)"
            )
            raise SchemaError(f"unknown dispatch key '{name}'{hint}", at, max(len(name), 1))
        if library and key not in supported:
            raise SchemaError(
                f"dispatch key '{name}' cannot have kernels in a library spec "
                f"(one of {described_keys(LIBRARY_DISPATCH_KEYS)})",
                at,
                len(name),
            )
        if key not in supported:
            raise SchemaError(
                f"dispatch key '{name}' cannot have kernels in native_functions.yaml", at, len(name)
            )
        if key in seen:
            raise SchemaError(f"dispatch key '{name}' is given more than once", at, len(name))
        if key in COMPOSITE_DISPATCH_KEYS and not _composites_compatible(key, seen):
            raise SchemaError(
                "at most one of CompositeExplicitAutograd, CompositeExplicitAutogradNonFunctional "
                "and CompositeImplicitAutograd may have a kernel: each subsumes the others",
                at,
                len(name),
            )
        yield key


def _composites_compatible(key: DispatchKey, seen: Dispatch) -> bool:
    """Only CompositeImplicitAutogradNestedTensor may join one other composite key
    (not CompositeExplicitAutogradNonFunctional)."""
    if not seen:
        return True
    composites = {key, *(COMPOSITE_DISPATCH_KEYS & set(seen))}
    if len(composites) == 1:
        return True
    return (
        len(composites) == 2 and CIA_NESTED in composites and CEA_NON_FUNCTIONAL not in composites
    )


def _kernel(text: str, structured: bool, library_namespace: str | None) -> BackendMetadata:
    """A kernel `[namespace::]name`: in `namespace::native` (`at::native` by default);
    for a library, exactly in `namespace` (`<library_namespace>::native` by default)."""
    namespace, _, name = text.rpartition("::")
    if library_namespace is not None:
        return BackendMetadata(name, False, kernel_namespace(namespace, library_namespace))
    if namespace.count("::") > 2:
        raise _KernelError(
            f"kernel namespace '{namespace}' has more than three levels", 0, len(namespace)
        )
    return BackendMetadata(name, structured, f"{namespace or 'at'}::native")


def _func_namespace(e: EntryFields) -> str:
    """The operator namespace written in `func:` (already checked by `_read_func`)."""
    return str(e.entry["func"]).partition("(")[0].rpartition("::")[0]


def _check_not_factory(e: EntryFields, func: FunctionSchema) -> None:
    name = str(func.name.name)
    factory = func.arguments.tensor_options is not None and not func.arguments.has_tensor_arg()
    if name.startswith("new_") or name.endswith("_like") or factory:
        raise SpecError(
            f"factory operator '{func.name}' needs a dispatch table with a "
            "CompositeExplicitAutograd kernel: factories must not decompose implicitly",
            e.at("func"),
        )


def _check_dispatch(
    e: EntryFields,
    func: FunctionSchema,
    dispatch: Dispatch,
    listed: int,
    redundant_cia: bool,
    delegate: OperatorName | None,
) -> None:
    if listed == 1 and redundant_cia:
        raise SpecError(
            "this dispatch table only repeats the default; delete it",
            e.entry.key_location("dispatch"),
        )
    if (
        delegate is None
        and listed == 1
        and set(dispatch) == {CIA}
        and not dispatch[CIA].supports_symint()
    ):
        raise SpecError(
            f"a lone CompositeImplicitAutograd kernel must be named '{default_kernel_name(func)}' "
            f"(then delete the dispatch table), not '{dispatch[CIA].kernel}'",
            e.at("dispatch"),
        )
    if delegate is not None:
        for key in sorted(STRUCTURED_DISPATCH_KEYS & set(dispatch), key=lambda k: k.value):
            raise SpecError(
                f"a structured_delegate operator gets its {key} kernel from the delegate; "
                f"remove {key} from the dispatch table",
                e.at("dispatch"),
            )
