"""`tags.yaml`: the tags operators may carry, each with a description.

- tag: pointwise
  desc: |
    Computes each output element from the input elements at the same index.
"""

from __future__ import annotations

from collections.abc import Mapping

from opgen.diagnostics import Diagnostic, Location, SpecError, did_you_mean
from opgen.spec.yaml.load import YamlDocument, YamlList, YamlMap


def read_tags(doc: YamlDocument) -> Mapping[str, str]:
    """Tag name to description, in file order."""
    if doc.root is None:
        raise SpecError(
            "the tags file is empty; expected a list of '- tag: NAME' entries", doc.location
        )
    if not isinstance(doc.root, YamlList):
        raise SpecError("the tags file must be a list of '- tag: NAME' entries", doc.location)
    tags: dict[str, str] = {}
    first_line: dict[str, int] = {}
    errors: list[Diagnostic] = []
    for i, entry in enumerate(doc.root):
        try:
            name, desc = _read_tag(entry, doc.root.item_locations[i])
        except SpecError as e:
            errors.extend(e.diagnostics)
            continue
        assert isinstance(entry, YamlMap)
        if name in tags:
            errors.append(
                Diagnostic(
                    entry.value_location("tag"),
                    f"tag '{name}' is already defined on line {first_line[name]}",
                )
            )
            continue
        tags[name] = desc
        first_line[name] = entry.location.line
    if errors:
        raise SpecError.of(errors)
    return tags


def _read_tag(entry: object, where: Location) -> tuple[str, str]:
    if not isinstance(entry, YamlMap):
        raise SpecError("a tag entry must be a mapping with 'tag' and 'desc'", where)
    for key in entry:
        if key not in ("tag", "desc"):
            hint = did_you_mean(str(key), ("tag", "desc"), listed_up_to=2)
            raise SpecError(f"unknown key '{key}' in tag entry{hint}", entry.key_location(key))
    name = entry.get("tag")
    if not isinstance(name, str) or not name:
        raise SpecError("a tag entry needs 'tag: NAME'", entry.value_location("tag"))
    desc = entry.get("desc", "")
    if not isinstance(desc, str) or not desc.strip():
        raise SpecError(f"tag '{name}' needs a non-empty 'desc'", entry.value_location("desc"))
    return name, desc
