"""The values a YAML document is read into, with source locations on demand.

Both YAML readers, `subset` (pure Python, for the block YAML that spec
files are written in) and `full` (PyYAML, for everything else), build
ordinary Python values, except that mappings are `YamlMap`s and sequences
`YamlList`s. These record a *position* for themselves and for each entry and
item: whatever the reader that built them can later turn into a `Location`
cheaply (PyYAML's nodes; for the subset reader, the regex match of a line).
The reader's `Positions` object, one per document, does the turning, and only
when a consumer asks: a spec has about 50,000 keys, values and items, and most
of their locations are never shown, so building them up front would cost more
than reading the file.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from functools import partial
from typing import Generic, Protocol, TypeVar

from opgen.cached import cached
from opgen.diagnostics import Location
from opgen.frozen import frozen


class Positions(Protocol):
    """Turns the positions one reader recorded in one document into Locations.

    Every Location follows PyYAML's marks: a scalar's column points inside its
    quotes, and its length is its width on its line, without the quotes, if it
    ends on the line where it starts (else 1); a mapping or sequence points at
    its first key or `-` (or at `[` / `{`), with length 1.
    """

    @property
    def path(self) -> str: ...

    @property
    def lines(self) -> Sequence[str]:
        """The document's lines, where `opgen.spec.yaml.located` places offsets inside values
        (split once, when first asked for)."""
        ...

    def of_collection(self, at: object) -> Location: ...

    def of_key(self, mapping: YamlMap, key: object) -> Location: ...

    def of_value(self, mapping: YamlMap, key: object) -> Location: ...

    def of_item(self, items: YamlList, index: int) -> Location: ...


K = TypeVar("K")


class _Located(Mapping[K, Location], Generic[K]):
    """The locations of the keys of `keys`, computed by `locate` when asked for."""

    __slots__ = ("_keys", "_locate")

    def __init__(self, keys: Collection[K], locate: Callable[[K], Location]) -> None:
        self._keys = keys
        self._locate = locate

    def __getitem__(self, key: K) -> Location:
        if key not in self._keys:
            raise KeyError(key)
        return self._locate(key)

    def __iter__(self) -> Iterator[K]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class YamlMap(dict[object, object]):
    """A mapping with the location of the mapping and of each key and value.

    The reader that builds it sets `line` (1-based, where the mapping starts:
    read for every spec entry, so it is not computed on demand), `positions`,
    `at` (its own position) and `entry_at` (each key's position record, which
    only `positions` interprets).
    """

    line: int
    positions: Positions
    at: object
    entry_at: dict[object, object]

    @property
    def path(self) -> str:
        return self.positions.path

    @cached
    def key_locations(self) -> Mapping[object, Location]:
        return _Located(self, partial(self.positions.of_key, self))

    @cached
    def value_locations(self) -> Mapping[object, Location]:
        return _Located(self, partial(self.positions.of_value, self))

    @property
    def location(self) -> Location:
        return self.positions.of_collection(self.at)

    def value_location(self, key: object) -> Location:
        if key in self:
            return self.positions.of_value(self, key)
        return self.location

    def key_location(self, key: object) -> Location:
        if key in self:
            return self.positions.of_key(self, key)
        return self.location


class YamlList(list[object]):
    """A sequence with the location of the sequence and of each item.

    The reader sets `positions`, `at` (its own position) and `item_at` (each
    item's position record, by index).
    """

    positions: Positions
    at: object
    item_at: list[object]

    @property
    def location(self) -> Location:
        return self.positions.of_collection(self.at)

    @cached
    def item_locations(self) -> Mapping[int, Location]:  # by index
        return _Located(range(len(self)), partial(self.positions.of_item, self))


@frozen
class YamlDocument:
    path: str
    text: str
    root: object  # None for an empty document
    location: Location  # where the document starts
