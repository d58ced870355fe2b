"""An entry's `kernels:`, with its `type_alias:` and `dim_order_alias:`: its kernel keys.

    type_alias:
      T0: [Float, Double]          # an alias: any one of these dtypes
    dim_order_alias:
      D0: [0, 1, 2, 3]             # an alias: one dim order
    kernels:
      - arg_meta: null             # the default kernel
        kernel_name: torch::executor::add_out
      - arg_meta:                  # argument: [type alias, dim-order alias]
          self: [T0, D0]
          out: [T0, D0]
        kernel_name: custom::add_out_fast

Each kernel gets one key per combination of its aliases' dtypes
(`ETKernelKey.gen_from_yaml`). The rules are upstream's (`executorch.codegen.parse`
and `model`): aliases must be defined, no key twice, a kernel name of at most three
namespaces. Where upstream stops with a Python error (a missing `kernel_name`, a
dtype its ScalarType does not have, which only its generator meets, a dim order
that is not a number) or silently accepts what cannot be meant, opgen reports a
located error: an unknown key, an `arg_meta` argument the schema does not have, a
dim order that is not a permutation, a dtype listed twice or none, a kernel name
that is not C++ names.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TypeVar

from opgen.diagnostics import Diagnostic, Location
from opgen.spec.backend import DEFAULT_KERNEL_NAMESPACE, BackendMetadata
from opgen.spec.entry_fields import describe
from opgen.spec.executorch.kernel_keys import DEFAULT_KERNEL_KEY, DTYPE_CODES, ETKernelKey
from opgen.spec.schema import FunctionSchema
from opgen.spec.yaml.load import YamlList, YamlMap

KERNEL_KEYS = ("arg_meta", "kernel_name")
# Upstream's NamespaceHelper for kernel names opens at most this many namespaces.
MAX_KERNEL_NAMESPACES = 3

Kernels = dict[ETKernelKey, BackendMetadata]
T = TypeVar("T")
# Reads one alias's value (alias name, value, where): its items, or None after an error.
AliasReader = Callable[[str, object, Location], tuple[T, ...] | None]


def read_kernels(
    entry: YamlMap, func: FunctionSchema | None, *, sort_arg_meta: bool
) -> tuple[Kernels, list[Diagnostic]]:
    """The entry's kernels by key, and the errors found.

    `func`: the operator's schema, whose arguments `arg_meta` may name (None when it
    could not be read: then the names are not checked). `sort_arg_meta`: order
    each key's arguments by name, as a functions YAML's are (upstream rewrites it with
    `yaml.dump`, which sorts mapping keys), rather than as written (a custom-ops YAML).
    """
    reader = _KernelsReader(entry, func, sort_arg_meta)
    return reader.read(), reader.errors


class _KernelsReader:
    def __init__(self, entry: YamlMap, func: FunctionSchema | None, sort_arg_meta: bool) -> None:
        self.entry = entry
        self.func = func
        self.sort_arg_meta = sort_arg_meta
        self.errors: list[Diagnostic] = []

    def error(self, message: str, at: Location) -> None:
        self.errors.append(Diagnostic(at, message))

    def read(self) -> Kernels:
        # Aliases with a bad value are known by name, so using them is no second error.
        type_aliases, bad_types = self.aliases("type_alias", self.dtypes)
        dim_orders, bad_dims = self.aliases("dim_order_alias", self.dim_order)
        items = self.entry.get("kernels")
        if items is None:  # no key, or no value: upstream reads both as no kernels
            return {}
        if not isinstance(items, YamlList):
            self.error(
                f"'kernels:' must be a list of kernels ('- arg_meta: ...', 'kernel_name: "
                f"...'), not {describe(items)}",
                self.entry.value_location("kernels"),
            )
            return {}
        kernels: Kernels = {}
        first: dict[ETKernelKey, tuple[int, int]] = {}  # the kernel's index and line
        for i, item in enumerate(items):
            at = items.item_locations[i]
            if not isinstance(item, YamlMap):
                self.error(
                    "a kernel must be a mapping with 'arg_meta:' and 'kernel_name:', "
                    f"not {describe(item)}",
                    at,
                )
                continue
            metadata = self.kernel(item)
            keys = self.keys(item, type_aliases, bad_types, dim_orders, bad_dims)
            if metadata is None or keys is None:
                continue
            for key in keys:
                index, line = first.setdefault(key, (i, item.line))
                if index != i:
                    self.duplicate(key, line, at)
                    break
                kernels[key] = metadata
        return kernels

    def duplicate(self, key: ETKernelKey, line: int, at: Location) -> None:
        if key.default:
            self.error(
                f"a second default kernel ('arg_meta: null'); the first is on line {line}", at
            )
        else:
            self.error(
                f"kernel key '{key.to_native_string()}' is also the key of the kernel on line "
                f"{line}; each key selects one kernel",
                at,
            )

    def aliases(
        self, key: str, read_value: AliasReader[T]
    ) -> tuple[dict[str, tuple[T, ...]], set[str]]:
        """The entry's aliases of one kind that are well formed, and the names of the others."""
        found: dict[str, tuple[T, ...]] = {}
        bad: set[str] = set()
        value = self.entry.get(key)
        if value is None:  # no key, or no value: no aliases
            return found, bad
        if not isinstance(value, YamlMap):
            self.error(
                f"'{key}:' must be a mapping from alias names to lists, not {describe(value)}",
                self.entry.value_location(key),
            )
            return found, bad
        for name, listed in value.items():
            if not isinstance(name, str):
                self.error(
                    f"an alias name must be a name, not {describe(name)}",
                    value.key_location(name),
                )
                continue
            values = read_value(name, listed, value.value_location(name))
            if values is None:
                bad.add(name)
            else:
                found[name] = values
        return found, bad

    def dtypes(self, alias: str, listed: object, at: Location) -> tuple[str, ...] | None:
        if not isinstance(listed, YamlList) or not listed:
            what = "an empty list" if isinstance(listed, list) else describe(listed)
            self.error(
                f"type alias '{alias}' must list dtypes, such as [Float, Double], not {what}",
                at,
            )
            return None
        ok = True
        for i, dtype in enumerate(listed):
            where = listed.item_locations[i]
            if not isinstance(dtype, str) or dtype not in DTYPE_CODES:
                close = _close_matches(str(dtype), DTYPE_CODES, n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                self.error(
                    f"'{dtype}' is not a dtype a kernel key can name; {hint}they are "
                    f"{', '.join(DTYPE_CODES)}",
                    where,
                )
                ok = False
            elif dtype in listed[:i]:
                self.error(
                    f"type alias '{alias}' lists '{dtype}' twice; its kernels would get the "
                    "same key twice",
                    where,
                )
                ok = False
        return tuple(str(dtype) for dtype in listed) if ok else None

    def dim_order(self, alias: str, listed: object, at: Location) -> tuple[int, ...] | None:
        if not isinstance(listed, YamlList):
            self.error(
                f"dim-order alias '{alias}' must be a list of dimension indices, such as "
                f"[0, 1, 2, 3], not {describe(listed)}",
                at,
            )
            return None
        dims: list[int] = []
        for i, dim in enumerate(listed):
            if not isinstance(dim, int) or isinstance(dim, bool):
                self.error(
                    f"a dim order lists dimension indices (integers), not {describe(dim)}",
                    listed.item_locations[i],
                )
                return None
            dims.append(dim)
        if sorted(dims) != list(range(len(dims))):
            self.error(
                f"dim order {_flow(dims)} of '{alias}' is not an order of the dimensions "
                f"0 to {len(dims) - 1}: each must appear once",
                at,
            )
            return None
        return tuple(dims)

    def kernel(self, item: YamlMap) -> BackendMetadata | None:
        """The kernel `kernel_name:` names; None after an error."""
        unknown = [key for key in item if key not in KERNEL_KEYS]
        for key in unknown:
            close = _close_matches(str(key), KERNEL_KEYS, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            self.error(
                f"unknown key '{key}' in a kernel; {hint}a kernel has 'arg_meta:' and "
                "'kernel_name:'",
                item.key_location(key),
            )
        if "kernel_name" not in item:
            if not unknown:  # a misspelt key is the one error
                self.error(
                    "a kernel needs 'kernel_name:', the C++ function that implements it",
                    item.location,
                )
            return None
        name = item["kernel_name"]
        at = item.value_location("kernel_name")
        if not isinstance(name, str):
            self.error(
                f"'kernel_name:' must be a C++ function name, such as "
                f"'torch::executor::add_out', not {describe(name)}",
                at,
            )
            return None
        *namespaces, kernel = name.split("::")
        if len(namespaces) > MAX_KERNEL_NAMESPACES:
            self.error(
                f"kernel '{name}' is in {len(namespaces)} nested namespaces; the generated "
                f"code opens at most {MAX_KERNEL_NAMESPACES}",
                at,
            )
            return None
        if not all(part.isidentifier() and part.isascii() for part in (*namespaces, kernel)):
            self.error(
                f"kernel name '{name}' is not a C++ name (names joined by '::', such as "
                "'torch::executor::add_out')",
                at,
            )
            return None
        namespace = "::".join(namespaces) + "::native" if namespaces else DEFAULT_KERNEL_NAMESPACE
        return None if unknown else BackendMetadata(kernel, False, namespace)

    def keys(
        self,
        item: YamlMap,
        type_aliases: Mapping[str, tuple[str, ...]],
        bad_types: Collection[str],
        dim_orders: Mapping[str, tuple[int, ...]],
        bad_dims: Collection[str],
    ) -> list[ETKernelKey] | None:
        """The kernel's keys; None after an error."""
        arg_meta = item.get("arg_meta")
        if arg_meta is None:  # no key, or null: the default kernel
            return [DEFAULT_KERNEL_KEY]
        if not isinstance(arg_meta, YamlMap):
            self.error(
                "'arg_meta:' must be null (the default kernel) or a mapping from argument "
                f"names to [type alias, dim-order alias], not {describe(arg_meta)}",
                item.value_location("arg_meta"),
            )
            return None
        args: dict[str, tuple[str, str]] = {}
        usable = True
        for name, spec in arg_meta.items():
            pair = self.argument(
                arg_meta, name, spec, type_aliases, bad_types, dim_orders, bad_dims
            )
            if pair is None:
                usable = False
            else:
                args[str(name)] = pair
        if not usable:
            return None
        if self.sort_arg_meta:
            args = dict(sorted(args.items()))
        return ETKernelKey.gen_from_yaml(args, type_aliases, dim_orders)

    def argument(
        self,
        arg_meta: YamlMap,
        name: object,
        spec: object,
        type_aliases: Mapping[str, tuple[str, ...]],
        bad_types: Collection[str],
        dim_orders: Mapping[str, tuple[int, ...]],
        bad_dims: Collection[str],
    ) -> tuple[str, str] | None:
        """One argument's (type alias, dim-order alias); None after an error."""
        if not isinstance(name, str):
            self.error(
                f"'arg_meta:' names arguments, not {describe(name)}", arg_meta.key_location(name)
            )
            return None
        arguments = [] if self.func is None else [a.name for a in self.func.arguments.flat_all]
        if self.func is not None and name not in arguments:
            close = _close_matches(name, arguments, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            self.error(
                f"'{name}' is not an argument of '{self.func.name}'; {hint}its arguments are "
                f"{', '.join(arguments)}",
                arg_meta.key_location(name),
            )
            return None
        at = arg_meta.value_location(name)
        if (
            not isinstance(spec, YamlList)
            or len(spec) != 2
            or not all(isinstance(s, str) for s in spec)
        ):
            self.error(
                f"'arg_meta:' of '{name}' must be [type alias, dim-order alias], such as "
                f"[T0, D0], not {_flow(spec) if isinstance(spec, list) else describe(spec)}",
                at,
            )
            return None
        type_alias, dim_alias = str(spec[0]), str(spec[1])
        ok = True
        if type_alias not in type_aliases and type_alias not in bad_types:
            self.undefined("type_alias", type_alias, type_aliases, spec.item_locations[0])
            ok = False
        if dim_alias not in dim_orders and dim_alias not in bad_dims:
            self.undefined("dim_order_alias", dim_alias, dim_orders, spec.item_locations[1])
            ok = False
        if type_alias in bad_types or dim_alias in bad_dims:
            ok = False
        return (type_alias, dim_alias) if ok else None

    def undefined(self, key: str, alias: str, defined: Collection[str], at: Location) -> None:
        kind = "type alias" if key == "type_alias" else "dim-order alias"
        if key == "type_alias" and alias in DTYPE_CODES:
            hint = f"; a dtype is named through an alias: '{key}: {{T0: [{alias}]}}'"
        elif defined:
            hint = f"; this entry's '{key}:' defines {', '.join(defined)}"
        else:
            hint = f"; this entry has no '{key}:'"
        self.error(f"undefined {kind} '{alias}'{hint}", at)


def _flow(items: object) -> str:
    """A list as YAML's flow style writes it: `[0, 0, 3]`."""
    assert isinstance(items, list)
    return "[" + ", ".join(str(i) for i in items) + "]"


def _close_matches(word: str, candidates: Collection[str], n: int) -> list[str]:
    """difflib's suggestions, imported only when a diagnostic needs one (a clean run of
    `opgen executorch` does not pay for the module)."""
    import difflib

    return difflib.get_close_matches(word, candidates, n=n)
