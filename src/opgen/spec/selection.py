"""Operator selection for selective (custom) builds: which operators a build keeps.

A mobile or custom build registers only the operators its models use. The
selection says which; emitters ask it per operator, by the name
`namespace::name.overload` (`op_name_from_native_function`). It comes from one
of three places, as in `python -m torchgen.gen` (`from_flags`):

- nothing given: `everything()`, which selects every operator;
- `--op-registration-whitelist NAME...`: `from_allowlist`, every overload of each
  name, all root operators, none for training, every kernel dtype;
- `--op-selection-yaml-path FILE`: `from_yaml_path`, a mapping such as

      include_all_operators: false
      operators:
        aten::add:                    # no overload name: with include_all_overloads,
          include_all_overloads: true # every aten::add.* overload
          is_root_operator: true      # called by a model itself (default true)
          is_used_for_training: false # (default true)
        aten::mul.Tensor: {}          # just this overload
      kernel_metadata: {add_kernel: [Float, Int]}
      custom_classes: [MyClass]

An operator is selected if its full name is listed, or its name up to the first
'.' is listed with `include_all_overloads`; the root and training flags come from
the exact entry or, failing that, such a base entry. Answers, and which files are
rejected, match torchgen's `SelectiveBuilder`. Odd input torchgen accepts is
accepted with a warning: a string where a list belongs is read as its characters,
a mapping as its keys; an operator key that is not a string (`1:`) matches nothing.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.frozen import field, fields, frozen
from opgen.spec.yaml.load import YamlDocument, YamlMap, load_yaml, parse_yaml

if TYPE_CHECKING:
    from opgen.spec.native import NativeFunction


def strip_operator_overload_name(name: str) -> str:
    """`aten::add.Tensor` -> `aten::add`: everything before the first '.'."""
    return name.split(".", 1)[0]


def op_name_from_native_function(f: NativeFunction) -> str:
    """The name selections use for `f`: `namespace::name.overload`."""
    return f"{f.namespace}::{f.func.name}"


@frozen
class SelectedOperator:
    """One entry of `operators:`; a name without overload may stand for all overloads."""

    name: str  # `ns::name.overload`, or `ns::name` for every overload
    is_root_operator: bool = True  # called by a model itself, not only by other operators
    is_used_for_training: bool = True  # needed when training, not only for inference
    include_all_overloads: bool = True  # a name without overload selects every overload
    debug_info: tuple[str, ...] | None = None  # where the selection came from, as written


_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@frozen
class OperatorSelection:
    """The operators (and kernel dtypes, custom classes, features) a build includes."""

    include_all_operators: bool  # every operator is selected, whatever `operators` lists
    # The `operators:` entries by name (`ns::name.overload`, or `ns::name`).
    operators: Mapping[str, SelectedOperator] = field(default_factory=lambda: _EMPTY, hash=False)
    # Kernel tag to the dtypes whose code paths are kept.
    kernel_metadata: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: _EMPTY, hash=False
    )
    # ExecuTorch's kernel keys per operator, kept as written (lists become tuples).
    et_kernel_metadata: Mapping[object, object] = field(default_factory=lambda: _EMPTY, hash=False)
    custom_classes: frozenset[object] = frozenset()  # TorchScript classes the build keeps
    build_features: frozenset[object] = frozenset()  # named features the build keeps
    # Every kernel dtype and custom class, even though operators are selective.
    include_all_non_op_selectives: bool = False
    debug_info: tuple[str, ...] | None = None  # where the selection came from, as written
    warnings: tuple[Diagnostic, ...] = field(default=(), compare=False)  # odd, accepted input

    @staticmethod
    def everything() -> OperatorSelection:
        """No selective build: every operator (torchgen's nop selector)."""
        return OperatorSelection(include_all_operators=True)

    @staticmethod
    def from_allowlist(names: Iterable[str], *, for_training: bool = False) -> OperatorSelection:
        """Every overload of each name, as root operators, for training or not."""
        operators = {
            name: SelectedOperator(name, is_root_operator=True, is_used_for_training=for_training)
            for name in sorted(set(names))
        }
        return OperatorSelection(
            include_all_operators=False,
            operators=MappingProxyType(operators),
            include_all_non_op_selectives=True,
        )

    @staticmethod
    def from_yaml_path(path: str) -> OperatorSelection:
        return _read_selection(load_yaml(path))

    @staticmethod
    def from_yaml_text(text: str, path: str = "<selection>") -> OperatorSelection:
        return _read_selection(parse_yaml(path, text))

    @staticmethod
    def from_flags(
        op_registration_whitelist: Sequence[str] | None, op_selection_yaml_path: str | None
    ) -> OperatorSelection:
        """The selection `python -m torchgen.gen` makes from its two flags."""
        if op_registration_whitelist is not None and op_selection_yaml_path is not None:
            raise ValueError("an operator allowlist and a selection YAML cannot be given together")
        if op_registration_whitelist is not None:
            return OperatorSelection.from_allowlist(op_registration_whitelist)
        if op_selection_yaml_path is not None:
            return OperatorSelection.from_yaml_path(op_selection_yaml_path)
        return OperatorSelection.everything()

    def _entries(self, name: str) -> tuple[SelectedOperator | None, SelectedOperator | None]:
        """The exact entry for `name`, and its base entry if that covers all overloads."""
        base = self.operators.get(strip_operator_overload_name(name))
        return self.operators.get(name), base if base and base.include_all_overloads else None

    def is_operator_selected(self, name: str) -> bool:
        if self.include_all_operators:
            return True
        exact, base = self._entries(name)
        return exact is not None or base is not None

    def is_native_function_selected(self, f: NativeFunction) -> bool:
        return self.is_operator_selected(op_name_from_native_function(f))

    def is_operator_selected_for_training(self, name: str) -> bool:
        if self.include_all_operators:
            return True
        exact, base = self._entries(name)
        # A base entry adds training use to an overload listed without it.
        return bool(exact and exact.is_used_for_training) or bool(
            base and base.is_used_for_training
        )

    def is_native_function_selected_for_training(self, f: NativeFunction) -> bool:
        return self.is_operator_selected_for_training(op_name_from_native_function(f))

    def is_root_operator(self, name: str) -> bool:
        if self.include_all_operators:
            return True
        exact, base = self._entries(name)
        # Unlike training use, an exact entry's root flag is final.
        if exact is not None:
            return exact.is_root_operator
        return base is not None and base.is_root_operator

    def is_kernel_dtype_selected(self, kernel_tag: str, dtype: str) -> bool:
        if self.include_all_operators or self.include_all_non_op_selectives:
            return True
        return dtype in self.kernel_metadata.get(kernel_tag, ())


# The keys of a selection file and of an operator's settings are the fields' names.
_TOP_LEVEL_KEYS = sorted(f.name for f in fields(OperatorSelection) if f.name != "warnings")
_OPERATOR_KEYS = sorted(f.name for f in fields(SelectedOperator))


class _Reader:
    """Reads a selection document, collecting errors and warnings."""

    def __init__(self) -> None:
        self.errors: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []

    def error(self, where: Location, message: str) -> None:
        self.errors.append(Diagnostic(where, message))

    def flag(self, m: YamlMap, key: str, default: bool) -> bool:
        value = m.get(key, default)
        if isinstance(value, bool):
            return value
        self.error(m.value_location(key), f"'{key}' must be true or false")
        return default

    def debug_info(self, m: YamlMap) -> tuple[str, ...] | None:
        if "debug_info" not in m:
            return None
        value = m["debug_info"]
        if isinstance(value, list):
            return tuple(str(item) for item in value)
        self.error(m.value_location("debug_info"), "'debug_info' must be a list")
        return None

    def mapping(self, m: YamlMap, key: str, what: str) -> YamlMap:
        value = m.get(key, YamlMap())
        if isinstance(value, YamlMap):
            return value
        self.error(m.value_location(key), f"'{key}' must be a mapping {what}")
        return YamlMap()

    def items(self, value: object, where: Location, what: str) -> list[object]:
        """The items of a list; torchgen reads any iterable, so others are warned about."""
        if isinstance(value, list):
            return list(value)
        if isinstance(value, str | bytes | Mapping):
            kind = "string" if isinstance(value, str | bytes) else "mapping"
            parts = "characters" if kind == "string" else "keys"
            message = f"{what} should be a list; this {kind} is read as its {parts}"
            self.warnings.append(Diagnostic(where, message, "warning"))
            return list(value)
        self.error(where, f"{what} must be a list")
        return []

    def operator(self, ops: YamlMap, key: object) -> SelectedOperator | None:
        settings = ops[key]
        if not isinstance(settings, YamlMap):
            message = f"the settings of operator '{key}' must be a mapping ({{}} for defaults)"
            self.error(ops.value_location(key), message)
            return None
        for k in settings:
            if k not in _OPERATOR_KEYS:
                self.error(
                    settings.key_location(k),
                    f"unknown key '{k}' for operator '{key}'; "
                    f"expected one of: {', '.join(_OPERATOR_KEYS)}",
                )
        if "name" in settings and settings["name"] != key:
            self.error(
                settings.value_location("name"),
                f"'name' must repeat the operator's key '{key}'",
            )
        op = SelectedOperator(
            name=str(key),
            is_root_operator=self.flag(settings, "is_root_operator", True),
            is_used_for_training=self.flag(settings, "is_used_for_training", True),
            include_all_overloads=self.flag(settings, "include_all_overloads", True),
            debug_info=self.debug_info(settings),
        )
        if isinstance(key, str):
            return op
        message = f"operator name {key!r} is not a string; it selects nothing"
        self.warnings.append(Diagnostic(ops.key_location(key), message, "warning"))
        return None

    def name_set(self, m: YamlMap, key: str) -> frozenset[object]:
        if key not in m:
            return frozenset()
        where = m.value_location(key)
        names = self.items(m[key], where, f"'{key}'")
        hashable = [n for n in names if isinstance(n, Hashable)]
        if len(hashable) < len(names):
            self.error(where, f"the items of '{key}' must be scalars, not lists or mappings")
        return frozenset(hashable)


def _position(d: Diagnostic) -> tuple[int, int]:
    assert d.location is not None
    return d.location.line, d.location.col or 0


def _frozen(value: object) -> object:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    return value


def _read_selection(doc: YamlDocument) -> OperatorSelection:
    root = doc.root
    if not isinstance(root, YamlMap):
        empty = "empty" if root is None else "not a mapping"
        raise SpecError(
            f"the selection file is {empty}; expected a mapping with keys such as "
            "'operators' or 'include_all_operators'",
            doc.location,
        )
    r = _Reader()
    for key in root:
        if key not in _TOP_LEVEL_KEYS:
            r.error(
                root.key_location(key),
                f"unknown key '{key}' in the selection file; "
                f"expected one of: {', '.join(_TOP_LEVEL_KEYS)}",
            )
    ops = r.mapping(root, "operators", "from operator names to their settings")
    operators: dict[str, SelectedOperator] = {}
    for key in ops:
        op = r.operator(ops, key)
        if op is not None:
            operators[op.name] = op
    kernels = r.mapping(root, "kernel_metadata", "from kernel tags to lists of dtypes")
    kernel_metadata: dict[str, tuple[str, ...]] = {}
    for tag in kernels:
        what = f"the dtypes of kernel tag '{tag}'"
        dtypes = r.items(kernels[tag], kernels.value_location(tag), what)
        kernel_metadata[str(tag)] = tuple(str(d) for d in dtypes)
    et_kernels = r.mapping(root, "et_kernel_metadata", "from operator names to kernel keys")
    selection = OperatorSelection(
        include_all_operators=r.flag(root, "include_all_operators", False),
        operators=MappingProxyType(operators),
        kernel_metadata=MappingProxyType(kernel_metadata),
        et_kernel_metadata=MappingProxyType({k: _frozen(v) for k, v in et_kernels.items()}),
        custom_classes=r.name_set(root, "custom_classes"),
        build_features=r.name_set(root, "build_features"),
        include_all_non_op_selectives=r.flag(root, "include_all_non_op_selectives", False),
        debug_info=r.debug_info(root),
        warnings=tuple(sorted(r.warnings, key=_position)),
    )
    if r.errors:
        raise SpecError.of(sorted(r.errors, key=_position))
    return selection
