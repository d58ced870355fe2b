"""An out-of-tree backend's YAML: which operators a device outside PyTorch implements.

Backend vendors (torch_xla, torch_npu, PrivateUse1 devices, lazy-tensor
backends) describe their kernels for an existing spec in one small file:

    backend: XLA                 # the dispatch key; its kernels register there
    cpp_namespace: torch_xla     # where the kernel class lives
    class_name: XLANativeFunctions   # optional; default <backend>NativeFunctions
    use_out_as_primary: false    # optional: groups are implemented by their out= kernel
    device_guard: false          # optional: wrappers check devices and set a guard
    supported: [add.Tensor, ...] # kernels the vendor writes, by operator name
    autograd: [max_pool2d, ...]  # kernels registered to Autograd<backend> instead
    symint: [empty.memory_format, ...]  # kernels taking c10::SymInt, named *_symint
    full_codegen: [abs, ...]     # lazy backends: IR node and kernel generated
    ir_gen: [...]                # lazy backends: IR node only
    non_native: [{func: ..., properties: [...], opkind: ...}]  # lazy: extra IR nodes

Each kernel is a static member of the class, named like the operator's
dispatcher function (`add`, `add_out`; `_symint` appended for `symint:`
entries). `full_codegen` entries are kernels too. The rules are torchgen's
(torch 2.13, gen_backend_stubs.py); where torchgen stops with an assertion,
often only while writing files (a `cpp_namespace` of three levels, a `symint:`
entry for an operator without SymInt arguments, a `non_native` entry that is
not a mapping with a schema), or silently accepts a mistake, opgen reports a
located error instead, listed in the README's differences: an operator listed
twice, a `symint:` entry without a kernel, an unknown key in a `non_native`
entry, a namespace that is not C++ names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set

from opgen.diagnostics import Diagnostic, Location, SpecError, did_you_mean
from opgen.frozen import frozen
from opgen.spec.backend import BackendIndex, BackendMetadata, default_kernel_name
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import DispatchKey, SchemaKind
from opgen.spec.model import Spec
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema, OperatorName
from opgen.spec.syntax import SchemaError
from opgen.spec.yaml.load import YamlDocument, YamlList, YamlMap, load_yaml

# Every key torchgen reads, in the order its error message lists them.
KNOWN_KEYS = (
    "backend",
    "class_name",
    "cpp_namespace",
    "use_out_as_primary",
    "device_guard",
    "supported",
    "autograd",
    "symint",
    "full_codegen",
    "ir_gen",
    "non_native",
)
# Listed among torchgen's valid keys but never read: a file using it stops torchgen.
_UNREAD_KEY = "extra_headers"
_OPERATOR_LISTS = ("supported", "autograd", "symint", "full_codegen", "ir_gen")
# The lists torchgen reads an empty value of as an empty list; it stops on the others.
_MAY_BE_EMPTY = ("supported", "symint")
_NON_NATIVE_KEYS = ("func", "properties", "opkind")
# torchgen's NamespaceHelper opens at most this many nested namespaces.
_MAX_NAMESPACE_LEVELS = 2
_MAX_ERRORS = 20


@frozen
class ListedOperator:
    """One operator named in one of the file's lists."""

    name: OperatorName  # the operator, as the spec names it
    location: Location  # where the list names it


@frozen
class NonNativeNode:
    """A `non_native` entry: an IR node for something that is not an ATen operator."""

    func: FunctionSchema  # the node's schema, as an operator's is written
    properties: tuple[str, ...]  # checked by the lazy target, which knows them
    property_locations: tuple[Location, ...]  # where each property is written
    opkind: str | None  # the node's OpKind (`ltc_cast`), when not derived from its name
    location: Location  # the entry


@frozen(eq=False)
class ExternalBackend:
    """A backend YAML, checked against the spec it extends."""

    path: str  # the file
    backend: str  # as written; a dispatch key's name when any kernel is listed
    cpp_namespace: str  # the C++ namespace of the kernel class
    class_name: str | None  # None: the backend index's `<Key>NativeFunctions`
    use_out_as_primary: bool  # groups are implemented by their out= kernel
    device_guard: bool  # registrations check devices and set a device guard
    supported: tuple[ListedOperator, ...]  # without full_codegen
    autograd: tuple[ListedOperator, ...]  # kernels registered to Autograd<backend>
    symint: tuple[ListedOperator, ...]  # kernels taking c10::SymInt, named `*_symint`
    full_codegen: tuple[ListedOperator, ...]  # lazy: the IR node and the kernel generated
    ir_gen: tuple[ListedOperator, ...]  # lazy: only the IR node generated
    non_native: tuple[NonNativeNode, ...]  # lazy: IR nodes for no ATen operator
    backend_key: DispatchKey | None  # None when the file lists no forward kernel
    autograd_key: DispatchKey | None  # Autograd<backend>, when `autograd:` lists any
    indices: Mapping[DispatchKey, BackendIndex]  # the backend's and its autograd key's
    location: Location  # the document

    @property
    def kernel_class(self) -> str:
        """The class the kernels are members of."""
        if self.class_name is not None:
            return self.class_name
        assert self.backend_key is not None, "a backend without kernels has no class"
        return f"{self.backend_key}NativeFunctions"


def load_external_backend(path: str, spec: Spec) -> ExternalBackend:
    """Read and check `path` against `spec`; raises SpecError with every problem found."""
    return read_external_backend(load_yaml(path), spec)


def read_external_backend(
    doc: YamlDocument, spec: Spec, elsewhere: Set[str] = frozenset()
) -> ExternalBackend:
    """Check a backend YAML already read against `spec`.

    `elsewhere`: operators, as the file writes them, that `spec` does not hold because
    another part of the spec does (`opgen.spec.partial.family_parts`); they are listed
    unchecked and have no kernel in `indices`, which the read of that part gives.
    """
    return _Reader(doc, spec, elsewhere).read()


def listed_operators(doc: YamlDocument) -> tuple[str | None, frozenset[str]]:
    """What a backend YAML names, before any check: its `backend:` and every operator listed.

    Enough to decide which part of a spec to read (`opgen.spec.partial`); the
    checks come when the file is read against that spec.
    """
    root = doc.root
    if not isinstance(root, YamlMap):
        return None, frozenset()
    backend = root.get("backend")
    names: set[str] = set()
    for key in _OPERATOR_LISTS:
        items = root.get(key)
        if isinstance(items, list):
            names.update(item for item in items if isinstance(item, str))
    return (backend if isinstance(backend, str) else None), frozenset(names)


class _Reader:
    def __init__(self, doc: YamlDocument, spec: Spec, elsewhere: Set[str]) -> None:
        self.doc = doc
        self.spec = spec
        self.elsewhere = elsewhere
        self.errors: list[Diagnostic] = []
        self.functions = {f.func.name: f for f in spec.functions}

    def read(self) -> ExternalBackend:
        root = self.doc.root
        if not isinstance(root, YamlMap):
            found = "the file is empty" if root is None else f"the file is {_kind(root)}"
            raise SpecError(
                f"{found}; a backend YAML is a mapping ('backend: ...', 'cpp_namespace: ...', "
                "'supported: [...]', ...)",
                self.doc.location,
            )
        self._check_keys(root)
        backend = self._string(root, "backend", required=True) or ""
        cpp_namespace = self._string(root, "cpp_namespace", required=True) or ""
        if cpp_namespace:
            self._check_namespace(root, cpp_namespace)
        class_name = self._string(root, "class_name", required=False)
        use_out_as_primary = self._flag(root, "use_out_as_primary")
        device_guard = self._flag(root, "device_guard")
        lists = {key: self._operators(root, key) for key in _OPERATOR_LISTS}
        non_native = self._non_native(root)
        self._raise_errors()
        self._check_repeats(lists)
        supported = [*lists["supported"], *lists["full_codegen"]]
        backend_key = self._key(root, backend, "backend", supported, "")
        autograd_key = self._key(root, backend, "autograd", lists["autograd"], "Autograd")
        self._raise_errors()
        self._check_symint(lists["symint"], supported, lists["autograd"])
        self._raise_errors()
        symint = {op.name for op in lists["symint"]}
        indices: dict[DispatchKey, BackendIndex] = {}
        for key, listed in ((backend_key, supported), (autograd_key, lists["autograd"])):
            if key is not None:
                metadata = {
                    op.name: self._metadata(op.name, cpp_namespace, op.name in symint)
                    for op in listed
                    if op.name in self.functions
                }
                indices[key] = BackendIndex(key, use_out_as_primary, device_guard, True, metadata)
        self._check_not_mixed(indices, backend_key, autograd_key, lists)
        if not use_out_as_primary:
            for index in indices.values():
                self._check_derivable(index, lists)
        self._raise_errors()
        return ExternalBackend(
            self.doc.path,
            backend,
            cpp_namespace,
            class_name,
            use_out_as_primary,
            device_guard,
            lists["supported"],
            lists["autograd"],
            lists["symint"],
            lists["full_codegen"],
            lists["ir_gen"],
            non_native,
            backend_key,
            autograd_key,
            indices,
            self.doc.location,
        )

    def _raise_errors(self) -> None:
        if self.errors:
            raise SpecError.of(self.errors[:_MAX_ERRORS])

    def _error(self, message: str, at: Location) -> None:
        self.errors.append(Diagnostic(at, message))

    def _check_keys(self, root: YamlMap) -> None:
        for key in root:
            at = root.key_location(key)
            if key == _UNREAD_KEY:
                self._error(
                    f"'{_UNREAD_KEY}' is not supported: torchgen lists it as a valid key but "
                    "never reads it, and stops on a file that has it",
                    at,
                )
            elif key not in KNOWN_KEYS:
                close = _close_matches(str(key), KNOWN_KEYS)
                hint = f"did you mean '{close[0]}'? " if close else ""
                self._error(
                    f"unknown key '{key}'; {hint}a backend YAML has: {', '.join(KNOWN_KEYS)}", at
                )
        self._raise_errors()

    def _string(self, root: YamlMap, key: str, *, required: bool) -> str | None:
        value = root.get(key)
        if value is None:
            if key in root:
                self._error(f"'{key}:' has no value; give it a name", root.key_location(key))
            elif required:
                self._error(f"missing '{key}:', which a backend YAML must give", root.location)
            return None
        if not isinstance(value, str) or not value:
            self._error(f"'{key}:' must be a non-empty string", root.value_location(key))
            return None
        return value

    def _check_namespace(self, root: YamlMap, cpp_namespace: str) -> None:
        at = root.value_location("cpp_namespace")
        levels = cpp_namespace.split("::")
        if len(levels) > _MAX_NAMESPACE_LEVELS:
            self._error(
                f"'cpp_namespace:' has {len(levels)} levels, but the generated files open at "
                f"most {_MAX_NAMESPACE_LEVELS} nested namespaces (such as 'torch_xla::lazy')",
                at,
            )
        elif not all(level.isidentifier() and level.isascii() for level in levels):
            self._error(
                f"'cpp_namespace:' must be C++ names joined by '::', and '{cpp_namespace}' is not",
                at,
            )

    def _flag(self, root: YamlMap, key: str) -> bool:
        value = root.get(key, False)
        if not isinstance(value, bool):
            self._error(
                f"'{key}:' must be true or false, not {_kind(value)}", root.value_location(key)
            )
            return False
        return value

    def _list(self, root: YamlMap, key: str) -> YamlList | None:
        """The key's list; None when absent, or empty where torchgen allows that."""
        if key not in root:
            return None
        value = root[key]
        if value is None and key in _MAY_BE_EMPTY:
            return None
        if value is None:
            self._error(
                f"'{key}:' has no value; give it a list, or remove the key",
                root.key_location(key),
            )
            return None
        if not isinstance(value, YamlList):
            self._error(f"'{key}:' must be a list, not {_kind(value)}", root.value_location(key))
            return None
        return value

    def _operators(self, root: YamlMap, key: str) -> tuple[ListedOperator, ...]:
        items = self._list(root, key)
        if items is None:
            return ()
        found = []
        for i, item in enumerate(items):
            at = items.item_locations[i]
            if not isinstance(item, str):
                self._error(
                    f"an entry of '{key}:' must be an operator name such as 'add.Tensor', "
                    f"not {_kind(item)}",
                    at,
                )
                continue
            name = self._operator_name(key, item, at)
            if name is not None:
                found.append(ListedOperator(name, at))
        return tuple(found)

    def _operator_name(self, key: str, text: str, at: Location) -> OperatorName | None:
        if "(" in text:
            self._error(
                f"an entry of '{key}:' is an operator name, without its arguments: "
                f"'{text.partition('(')[0].strip()}'",
                at,
            )
            return None
        try:
            name = OperatorName.parse(text)
        except SchemaError as error:
            self.errors.extend(error.at(at).diagnostics)
            return None
        if name not in self.functions and text not in self.elsewhere:
            known = [str(n) for n in self.functions]
            hint = did_you_mean(text, known)
            self._error(f"'{text}' is not an operator of the spec{hint}", at)
            return None
        return name

    def _non_native(self, root: YamlMap) -> tuple[NonNativeNode, ...]:
        items = self._list(root, "non_native")
        if items is None:
            return ()
        found = []
        for i, item in enumerate(items):
            node = self._non_native_node(item, items.item_locations[i])
            if node is not None:
                found.append(node)
        return tuple(found)

    def _non_native_node(self, item: object, at: Location) -> NonNativeNode | None:
        if not isinstance(item, YamlMap):
            self._error(
                "a 'non_native' entry must be a mapping with 'func:' (a schema), "
                f"not {_kind(item)}",
                at,
            )
            return None
        for key in item:
            if key not in _NON_NATIVE_KEYS:
                close = _close_matches(str(key), _NON_NATIVE_KEYS)
                hint = f"did you mean '{close[0]}'? " if close else ""
                self._error(
                    f"unknown key '{key}' in a 'non_native' entry; {hint}it has func, "
                    "properties and opkind",
                    item.key_location(key),
                )
                return None
        text = item.get("func")
        if not isinstance(text, str):
            self._error("a 'non_native' entry needs 'func:', the node's schema", item.location)
            return None
        try:
            func = FunctionSchema.parse(text)
        except SchemaError as error:
            self.errors.extend(error.at(item.value_location("func")).diagnostics)
            return None
        properties, property_locations = self._properties(item)
        opkind = item.get("opkind")
        if opkind is not None and not isinstance(opkind, str):
            self._error(
                "'opkind:' must be a string such as 'ltc_cast'", item.value_location("opkind")
            )
            return None
        return NonNativeNode(func, properties, property_locations, opkind, item.location)

    def _properties(self, item: YamlMap) -> tuple[tuple[str, ...], tuple[Location, ...]]:
        value = item.get("properties")
        if value is None:
            return (), ()
        if not isinstance(value, YamlList):
            self._error(
                f"'properties:' must be a list of property names such as 'ShapeCompute', "
                f"not {_kind(value)}",
                item.value_location("properties"),
            )
            return (), ()
        for i, p in enumerate(value):
            if not isinstance(p, str):
                self._error(
                    f"a property must be a name such as 'ShapeCompute', not {_kind(p)}",
                    value.item_locations[i],
                )
                return (), ()
        return tuple(map(str, value)), tuple(value.item_locations[i] for i in range(len(value)))

    def _check_repeats(self, lists: Mapping[str, Sequence[ListedOperator]]) -> None:
        """No operator twice in one key's lists (supported and full_codegen are one key's)."""
        for keys in (("supported", "full_codegen"), ("autograd",), ("symint",), ("ir_gen",)):
            first: dict[OperatorName, tuple[str, ListedOperator]] = {}
            for key in keys:
                for op in lists[key]:
                    seen = first.get(op.name)
                    if seen is None:
                        first[op.name] = key, op
                        continue
                    line = seen[1].location.line
                    if seen[0] == key:
                        message = (
                            f"'{op.name}' is listed twice under '{key}:' (first at line "
                            f"{line}); list each kernel once"
                        )
                    else:  # supported and full_codegen
                        message = (
                            f"'{op.name}' is under '{key}:' and under '{seen[0]}:' (line "
                            f"{line}); a kernel is either written or generated, not both"
                        )
                    self._error(message, op.location)
        self._raise_errors()

    def _key(
        self,
        root: YamlMap,
        backend: str,
        list_key: str,
        listed: Sequence[ListedOperator],
        prefix: str,
    ) -> DispatchKey | None:
        """The dispatch key the list's kernels register to; None for an empty list."""
        if not listed:
            return None
        name = prefix + backend
        at = root.value_location("backend")
        try:
            key = DispatchKey(name)
        except ValueError:
            if prefix and backend in DispatchKey.__members__:
                self._error(
                    f"'{list_key}:' lists kernels for {name}, but {backend} has no autograd "
                    "dispatch key; remove the list",
                    root.key_location(list_key),
                )
                return None
            hint = did_you_mean(backend, [k.name for k in DispatchKey])
            wrong = Diagnostic(
                at, f"'backend:' must name a dispatch key, and '{backend}' is not one{hint}"
            )
            if wrong not in self.errors:  # once, though both lists need the key
                self.errors.append(wrong)
            return None
        if key in self.spec.backend_indices:
            self._error(
                f"the spec already has kernels for {name}; an out-of-tree backend needs its own "
                "dispatch key",
                at,
            )
            return None
        return key

    def _check_symint(
        self,
        symint: Sequence[ListedOperator],
        supported: Sequence[ListedOperator],
        autograd: Sequence[ListedOperator],
    ) -> None:
        kernels = {op.name for op in (*supported, *autograd)}
        for op in symint:
            f = self.functions.get(op.name)
            if f is None:  # another part of the spec's
                continue
            if not f.func.has_symint():
                self._error(
                    f"'{op.name}' has no SymInt argument, so it has no SymInt kernel; "
                    "remove it from 'symint:'",
                    op.location,
                )
            elif op.name not in kernels:
                self._error(
                    f"'{op.name}' is under 'symint:' but not under 'supported:', "
                    "'full_codegen:' or 'autograd:', so it has no kernel",
                    op.location,
                )

    def _metadata(self, name: OperatorName, cpp_namespace: str, symint: bool) -> BackendMetadata:
        kernel = default_kernel_name(self.functions[name].func)
        return BackendMetadata(kernel + "_symint" if symint else kernel, False, cpp_namespace)

    def _check_not_mixed(
        self,
        indices: Mapping[DispatchKey, BackendIndex],
        backend_key: DispatchKey | None,
        autograd_key: DispatchKey | None,
        lists: Mapping[str, Sequence[ListedOperator]],
    ) -> None:
        """An operator's variants register all to the backend key or all to its autograd key."""
        if backend_key is None or autograd_key is None:
            return
        forward, backward = indices[backend_key], indices[autograd_key]
        where = {op.name: op.location for op in lists["autograd"]}
        forward_list = {op.name: key for key in ("supported", "full_codegen") for op in lists[key]}
        for item in self.spec.grouped:
            functions = _members(item)
            ours = [f for f in functions if forward.index.get(f.func.name) is not None]
            theirs = [f for f in functions if backward.index.get(f.func.name) is not None]
            if not (ours and theirs):
                continue
            name, other = theirs[0].func.name, ours[0].func.name
            if name in forward.index:
                also = f"it is under '{forward_list[name]}:' too"
            else:
                also = f"'{other}', a variant of it, is under '{forward_list[other]}:'"
            self._error(
                f"'{name}' is under 'autograd:' but {also}; all variants of an operator "
                f"register to {backend_key} or all to {autograd_key}",
                where[name],
            )

    def _check_derivable(
        self, index: BackendIndex, lists: Mapping[str, Sequence[ListedOperator]]
    ) -> None:
        """Without `use_out_as_primary`, the unlisted out= and inplace variants of a listed
        functional operator get wrappers that copy its result; each needs somewhere to copy
        to: a return, or a single out= argument."""
        where = {op.name: op.location for ops in lists.values() for op in ops}
        for g in self.spec.grouped:
            if not isinstance(g, NativeFunctionsGroup) or g.functional.func.name not in index.index:
                continue
            for f in g.functions():
                if f.func.name in index.index or f.manual_kernel_registration:
                    continue
                kind = f.func.kind
                copyable = kind in (SchemaKind.inplace, SchemaKind.out) and (
                    f.func.returns or len(f.func.arguments.out) == 1
                )
                if kind is not SchemaKind.functional and not copyable:
                    outs = len(f.func.arguments.out)
                    self._error(
                        f"'{g.functional.func.name}' is listed, so its unlisted variant "
                        f"'{f.func.name}' gets a wrapper that copies the functional result "
                        "into its output, but it returns nothing and has "
                        f"{outs or 'no'} out= argument{'' if outs == 1 else 's'}; list "
                        f"'{f.func.name}' too, or set 'use_out_as_primary: true'",
                        where[g.functional.func.name],
                    )


def _members(item: NativeFunction | NativeFunctionsGroup) -> tuple[NativeFunction, ...]:
    # A tuple: a group's functions() is an iterator, and callers read the members twice.
    return tuple(item.functions()) if isinstance(item, NativeFunctionsGroup) else (item,)


def _kind(value: object) -> str:
    """What a YAML value is, for a message: 'a mapping', 'a number', ..."""
    if isinstance(value, YamlMap):
        return "a mapping"
    if isinstance(value, YamlList):
        return "a list"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "empty" if value is None else "a YAML value of another kind"


def _close_matches(word: str, choices: Iterable[str]) -> list[str]:
    """The nearest choice, if one is near: for "did you mean" hints, which only errors need."""
    import difflib

    return difflib.get_close_matches(word, list(choices), n=1)
