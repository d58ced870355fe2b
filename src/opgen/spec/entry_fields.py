"""Typed access to the keys of one spec entry, with errors at the right place."""

from __future__ import annotations

from typing import TypeVar

from opgen.diagnostics import Location, SpecError
from opgen.spec.syntax import SchemaError
from opgen.spec.yaml.load import YamlList, YamlMap

T = TypeVar("T")


class EntryFields:
    """Typed access to the keys of one entry, with errors at the right place."""

    def __init__(self, entry: YamlMap) -> None:
        self.entry = entry

    def at(self, key: str) -> Location:
        return self.entry.value_location(key)

    def get(self, key: str, kind: type[T], default: T, what: str) -> T:
        if key not in self.entry:
            return default
        value = self.entry[key]
        if value is None and default is None:
            return default
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise SpecError(f"'{key}' must be {what}, not {describe(value)}", self.at(key))
        return value

    def flag(self, key: str, default: bool) -> bool:
        if key not in self.entry:  # most keys are absent from most entries
            return default
        return self.get(key, bool, default, "True or False")

    def optional_str(self, key: str) -> str | None:
        if key not in self.entry:
            return None
        value: str | None = self.get(key, str, None, "a string")
        return value

    def schema_error(self, key: str, error: SchemaError) -> SpecError:
        """Place `error`, raised while parsing the value of `key` (or an item of it)."""
        origin = self.at(key)
        value = self.entry.get(key)
        if isinstance(value, YamlList) and error.item < len(value.item_locations):
            origin = value.item_locations[error.item]
        return error.at(origin)


def describe(value: object) -> str:
    """A value as an error message names it: `the string 'x'`, `a list`."""
    if isinstance(value, bool):
        return f"the boolean {value}"
    if isinstance(value, str):
        return f"the string '{value}'"
    if isinstance(value, int | float):
        return f"the number {value}"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
