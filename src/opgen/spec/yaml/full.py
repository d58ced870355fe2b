"""Any YAML document, through PyYAML: the reader for what `subset` does not read.

PyYAML's C parser composes the node graph; `_Builder` turns it into ordinary
Python values, except that mappings become `YamlMap` and sequences `YamlList`,
whose positions are PyYAML's nodes. Duplicate keys, which PyYAML silently lets
through, are errors here, as are unhashable keys and merge keys (`<<`) that do
not name mappings; scalars that cannot be constructed are collected as errors.
Syntax errors are told in plain words by `opgen.spec.yaml.syntax_errors`,
imported only when there is one.

`opgen.spec.yaml.load` imports this module only for documents outside the subset
that `subset` reads, so that most runs never import PyYAML (~15 ms).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterator

import yaml
from yaml.constructor import SafeConstructor

from opgen.cached import cached
from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.spec.yaml.values import YamlDocument, YamlList, YamlMap

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

_STR_TAG = "tag:yaml.org,2002:str"
_ScalarNode = yaml.ScalarNode
_MappingNode = yaml.MappingNode
_MERGE_TAG = "tag:yaml.org,2002:merge"
_QUOTED_STYLES = ("'", '"')


class _Loader(_SafeLoader):
    """The safe loader, with less Python work per node.

    For every node (a spec has ~28,000) the composer calls three Python-level
    resolver hooks: `descend_resolver(parent, index)`, `resolve(kind, value,
    implicit)` and `ascend_resolver()`. Without path resolvers (PyYAML's safe
    loader has none) the two path hooks do nothing, so C callables that do
    nothing stand in for them; and the tag depends only on the arguments, so a
    memo, owned by this loader and dropped with it, answers the repeats (keys,
    kernel names, booleans) without a Python call.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        if not self.yaml_path_resolvers:
            hooks = self.__dict__
            hooks["resolve"] = functools.lru_cache(maxsize=None)(self.resolve)
            hooks["descend_resolver"] = operator.is_  # any C callable of two arguments
            hooks["ascend_resolver"] = tuple  # any C callable of none


class NodePositions:
    """Positions are PyYAML nodes; an entry's is the pair (key node, value node)."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text

    @cached
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def of_collection(self, at: object) -> Location:
        assert isinstance(at, yaml.Node)
        return _location(self.path, at)

    def of_key(self, mapping: YamlMap, key: object) -> Location:
        return _location(self.path, _entry(mapping, key)[0])

    def of_value(self, mapping: YamlMap, key: object) -> Location:
        return _location(self.path, _entry(mapping, key)[1])

    def of_item(self, items: YamlList, index: int) -> Location:
        node = items.item_at[index]
        assert isinstance(node, yaml.Node)
        return _location(self.path, node)


def _entry(mapping: YamlMap, key: object) -> tuple[yaml.Node, yaml.Node]:
    nodes = mapping.entry_at[key]
    assert isinstance(nodes, tuple)
    return nodes


def _location(path: str, node: yaml.Node) -> Location:
    mark = node.start_mark
    col = mark.column + 1
    if isinstance(node, yaml.ScalarNode) and node.style in _QUOTED_STYLES:
        col += 1  # point inside the quotes, at the text itself
    length = 1
    if isinstance(node, yaml.ScalarNode) and node.end_mark.line == mark.line:
        quotes = 2 if node.style in _QUOTED_STYLES else 0
        length = max(1, node.end_mark.column - mark.column - quotes)
    return Location(path, mark.line + 1, col, length)


class _Builder:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.positions = NodePositions(path, text)
        self.errors: list[Diagnostic] = []
        self._scalars = SafeConstructor()

    def build(self, node: yaml.Node) -> object:
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _STR_TAG:
                return node.value
            try:
                return self._scalars.construct_object(node, deep=True)
            except yaml.YAMLError as e:
                self.errors.append(Diagnostic(_location(self.path, node), _problem(e)))
                return node.value
            except ValueError as e:  # e.g. a date that does not exist: 2001-13-45
                kind = node.tag.rpartition(":")[2]
                message = f"'{node.value}' is not a valid {kind}: {e}"
                self.errors.append(Diagnostic(_location(self.path, node), message))
                return node.value
        if isinstance(node, yaml.SequenceNode):
            items = YamlList(
                self._build_map(item, item=True) if type(item) is _MappingNode else self.build(item)
                for item in node.value
            )
            items.positions = self.positions
            items.at = node
            items.item_at = node.value
            return items
        assert isinstance(node, yaml.MappingNode), node
        return self._build_map(node)

    def _build_map(self, node: yaml.MappingNode, item: bool = False) -> YamlMap:
        """The mapping; `item`: it is an item of a list (whose next item may have lost its
        '- ')."""
        mapping = YamlMap()
        mapping.line = node.start_mark.line + 1
        mapping.positions = self.positions
        mapping.at = node
        entry_at: dict[object, object] = {}
        mapping.entry_at = entry_at
        merged: list[YamlMap] = []
        for key_node, value_node in node.value:
            key_tag = key_node.tag
            if key_tag == _STR_TAG:
                key = key_node.value
            elif key_tag == _MERGE_TAG:
                merged.extend(self._merge_sources(value_node))
                continue
            else:
                key = self.build(key_node)
            try:
                duplicate = key in mapping
            except TypeError:  # an unhashable key, e.g. a list
                where = _location(self.path, key_node)
                self.errors.append(Diagnostic(where, "a mapping key must be a scalar"))
                continue
            if duplicate:
                first = mapping.key_location(key).line
                # The first of several keys again: most often a list item without its '- '.
                again = item and len(mapping) > 1 and next(iter(mapping)) == key
                hint = "; does a new item start here, without its '- '?" if again else ""
                self.errors.append(
                    Diagnostic(
                        _location(self.path, key_node),
                        f"duplicate key '{key}' (first given on line {first}){hint}",
                    )
                )
                continue
            # Most values are plain strings: skip the call for them.
            if value_node.tag == _STR_TAG and isinstance(value_node, _ScalarNode):
                mapping[key] = value_node.value
            elif type(value_node) is _MappingNode:
                mapping[key] = self._build_map(value_node)
            else:
                mapping[key] = self.build(value_node)
            entry_at[key] = (key_node, value_node)
        for source in merged:  # explicit keys win over merged ones
            for key, value in source.items():
                if key not in mapping:
                    mapping[key] = value
                    entry_at[key] = source.entry_at[key]
        return mapping

    def _merge_sources(self, node: yaml.Node) -> Iterator[YamlMap]:
        nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
        for n in nodes:
            value = self.build(n)
            if isinstance(value, YamlMap):
                yield value
            else:
                self.errors.append(
                    Diagnostic(_location(self.path, n), "a merge key '<<' needs a mapping")
                )


def _problem(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.MarkedYAMLError):
        parts = [error.context, error.problem]
        return "; ".join(p for p in parts if p) or "invalid YAML"
    return str(error)


def read_full(path: str, text: str) -> YamlDocument:
    """Compose and build one YAML document with PyYAML; errors are located SpecErrors."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as e:
        from opgen.spec.yaml.syntax_errors import syntax_error

        raise syntax_error(path, text, e) from None
    except yaml.reader.ReaderError as e:
        from opgen.spec.yaml.syntax_errors import unreadable_character

        raise unreadable_character(path, text, e) from None
    except yaml.YAMLError as e:
        raise SpecError(f"invalid YAML: {e}", Location(path, 1)) from None
    if node is None:
        return YamlDocument(path, text, None, Location(path, 1))
    builder = _Builder(path, text)
    root = builder.build(node)
    if builder.errors:
        raise SpecError.of(builder.errors)
    return YamlDocument(path, text, root, _location(path, node))
