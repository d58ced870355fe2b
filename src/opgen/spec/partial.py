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
the `func:` lines of their entries alone, without reading any entry; those that
`autogen:` derives come from their families read without the views (`views=False`): a
`_copy` variant's derivation does not need the view it copies.

The other entries become blank lines, so that lines and columns stay those
of the file. An entry is the text from a line starting with `- ` to the next;
one whose name cannot be read from its first line is kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_DUNDER = re.compile(r"__i?([a-z]+)__\Z")
_VIEW_SUFFIXES = ("_copy", "_scatter")


def family(name: str, views: bool = True) -> str:
    """The name shared by every operator that may group with `name` (`add` for `add_.Tensor`);
    without `views`, a view's `_copy` and `_scatter` variants are families of their own."""
    base = name.partition(".")[0]
    dunder = _DUNDER.match(base)
    if dunder is not None:
        return dunder.group(1)
    base = base.removesuffix("_functional").rstrip("_") or base
    for suffix in _VIEW_SUFFIXES if views else ():
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


# The line break before an entry (a line starting with `- `), then the operator's name
# if the entry's first line gives it. (Not `^` with MULTILINE: that scans three times
# slower than a pattern starting with a literal.)
_ENTRY = re.compile(r"\n- (?:func:[ \t]*['\"]?([A-Za-z_]\w*))?")


def only_families(text: str, names: Iterable[str], views: bool = True) -> str:
    """`text` with the entries of other operator families blanked out. Without `views`,
    an operator's family takes in its `_copy` and `_scatter` variants (a view must have
    them) but theirs does not take in the view."""
    wanted = {family(n, views) for n in names}
    if not views:
        wanted |= {f"{base}{suffix}" for base in wanted for suffix in _VIEW_SUFFIXES}
    wanted_base: dict[str, bool] = {}  # by an entry's base name: whether its family is wanted
    pieces: list[str] = []
    done = 0  # `pieces` stand for text[:done]
    kept_from: int | None = 0  # the start of the run of kept text after `done`, if any
    for match in _ENTRY.finditer("\n" + text):  # match.start() is where the entry starts in text
        name = match.group(1)
        if name is None:  # an entry whose first line does not name it is kept
            keep = True
        else:
            known = wanted_base.get(name)
            keep = wanted_base[name] = family(name, views) in wanted if known is None else known
        start = match.start()
        if keep and kept_from is None:
            pieces.append("\n" * text.count("\n", done, start))
            done = kept_from = start
        elif not keep and kept_from is not None:
            pieces.append(text[kept_from:start])
            done, kept_from = start, None
    if kept_from is None:
        pieces.append("\n" * text.count("\n", done))
    else:
        pieces.append(text[kept_from:])
    return "".join(pieces)


# An entry's first line holding its whole schema as a plain scalar (after the line break
# before it), and the start of the line after it, which must start another key or entry
# (or end the entry) for the schema to be whole; and, to find the lines to try it on
# quickly, the operator's name in such a line.
_PLAIN_FUNC = re.compile(
    r"\n- func:[ \t]+(?:(\w+)::)?(([A-Za-z_]\w*(?:\.\w+)?)\([^#\n]*\S)[ \t]*(?:#[^\n]*)?"
    r"(?=\Z|\n(?:- |[ \t]*(?:[A-Za-z_]\w*:|#|\n|\Z)))"
)
_FUNC_LINE_NAME = re.compile(r"\n- func:[ \t]+(?:\w+::)?([A-Za-z_]\w*(?:\.\w+)?)\(")


def written_schemas(text: str, names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(namespace, schema text) of each of `names` (`add.out`) whose entry writes its
    schema plainly on its `func:` line; the others (derived by `autogen:`, or written
    otherwise, or whose value may go on below) are missing."""
    wanted = set(names)
    found: dict[str, tuple[str, str]] = {}
    text = "\n" + text
    for named in _FUNC_LINE_NAME.finditer(text):
        if named.group(1) in wanted:
            match = _PLAIN_FUNC.match(text, named.start())
            if match is not None:
                found[match.group(3)] = (match.group(1) or "aten", match.group(2))
    return found
