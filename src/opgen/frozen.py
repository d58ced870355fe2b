"""`frozen`: frozen dataclasses that are cheap to define and to construct.

`@frozen` is `@dataclass(frozen=True)` with the same fields, `dataclasses`
introspection (`fields`, `replace`, `is_dataclass`, `__match_args__`) and
behaviour: a generated `__init__` that calls `__post_init__`; `__eq__`,
`__hash__` and `__repr__` over the fields, unless the class defines its own;
`FrozenInstanceError` on assignment or deletion. Two things differ:

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

`dataclasses` itself is asked only to collect the fields (and to add
`__slots__`), so `__dataclass_params__` does not record `frozen` or `eq`;
nothing in opgen reads it.
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
import sys
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError
from typing import Any, TypeVar, overload

C = TypeVar("C", bound=type)
T = TypeVar("T")

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - Python 3.10

    def dataclass_transform(**_: object) -> Callable[[T], T]:
        return lambda decorated: decorated


_set = object.__setattr__


@overload
def frozen(cls: C, /) -> C: ...


@overload
def frozen(*, eq: bool = True, slots: bool = False) -> Callable[[C], C]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, Field))
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
    undocumented = not body.get("__doc__")
    if undocumented:
        # A placeholder: `dataclasses` would otherwise render the signature of
        # the not yet generated `__init__` with `inspect`, slowly and wrongly.
        cls.__doc__ = cls.__name__
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots)
    fields = dataclasses.fields(cls)
    init, signature = _init(cls, fields, slots)
    cls.__init__ = init
    if undocumented:
        cls.__doc__ = f"{cls.__name__}({signature})"
    _add_frozen_setters(cls, fields, slots)
    if not own_repr:
        cls.__repr__ = _repr([f.name for f in fields if f.repr])
    if eq:
        if not own_eq:
            cls.__eq__ = _eq([f.name for f in fields if f.compare])
        if not explicit_hash:
            hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
            cls.__hash__ = _hash(hashed)
    return cls


def _init(cls: type, fields: tuple[Field[Any], ...], slots: bool) -> tuple[Any, str]:
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


def _add_frozen_setters(cls: Any, fields: tuple[Field[Any], ...], slots: bool) -> None:
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
