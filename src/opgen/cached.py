"""`cached`: attributes of immutable objects, computed on first use.

Like `functools.cached_property`, but without its per-access lock (Python < 3.12
takes a lock on every first access, which dominates when thousands of small
schema objects each compute a few attributes once). It is a non-data
descriptor: after the first access the value sits in the instance `__dict__`
and plain attribute lookup finds it. Works on frozen dataclasses because it
never goes through `__setattr__` (see `opgen.frozen`).
"""

from __future__ import annotations

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
