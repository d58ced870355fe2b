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
    """Replace the `__init__` of frozen dataclass `cls` by one that stores into `__dict__`.

    The new `__init__` has the same parameters, defaults and default factories,
    sets the fields in the same order and calls `__post_init__` as the generated
    one does. Apply it above `@dataclass(frozen=True)`; keyword-only fields,
    `InitVar`s and `__slots__` are not supported.
    """
    assert dataclasses.is_dataclass(cls) and "__slots__" not in cls.__dict__, cls
    env: dict[str, object] = {"_MISSING": dataclasses.MISSING}
    params: list[str] = []
    body = ["values = self.__dict__"]
    for f in dataclasses.fields(cls):
        assert f.init and not f.kw_only, f"{cls.__name__}.{f.name}"
        if f.default is not dataclasses.MISSING:
            env[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            env[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            body.append(f"if {f.name} is _MISSING: {f.name} = _factory_{f.name}()")
        else:
            params.append(f.name)
        body.append(f"values[{f.name!r}] = {f.name}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + "".join(f"    {b}\n" for b in body)
    exec(source, env)
    init: Any = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init  # type: ignore[misc]
    return cls
