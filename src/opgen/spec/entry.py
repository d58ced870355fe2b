"""A `native_functions.yaml` entry to a `NativeFunction` and its dispatch table.

`read_entry` checks each key's type and value, fills in defaults, adds the
implicit tags (`out`, `inplace`, `pt2_compliant_tag` for aten), and derives
the implicit `CompositeImplicitAutograd` kernel of an entry without a
dispatch table. Every error points at the key or value at fault.
"""

from __future__ import annotations

from collections.abc import Set

from opgen.diagnostics import Diagnostic, Location, SpecError, did_you_mean
from opgen.frozen import frozen
from opgen.releases import (
    AUTOMATIC_OUT_INPLACE_TAGS,
    NAMED_DIMENSIONS,
    NEWEST,
    PHILOX_NOT_RANDOM,
    Release,
)
from opgen.spec.backend import DEFAULT_KERNEL_NAMESPACE, BackendMetadata
from opgen.spec.dispatch_table import (
    CEA_NON_FUNCTIONAL,
    CIA,
    CIA_NESTED,
    Dispatch,
    MissingKernels,
    read_dispatch,
)
from opgen.spec.entry_fields import EntryFields, describe
from opgen.spec.keys import (
    UFUNC_DISPATCH_KEYS,
    DeviceCheckType,
    DispatchKey,
    SchemaKind,
    UfuncKey,
    Variant,
)
from opgen.spec.library import (
    EXTENSION_KEYS,
    LIBRARY_KEYS,
    NO_EXTENSIONS,
    read_extensions,
    unknown_key_errors,
)
from opgen.spec.native import NativeFunction
from opgen.spec.precompute import Precompute, UfuncInnerLoop
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.syntax import SchemaError
from opgen.spec.yaml.load import YamlList, YamlMap
from opgen.spec.yaml.located import written

KNOWN_KEYS = frozenset(
    {
        "func", "variants", "dispatch", "tags", "structured", "structured_delegate",
        "structured_inherits", "precomputed", "autogen", "manual_kernel_registration",
        "manual_cpp_binding", "python_module", "category_override", "device_guard",
        "device_check", "use_const_ref_for_mutable_tensors", "cpp_no_default_args",
        "ufunc_inner_loop",
    }
)  # fmt: skip


@frozen
class EntryOptions:
    valid_tags: Set[str]  # the tags of the tags file (and of torch, for a library)
    ignore_keys: Set[DispatchKey] = frozenset()  # dispatch entries to drop, e.g. MPS
    library: bool = False  # the library dialect (opgen.spec.library)
    # Read for `opgen diff`: accept what older PyTorch specs allowed and later ones
    # forbid (removed types, rules added since, tags outside the tags file).
    for_comparison: bool = False
    release: Release = NEWEST  # whose rules apply (`opgen.releases`)
    namespace_hint: str = "mylib"  # a library's namespace, for hints: its first operator's


def read_entry(entry: YamlMap, options: EntryOptions) -> tuple[NativeFunction, Dispatch]:
    """The entry's function and dispatch table. Unknown keys are reported together with
    the first error of the keys that are known, which are read as if the others were not
    there (a misspelt `func:` alone is reported alone)."""
    known = LIBRARY_KEYS | EXTENSION_KEYS if options.library else KNOWN_KEYS
    if known.issuperset(entry):
        return _read_known(entry, options)
    unknown = list(unknown_key_errors(entry, KNOWN_KEYS, options.library))
    if "func" not in entry:
        raise SpecError.of(unknown)
    try:
        _read_known(_only(entry, known), options)
    except MissingKernels as e:
        if not any(_may_be_kernels(key) for key in entry):
            unknown.extend(e.diagnostics)
    except SpecError as e:
        unknown.extend(e.diagnostics)
    raise SpecError.of(sorted(unknown, key=_position))


def _only(entry: YamlMap, keys: Set[object]) -> YamlMap:
    """`entry` with only `keys`, located as `entry` is."""
    kept = YamlMap((k, v) for k, v in entry.items() if k in keys)
    kept.line, kept.positions, kept.at, kept.entry_at = (
        entry.line, entry.positions, entry.at, entry.entry_at,
    )  # fmt: skip
    return kept


def _may_be_kernels(key: object) -> bool:
    """Whether an unknown key may be where the entry's kernels went: a dispatch key, or a
    misspelt `dispatch`."""
    name = str(key)
    return DispatchKey.maybe_parse(name) is not None or bool(
        did_you_mean(name, ("dispatch", "python_dispatch"))
    )


def _position(d: Diagnostic) -> tuple[int, int]:
    return (0, 0) if d.location is None else (d.location.line, d.location.col or 0)


def _read_known(entry: YamlMap, options: EntryOptions) -> tuple[NativeFunction, Dispatch]:
    e = EntryFields(entry)
    if "func" not in entry:
        raise SpecError("operator entry has no 'func' key", entry.location)
    named_dimensions = options.for_comparison or options.release.has(NAMED_DIMENSIONS)
    namespace, func = _read_func(e, options.library, named_dimensions)
    if options.library and len(str(entry["func"])) == len(func.text):
        raise SpecError(
            "a library operator needs its namespace, as in "
            f"'{options.namespace_hint}::{func.name}'",
            e.at("func"),
        )
    # Most keys are absent from most entries: the readers of optional keys are
    # called only for keys that are present, in a fixed order (so that an entry
    # with several bad keys always reports the same one).
    structured = "structured" in entry and e.flag("structured", False)
    structured_delegate = (
        _read_operator_name(e, "structured_delegate") if "structured_delegate" in entry else None
    )
    dispatch, abstract = read_dispatch(
        e,
        func,
        structured,
        structured_delegate,
        options.library,
        options.ignore_keys,
        options.release,
    )
    precomputed = _read_precomputed(e, structured) if "precomputed" in entry else None
    f = NativeFunction(
        namespace=namespace,
        func=func,
        use_const_ref_for_mutable_tensors=_read_const_ref(e, func, options.for_comparison),
        device_guard="device_guard" not in entry or e.flag("device_guard", True),
        device_check=(
            _read_device_check(e) if "device_check" in entry else DeviceCheckType.ExactSame
        ),
        python_module=_read_python_module(e) if "python_module" in entry else None,
        category_override=e.optional_str("category_override"),
        variants=_read_variants(e),
        manual_kernel_registration=(
            "manual_kernel_registration" in entry and e.flag("manual_kernel_registration", False)
        ),
        manual_cpp_binding="manual_cpp_binding" in entry and e.flag("manual_cpp_binding", False),
        loc=Location(entry.path, entry.line),
        autogen=_read_autogen(e),
        ufunc_inner_loop=(
            _read_ufunc_inner_loop(e, func, structured, dispatch)
            if "ufunc_inner_loop" in entry
            else {}
        ),
        structured=structured,
        structured_delegate=structured_delegate,
        structured_inherits=_read_structured_inherits(e),
        precomputed=precomputed,
        cpp_no_default_args=_read_cpp_no_default_args(e, func),
        is_abstract=abstract or structured_delegate is not None,
        has_composite_implicit_autograd_kernel=CIA in dispatch,
        has_composite_implicit_autograd_nested_tensor_kernel=CIA_NESTED in dispatch,
        has_composite_explicit_autograd_kernel=DispatchKey.CompositeExplicitAutograd in dispatch,
        has_composite_explicit_autograd_non_functional_kernel=CEA_NON_FUNCTIONAL in dispatch,
        tags=_read_tags(e, namespace, func, options),
        source=entry,
        namespace_prefix=len(str(entry["func"])) - len(func.text),
        extensions=read_extensions(entry) if options.library else NO_EXTENSIONS,
    )
    if not options.for_comparison:
        _check_seeded(f, options.release)
    if f.is_view_op and func.name.name.inplace and "inplace_view" not in f.tags:
        raise SpecError(
            f"'{func.name}' is an inplace view operator but is not tagged 'inplace_view'",
            f.location_of("tags") if "tags" in entry else e.at("func"),
        )
    return f, dispatch


def _check_seeded(f: NativeFunction, release: Release) -> None:
    """A random-looking operator must be tagged nondeterministic_seeded (torch 2.0's spec
    breaks this rule of later versions: `opgen diff` reads it without the check). Since
    2.15 a '_philox_' name is not random by itself (`PHILOX_NOT_RANDOM`)."""
    philox_exempt = release.has(PHILOX_NOT_RANDOM)
    if f.looks_random(philox_exempt=philox_exempt) and "nondeterministic_seeded" not in f.tags:
        raise SpecError(
            f"'{f.func.name}' looks random (its name, a dropout argument or a Generator "
            "argument says so) but is not tagged 'nondeterministic_seeded'",
            f.location_of("tags"),
        )


def _read_func(e: EntryFields, library: bool, named_dimensions: bool) -> tuple[str, FunctionSchema]:
    text = e.get("func", str, "", "a schema string")
    head = text.partition("(")[0]
    namespace, sep, _ = head.rpartition("::")
    if "::" in namespace:
        raise SpecError(
            f"operator namespace '{namespace}' has more than one level",
            e.at("func").shifted(0, len(namespace)),
        )
    if sep and not namespace:
        raise SpecError("empty operator namespace before '::'", e.at("func").shifted(0, 2))
    skip = len(namespace) + len(sep)
    try:
        schema = FunctionSchema.parse(
            text[skip:], library=library, named_dimensions=named_dimensions
        )
        return namespace or "aten", schema
    except SchemaError as error:
        raise _misread(e, skip, error) from None


def _misread(e: EntryFields, skip: int, error: SchemaError) -> SpecError:
    """The schema's error, at its place in the file, also when 'func:' spans lines."""
    value = written(e.entry, "func")
    if value.block and value.text.find("\n") == len(value.text) - 1:
        return SpecError(
            f"a schema must be written on one line; this '{value.block}' block scalar ends "
            f"in a line break (write the schema after 'func:', or use '{value.block}-')",
            value.location,
        )
    return value.place(error, skip)


def _read_operator_name(e: EntryFields, key: str) -> OperatorName | None:
    text = e.optional_str(key)
    if text is None:
        return None
    if "::" in text:
        raise SpecError(
            f"'{key}' cannot name a namespace; it is always the operator's own", e.at(key)
        )
    try:
        return OperatorName.parse(text)
    except SchemaError as error:
        raise error.at(e.at(key)) from None


def _read_structured_inherits(e: EntryFields) -> str | None:
    text = e.optional_str("structured_inherits")
    if text is not None and "::" in text:
        raise SpecError(
            "'structured_inherits' cannot name a namespace", e.at("structured_inherits")
        )
    return text


def _read_const_ref(e: EntryFields, func: FunctionSchema, for_comparison: bool) -> bool:
    if "use_const_ref_for_mutable_tensors" not in e.entry:
        return False
    value = e.flag("use_const_ref_for_mutable_tensors", False)
    if value and func.arguments.out and not for_comparison:  # torch 2.4's spec has five
        raise SpecError(
            "'use_const_ref_for_mutable_tensors' is not supported on out= operators",
            e.at("use_const_ref_for_mutable_tensors"),
        )
    return value


_FUNCTION_ONLY = frozenset({Variant.function})


def _read_variants(e: EntryFields) -> frozenset[Variant]:
    if "variants" not in e.entry:
        return _FUNCTION_ONLY
    text = e.get("variants", str, "function", "'function', 'method' or 'function, method'")
    variants: set[Variant] = set()
    offset = 0
    for name in text.split(", "):
        if name not in ("function", "method"):
            raise SpecError(
                f"unknown variant '{name}'; expected 'function' or 'method', separated by ', '",
                e.at("variants").shifted(offset, len(name)),
            )
        variants.add(Variant(name))
        offset += len(name) + 2
    return frozenset(variants)


def _read_device_check(e: EntryFields) -> DeviceCheckType:
    text = e.optional_str("device_check")
    if text is None:
        return DeviceCheckType.ExactSame
    if text not in DeviceCheckType.__members__:
        raise SpecError(
            f"unknown device_check '{text}'; expected 'ExactSame' or 'NoCheck'",
            e.at("device_check"),
        )
    return DeviceCheckType[text]


def _read_python_module(e: EntryFields) -> str | None:
    module = e.optional_str("python_module")
    if module is not None and "method" in str(e.entry.get("variants", "")).split(", "):
        raise SpecError(
            "an operator in a python_module cannot have a method variant", e.at("python_module")
        )
    return module


def _read_precomputed(e: EntryFields, structured: bool) -> Precompute | None:
    value = e.entry.get("precomputed")
    if value is None:
        return None
    if not structured:
        raise SpecError(
            "'precomputed' requires 'structured: True'", e.entry.key_location("precomputed")
        )
    if not isinstance(value, list):
        raise SpecError(
            f"'precomputed' must be a list of strings, not {describe(value)}", e.at("precomputed")
        )
    if not value:
        return None
    for i, line in enumerate(value):
        if not isinstance(line, str):
            where = value.item_locations[i] if isinstance(value, YamlList) else e.at("precomputed")
            raise SpecError(f"precomputed lines must be strings, not {describe(line)}", where)
    try:
        return Precompute.parse([str(line) for line in value])
    except SchemaError as error:
        raise e.schema_error("precomputed", error) from None


def _read_cpp_no_default_args(e: EntryFields, func: FunctionSchema) -> frozenset[str]:
    if "cpp_no_default_args" not in e.entry:
        return frozenset()
    value = e.get("cpp_no_default_args", list, [], "a list of argument names")
    defaulted = {a.name for a in func.arguments.flat_all if a.default is not None}
    for i, name in enumerate(value):
        if not isinstance(name, str) or name not in defaulted:
            where = value.item_locations[i] if isinstance(value, YamlList) else e.at("func")
            raise SpecError(
                f"cpp_no_default_args names '{name}', which is not an argument with a default",
                where,
            )
    return frozenset(str(v) for v in value)


def _read_autogen(e: EntryFields) -> tuple[OperatorName, ...]:
    if "autogen" not in e.entry:
        return ()
    text = e.get("autogen", str, "", "a string of operator names separated by ', '")
    if text == "":
        return ()
    names: list[OperatorName] = []
    offset = 0
    for piece in text.split(", "):
        try:
            names.append(OperatorName.parse(piece, offset))
        except SchemaError as error:
            raise error.at(e.at("autogen")) from None
        offset += len(piece) + 2
    return tuple(names)


def _read_tags(
    e: EntryFields, namespace: str, func: FunctionSchema, options: EntryOptions
) -> frozenset[str]:
    valid = options.valid_tags
    value = e.entry.get("tags", [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise SpecError(
            f"'tags' must be a tag or a list of tags, not {describe(value)}", e.at("tags")
        )
    for i, tag in enumerate(value):
        if not isinstance(tag, str) or (tag not in valid and not options.for_comparison):
            locations = getattr(value, "item_locations", None)
            where = locations[i] if locations else e.at("tags")
            raise SpecError(_unknown_tag(tag, options), where)
    tags = set(value)  # strings, checked above
    if namespace == "aten" and "pt2_compliant_tag" in valid:
        tags.add("pt2_compliant_tag")
    if options.release.has(AUTOMATIC_OUT_INPLACE_TAGS) and not options.library:
        if func.arguments.out and "out" in valid:
            tags.add("out")
        if func.name.name.inplace and "inplace" in valid:
            tags.add("inplace")
    return frozenset(tags)


def _unknown_tag(tag: object, options: EntryOptions) -> str:
    valid = options.valid_tags
    if options.library:
        why = f"torch {options.release} has no such at::Tag, and no tags file adds it"
    else:
        why = "not in the tags file" if valid else "no tags file was given"
    hint = did_you_mean(tag, valid) if isinstance(tag, str) else ""
    return f"unknown tag '{tag}' ({why}){hint}"


def _read_ufunc_inner_loop(
    e: EntryFields, func: FunctionSchema, structured: bool, dispatch: Dispatch
) -> dict[UfuncKey, UfuncInnerLoop]:
    raw = e.entry.get("ufunc_inner_loop", {})
    if isinstance(raw, dict) and not raw:
        return {}
    # Locations are found only for an error: the first one costs a pass over the file.
    loops: dict[UfuncKey, UfuncInnerLoop] = {}
    items: list[tuple[object, object]]
    if isinstance(raw, str):
        items = [(UfuncKey.Generic.value, raw)]
    elif isinstance(raw, YamlMap):
        items = list(raw.items())
    else:
        raise SpecError(
            f"'ufunc_inner_loop' must be a string or a mapping, not {describe(raw)}",
            e.at("ufunc_inner_loop"),
        )

    def at(key_name: object) -> Location:
        if isinstance(raw, YamlMap):
            return raw.value_location(key_name)
        return e.at("ufunc_inner_loop")

    for key_name, text in items:
        if key_name not in UfuncKey.__members__:
            raise SpecError(f"unknown ufunc key '{key_name}'", at(key_name))
        if not isinstance(text, str):
            raise SpecError(
                f"a ufunc inner loop must be a string, not {describe(text)}", at(key_name)
            )
        ufunc_key = UfuncKey[str(key_name)]
        try:
            loops[ufunc_key] = UfuncInnerLoop.parse(text, ufunc_key)
        except SchemaError as error:
            raise error.at(at(key_name)) from None
    if loops:
        if not structured or not func.is_out_fn():
            raise SpecError(
                "'ufunc_inner_loop' requires a structured out= operator", e.at("ufunc_inner_loop")
            )
        for key in UFUNC_DISPATCH_KEYS:
            if key in dispatch:
                raise SpecError(
                    f"a ufunc operator gets its {key} kernel generated; remove {key} from "
                    "the dispatch table",
                    e.at("dispatch"),
                )
            dispatch[key] = BackendMetadata(
                f"ufunc_{func.name.name}_{key}", True, DEFAULT_KERNEL_NAMESPACE
            )
    return loops


__all__ = ["EntryOptions", "SchemaKind", "read_entry"]
