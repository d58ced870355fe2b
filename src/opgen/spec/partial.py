"""Reading only the entries of a spec that some operators need.

An out-of-tree backend lists a few hundred of the spec's 2,600 entries, and
`opgen backend`/`opgen lazy` run in every build of it, where reading and
validating the whole spec would be most of their time. They read the
entries of the operators their YAML names instead, with every entry that can
share a group with them: the same base name (`add`, `add_`, `add.out`,
`__iand__`/`__and__`, `foo_functional`) or the same name once a view's
`_copy`/`_scatter` suffix is dropped. Grouping, derivation (`autogen`) and
kernels only relate entries within such a set, so the model of the entries
read is the model the whole spec gives for them.

Where only some operators' schemas are needed (an ExecuTorch kernel YAML names
the ATen operators whose schemas it takes), `written_schemas` takes them from
the `func:` lines of their entries alone, without reading any entry.

The other entries become blank lines, so that lines and columns stay those
of the file. An entry is the text from a line starting with `- ` to the next;
one whose name cannot be read from its first line is kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_FUNC_NAME = re.compile(r"func:[ \t]*['\"]?([A-Za-z_]\w*)")
_DUNDER = re.compile(r"__i?([a-z]+)__\Z")
_VIEW_SUFFIXES = ("_copy", "_scatter")


def family(name: str) -> str:
    """The name shared by every operator that may group with `name` (`add` for `add_.Tensor`)."""
    base = name.partition(".")[0]
    dunder = _DUNDER.match(base)
    if dunder is not None:
        return dunder.group(1)
    base = base.removesuffix("_functional").rstrip("_") or base
    for suffix in _VIEW_SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def only_families(text: str, names: Iterable[str]) -> str:
    """`text` with the entries of other operator families blanked out."""
    wanted = {family(n) for n in names}
    chunks = text.split("\n- ")  # each but the first starts an entry, its "- " cut off
    kept = [chunks[0] if not chunks[0].startswith("- ") else _kept(chunks[0][2:], wanted, "- ")]
    kept.extend(_kept(chunk, wanted, "\n- ") for chunk in chunks[1:])
    return "".join(kept)


def _kept(entry: str, wanted: set[str], head: str) -> str:
    """The entry, after `head`, if its family is wanted (or unknown); else its line breaks."""
    match = _FUNC_NAME.match(entry)
    if match is None or family(match.group(1)) in wanted:
        return head + entry
    return "\n" * (entry.count("\n") + head.count("\n"))


# An entry's first line holding its whole schema as a plain scalar, and the line after
# it, which must start another key (or end the entry) for the schema to be whole.
_PLAIN_FUNC = re.compile(
    r"func:[ \t]+(?:(\w+)::)?(([A-Za-z_]\w*(?:\.\w+)?)\([^#\n]*\S)[ \t]*(?:#[^\n]*)?$"
)
_NEXT_KEY = re.compile(r"[ \t]*(?:[A-Za-z_]\w*:|#|$)")


def written_schemas(text: str, names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(namespace, schema text) of each of `names` (`add.out`) whose entry writes its
    schema plainly on its `func:` line; the others (derived by `autogen:`, or written
    otherwise) are missing."""
    wanted = set(names)
    found: dict[str, tuple[str, str]] = {}
    for chunk in text.split("\n- "):
        first, _, rest = chunk.removeprefix("- ").partition("\n")
        match = _PLAIN_FUNC.match(first)
        if match is None or match.group(3) not in wanted:
            continue
        if not _NEXT_KEY.match(rest.partition("\n")[0]):
            continue  # the value may go on below: leave it to the reader
        found[match.group(3)] = (match.group(1) or "aten", match.group(2))
    return found
