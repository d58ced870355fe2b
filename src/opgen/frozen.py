"""`frozen`: frozen dataclasses that are cheap to import, define and construct.

`@frozen` is `@dataclass(frozen=True)` with the same fields, the same
behaviour and its own `field`, `fields`, `replace` and `FrozenInstanceError`:
a generated `__init__` that calls `__post_init__`; `__eq__`, `__hash__` and
`__repr__` over the fields, unless the class defines its own; `__match_args__`;
`FrozenInstanceError` on assignment or deletion. Three things differ:

- **It does not import `dataclasses`.** That module imports `inspect` (and
  with it `ast`, `dis` and `tokenize`), about 9 ms of every opgen process, a
  sixteenth of an `opgen executorch` run. The fields are collected here, from the
  class's annotations. `dataclasses`' own functions (`fields`, `replace`,
  `asdict`, `is_dataclass`) still work on a frozen class: its
  `__dataclass_fields__` is built, through `dataclasses`, when first asked for.
- **Defining a class costs one `exec`, not six.** `dataclasses` on Python 3.11
  compiles every generated method separately (`__init__`, `__repr__`,
  `__eq__`, `__hash__`, `__setattr__`, `__delattr__`), and importing opgen
  defines about 180 frozen classes: that would double its import time, paid by
  every command. Here only `__init__` is compiled; the other methods are
  closures over `operator.attrgetter`. Those hash and compare up to 2.5x slower
  per call than compiled ones, which a run hardly notices: opgen keys its memos
  by identity (`benchmarks/bench_foundations.py` measures both).
- **Constructing an instance is one store, not one per field.** Without
  `slots`, `__init__` gives the instance a new `__dict__` holding all fields at
  once instead of calling `object.__setattr__` per field; loading a spec builds
  tens of thousands of frozen objects. (Storing field by field into
  `self.__dict__` would be as cheap to build, but that dict shares its keys
  with the class, and CPython 3.11 then reads every attribute of the instance
  through its slow generic path.) `opgen.cached` attributes live in the same
  `__dict__`.
"""

from __future__ import annotations

import operator
import reprlib
import sys
from collections.abc import Callable
from typing import Any, ClassVar, Final, TypeVar, get_origin, overload

C = TypeVar("C", bound=type)
T = TypeVar("T")

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - Python 3.10

    def dataclass_transform(**_: object) -> Callable[[T], T]:
        return lambda decorated: decorated


_set = object.__setattr__


class _Missing:
    """The value of a field's `default` or `default_factory` when it has none."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()


class FrozenInstanceError(AttributeError):
    """Assigning or deleting a field of a frozen instance."""


class Field:
    """A field of a frozen class, as `field()` declares it; `name` and `type` (the
    annotation, as written) are set when the class is made."""

    __slots__ = (
        "compare",
        "default",
        "default_factory",
        "hash",
        "init",
        "kw_only",
        "name",
        "repr",
        "type",
    )

    def __init__(
        self,
        default: Any,
        default_factory: Any,
        init: bool,
        repr: bool,
        hash: bool | None,
        compare: bool,
        kw_only: bool,
    ) -> None:
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.kw_only = kw_only

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELD_OPTIONS)
        return f"Field({shown})"


# A field's attributes, in the order its repr shows them.
_FIELD_OPTIONS = (
    *("name", "type", "default", "default_factory"),
    *("init", "repr", "hash", "compare", "kw_only"),
)


def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    init: bool = True,
    repr: bool = True,
    hash: bool | None = None,
    compare: bool = True,
    kw_only: bool = False,
) -> Any:
    """A field with options, as `dataclasses.field` takes them."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, init, repr, hash, compare, kw_only)


def fields(class_or_instance: Any) -> tuple[Field, ...]:
    """The fields of a frozen class or instance, in order."""
    try:
        found: tuple[Field, ...] = class_or_instance.__frozen_fields__
    except AttributeError:
        raise TypeError("must be called with a frozen class or instance") from None
    return found


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of a frozen instance with some fields changed, as `dataclasses.replace`."""
    for f in fields(obj):
        if not f.init:
            if f.name in changes:
                raise ValueError(
                    f"field {f.name} is declared with init=False, "
                    "it cannot be specified with replace()"
                )
        elif f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    made: T = obj.__class__(**changes)
    return made


@overload
def frozen(cls: C, /) -> C: ...


@overload
def frozen(*, eq: bool = True, slots: bool = False) -> Callable[[C], C]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def frozen(cls: C | None = None, /, *, eq: bool = True, slots: bool = False) -> Any:
    """A frozen dataclass; `eq=False` keeps identity equality, `slots=True` adds `__slots__`."""

    def make(cls: C) -> C:
        made: C = _make(cls, eq, slots)
        return made

    return make if cls is None else make(cls)


def _make(cls: Any, eq: bool, slots: bool) -> Any:
    body = cls.__dict__
    own_eq = "__eq__" in body
    own_hash = body.get("__hash__", MISSING)
    explicit_hash = not (own_hash is MISSING or (own_hash is None and own_eq))
    own_repr = "__repr__" in body
    all_fields = _collect_fields(cls)
    if slots:
        cls = _with_slots(cls, all_fields)
    cls.__frozen_fields__ = all_fields
    cls.__dataclass_fields__ = _DataclassFields(cls)
    init, signature = _init(cls, all_fields, slots)
    cls.__init__ = init
    if not body.get("__doc__"):
        cls.__doc__ = f"{cls.__name__}({signature})"
    if "__match_args__" not in body:
        matched = tuple(f.name for f in all_fields if f.init and not f.kw_only)
        setattr(cls, "__match_args__", matched)  # noqa: B010
    _add_frozen_setters(cls, all_fields, slots)
    if not own_repr:
        cls.__repr__ = _repr([f.name for f in all_fields if f.repr])
    if eq:
        if not own_eq:
            cls.__eq__ = _eq([f.name for f in all_fields if f.compare])
        if not explicit_hash:
            hashed = [f.name for f in all_fields if (f.compare if f.hash is None else f.hash)]
            cls.__hash__ = _hash(hashed)
    return cls


def _collect_fields(cls: Any) -> tuple[Field, ...]:
    """The fields of the frozen bases, then the class's own, in the order written (a field
    declared again keeps its place); class attributes of fields become their defaults."""
    collected: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__frozen_fields__", ()):
            collected[f.name] = f
    # Not inspect.get_annotations: importing inspect is what this module avoids.
    own_annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    for name, annotation in own_annotations.items():
        if _is_class_variable(annotation):
            continue
        value = cls.__dict__.get(name, MISSING)
        f = _as_field(value)
        f.name, f.type = name, annotation
        if f.default is not MISSING and type(f.default).__hash__ is None:
            raise ValueError(
                f"mutable default {type(f.default)} for field {name} is not allowed: "
                "use default_factory"
            )
        if f.default is not MISSING:
            setattr(cls, name, f.default)
        elif value is not MISSING:
            delattr(cls, name)
        collected[name] = f
    result = tuple(collected.values())
    seen_default = False
    for f in result:
        if not f.init or f.kw_only:
            continue
        if f.default is not MISSING or f.default_factory is not MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    return result


def _as_field(value: object) -> Field:
    """The field a class attribute declares: a `field()`, a `dataclasses.field()` (as code
    written for `dataclasses` has it), or else its default."""
    if isinstance(value, Field):
        return value
    kind = type(value)
    if kind.__name__ == "Field" and kind.__module__ == "dataclasses":
        theirs: Any = value
        return Field(
            _missing_as_ours(theirs.default),
            _missing_as_ours(theirs.default_factory),
            theirs.init,
            theirs.repr,
            theirs.hash,
            theirs.compare,
            theirs.kw_only is True,
        )
    return Field(value, MISSING, True, True, None, True, False)


def _missing_as_ours(value: object) -> object:
    return MISSING if type(value).__name__ == "_MISSING_TYPE" else value


def _is_class_variable(annotation: object) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is ClassVar or get_origin(annotation) is ClassVar


def _with_slots(cls: Any, all_fields: tuple[Field, ...]) -> Any:
    """`cls` made again with a slot per field its bases do not already have."""
    inherited = {name for base in cls.__mro__[1:] for name in base.__dict__.get("__slots__", ())}
    names = [f.name for f in all_fields]
    body = dict(cls.__dict__)
    body["__slots__"] = tuple(name for name in names if name not in inherited)
    for name in (*names, "__dict__", "__weakref__"):
        body.pop(name, None)  # a default would clash with its slot
    made = type(cls)(cls.__name__, cls.__bases__, body)
    made.__qualname__ = cls.__qualname__
    return made


class _DataclassFields:
    """`__dataclass_fields__`, for `dataclasses`' own functions: made through
    `dataclasses` (imported only then) from the class's fields, on first use."""

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def __get__(self, instance: object, owner: type | None = None) -> dict[str, Any]:
        import dataclasses

        specs = [
            (
                f.name,
                f.type,
                dataclasses.field(
                    default=dataclasses.MISSING if f.default is MISSING else f.default,
                    default_factory=(
                        dataclasses.MISSING if f.default_factory is MISSING else f.default_factory
                    ),
                    init=f.init,
                    repr=f.repr,
                    hash=f.hash,
                    compare=f.compare,
                    kw_only=f.kw_only,
                ),
            )
            for f in fields(self.cls)
        ]
        made_class = dataclasses.make_dataclass(self.cls.__name__, specs)
        made: dict[str, Any] = getattr(made_class, "__dataclass_fields__")  # noqa: B009
        type.__setattr__(self.cls, "__dataclass_fields__", made)
        return made


def _init(cls: type, fields: tuple[Field, ...], slots: bool) -> tuple[Any, str]:
    """The `__init__` of `cls`, compiled, and its parameters as the class docstring shows them."""
    env: dict[str, object] = {"_MISSING": MISSING, "_set": _set}
    # Parameters as (source, as the docstring shows them); keyword-only ones go
    # after the positional ones, as dataclasses orders them.
    params: list[tuple[str, str]] = []
    keyword_only: list[tuple[str, str]] = []
    body: list[str] = []
    values: list[tuple[str, str]] = []  # (field, expression)
    for f in fields:
        if f.default is not MISSING:
            env[f"_default_{f.name}"] = f.default
        elif f.default_factory is not MISSING:
            env[f"_factory_{f.name}"] = f.default_factory
        if not f.init:  # set here from its default, if it has one, else by __post_init__
            if f.default is not MISSING:
                values.append((f.name, f"_default_{f.name}"))
            elif f.default_factory is not MISSING:
                values.append((f.name, f"_factory_{f.name}()"))
            continue
        target = keyword_only if f.kw_only else params
        if f.default is not MISSING:
            target.append((f"{f.name}=_default_{f.name}", f"{f.name}={f.default!r}"))
        elif f.default_factory is not MISSING:
            target.append((f"{f.name}=_MISSING", f"{f.name}=<factory>"))
            body.append(f"if {f.name} is _MISSING: {f.name} = _factory_{f.name}()")
        else:
            target.append((f.name, f.name))
        values.append((f.name, f.name))
    if keyword_only:
        params += [("*", "*"), *keyword_only]
    if slots:
        body += [f"_set(self, {name!r}, {value})" for name, value in values]
    else:
        items = ", ".join(f"{name!r}: {value}" for name, value in values)
        body.append(f"_set(self, '__dict__', {{{items}}})")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    signature = ", ".join([p for p, _ in params])
    source = f"def __init__(self, {signature}):\n" + "".join(f"    {b}\n" for b in body)
    exec(source, env)
    init: Any = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init, ", ".join([shown for _, shown in params])


def _add_frozen_setters(cls: Any, fields: tuple[Field, ...], slots: bool) -> None:
    names = frozenset(f.name for f in fields)

    # As dataclasses does: fields are frozen in subclasses too, other attributes only here.
    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    cls.__setattr__ = __setattr__
    cls.__delattr__ = __delattr__
    if slots:  # pickling and copying restore slots through __setattr__ unless told otherwise
        ordered = [f.name for f in fields]
        get = _getter(ordered)

        def __getstate__(self: object) -> tuple[object, ...]:
            return get(self)

        def __setstate__(self: object, state: tuple[object, ...]) -> None:
            for name, value in zip(ordered, state, strict=True):
                _set(self, name, value)

        cls.__getstate__ = __getstate__
        cls.__setstate__ = __setstate__


def _getter(names: list[str]) -> Callable[[object], tuple[object, ...]]:
    """The named attributes of an object, as a tuple (even for one name, or none)."""
    if len(names) >= 2:
        return operator.attrgetter(*names)
    if names:
        get = operator.attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


def _eq(names: list[str]) -> Callable[[object, object], object]:
    get = _getter(names)

    def __eq__(self: object, other: object) -> object:
        if other.__class__ is self.__class__:
            return get(self) == get(other)
        return NotImplemented

    return __eq__


def _hash(names: list[str]) -> Callable[[object], int]:
    get = _getter(names)
    return lambda self: hash(get(self))


def _repr(names: list[str]) -> Callable[[object], str]:
    @reprlib.recursive_repr()
    def __repr__(self: object) -> str:
        fields = ", ".join([f"{name}={getattr(self, name)!r}" for name in names])
        return f"{self.__class__.__qualname__}({fields})"

    return __repr__
