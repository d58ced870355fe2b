"""Speed for immutable objects: `cached` attributes and `fast_init` constructors.

`cached` computes an attribute of an immutable object on first use. Like
`functools.cached_property`, but without its per-access lock (Python < 3.12
takes a lock on every first access, which dominates when thousands of small
schema objects each compute a few attributes once). It is a non-data
descriptor: after the first access the value sits in the instance `__dict__`
and plain attribute lookup finds it. Works on frozen dataclasses because it
never goes through `__setattr__`.

`fast_init` gives a frozen dataclass a constructor that stores its fields
straight into the instance `__dict__`, as `cached` does, rather than calling
`object.__setattr__` once per field; loading a spec builds tens of thousands
of frozen objects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class cached(Generic[T]):
    def __init__(self, compute: Callable[[Any], T]) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> T | cached[T]:
        if instance is None:
            return self
        value = self.compute(instance)
        instance.__dict__[self.name] = value
        return value


C = TypeVar("C", bound=type)


def fast_init(cls: C) -> C:
    """Replace the `__init__` of frozen dataclass `cls` by one that sets `__dict__` at once.

    The new `__init__` has the same parameters, defaults and default factories,
    sets the fields in the same order and calls `__post_init__` as the generated
    one does, which sets the fields declared `init=False` (they have no default).
    Apply it above `@dataclass(frozen=True)`; `InitVar`s and `__slots__` are not
    supported.

    The instance gets a new dict holding its fields, in one `object.__setattr__`
    call. Storing field by field into `self.__dict__` would be as cheap to build,
    but that dict shares its keys with the class, and CPython 3.11 then reads
    every attribute of the instance through the slow generic path.
    """
    assert dataclasses.is_dataclass(cls) and "__slots__" not in cls.__dict__, cls
    env: dict[str, object] = {"_MISSING": dataclasses.MISSING, "_setattr": object.__setattr__}
    params: list[str] = []
    keyword_only: list[str] = []  # after the positional ones, as dataclasses orders them
    body: list[str] = []
    values: list[str] = []
    for f in dataclasses.fields(cls):
        if not f.init:  # set by __post_init__
            assert f.default is f.default_factory is dataclasses.MISSING, f.name
            continue
        target = keyword_only if f.kw_only else params
        if f.default is not dataclasses.MISSING:
            env[f"_default_{f.name}"] = f.default
            target.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_factory_{f.name}"] = f.default_factory
            target.append(f"{f.name}=_MISSING")
            body.append(f"if {f.name} is _MISSING: {f.name} = _factory_{f.name}()")
        else:
            target.append(f.name)
        values.append(f"{f.name!r}: {f.name}")
    if keyword_only:
        params += ["*", *keyword_only]
    body.append(f"_setattr(self, '__dict__', {{{', '.join(values)}}})")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + "".join(f"    {b}\n" for b in body)
    exec(source, env)
    init: Any = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init  # type: ignore[misc]
    return cls
