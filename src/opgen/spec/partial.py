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

`family_parts` splits the families a set of operators needs into parts of about
as many entries, whole families each, that processes read and generate for apart
(`opgen backend` and `opgen lazy` with `-j`).

The other entries become blank lines, so that lines and columns stay those
of the file. An entry is the text from a line starting with `- ` to the next;
one whose name cannot be read from its first line is kept.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

_DUNDER = re.compile(r"__i?([a-z]+)__\Z")
_VIEW_SUFFIXES = ("_copy", "_scatter")


def family(name: str, views: bool = True) -> str:
    """The name shared by every operator that may group with `name` (`add` for `add_.Tensor`);
    without `views`, a view's `_copy` and `_scatter` variants are families of their own."""
    base = name.partition(".")[0]
    if base.startswith("__"):
        dunder = _DUNDER.match(base)
        if dunder is not None:
            return dunder.group(1)
    base = base.removesuffix("_functional").rstrip("_") or base
    if views and base.endswith(_VIEW_SUFFIXES):
        return base.rpartition("_")[0]  # each suffix is "_" and a word
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


def family_parts(
    text: str, names: Iterable[str], count: int, min_entries: int = 1
) -> list[tuple[frozenset[str], str]]:
    """`names` split into at most `count` sets of whole families whose entries in `text` are
    about as many, and at least `min_entries` each, with `text` as `only_families` leaves it
    for each set: parts of the spec that can be read, and generated for, apart and in
    parallel. No operator is in two parts, and the split depends on nothing but the input.

    One part if an entry of `text` does not name itself on its first line: every part would
    keep it.
    """
    names = frozenset(names)
    wanted = {family(n) for n in names}
    # Where each entry starts in `text` (_ENTRY matches the line break before it in
    # "\n" + text), and the name on its first line.
    found = list(_ENTRY.finditer("\n" + text))
    entry_names = [m.group(1) for m in found]
    if None in entry_names:
        return [(names, only_families(text, names))]
    families: dict[str, str] = {}  # an entry's base name: its family, "" if not wanted
    for name in set(entry_names):
        base = family(name)
        families[name] = base if base in wanted else ""
    entry_families = [families[name] for name in entry_names]
    sizes = Counter(entry_families)
    count = max(1, min(count, (len(entry_families) - sizes[""]) // max(1, min_entries)))
    loads = [0] * count
    part_of = {"": -1}
    # The largest family first, each to the part with the fewest entries so far.
    for base in sorted(wanted, key=lambda b: (-sizes[b], b)):
        lightest = loads.index(min(loads))
        loads[lightest] += sizes[base] or 1
        part_of[base] = lightest
    # Each part's runs of consecutive entries, as (start, end) offsets in `text`.
    starts = [m.start() for m in found] + [len(text)]
    runs: list[list[tuple[int, int]]] = [[] for _ in range(count)]
    for i, base in enumerate(entry_families):
        if base:
            kept = runs[part_of[base]]
            if kept and kept[-1][1] == starts[i]:
                kept[-1] = (kept[-1][0], starts[i + 1])
            else:
                kept.append((starts[i], starts[i + 1]))
    operators: list[set[str]] = [set() for _ in range(count)]
    for name in names:
        operators[part_of[family(name)]].add(name)
    head = starts[0]  # what comes before the first entry (all of `text` if none)
    parts = []
    for part, kept in enumerate(runs):
        if operators[part]:
            pieces = [text[:head]]
            done = head  # `pieces` stand for text[:done], other entries as empty lines
            for run_start, run_end in kept:
                pieces += ("\n" * text.count("\n", done, run_start), text[run_start:run_end])
                done = run_end
            pieces.append("\n" * text.count("\n", done))
            parts.append((frozenset(operators[part]), "".join(pieces)))
    return parts


# An entry's first line holding its whole schema as a plain scalar (after the line break
# before it), and the start of the line after it, which must start another key or entry
# (or end the entry) for the schema to be whole; and, to find the lines to try it on
# quickly, the operator's name in such a line. (Compiled where used: only ExecuTorch's
# runs need them.)
_PLAIN_FUNC = (
    r"\n- func:[ \t]+(?:(\w+)::)?(([A-Za-z_]\w*(?:\.\w+)?)\([^#\n]*\S)[ \t]*(?:#[^\n]*)?"
    r"(?=\Z|\n(?:- |[ \t]*(?:[A-Za-z_]\w*:|#|\n|\Z)))"
)
_FUNC_LINE_NAME = r"\n- func:[ \t]+(?:\w+::)?([A-Za-z_]\w*(?:\.\w+)?)\("


def written_schemas(text: str, names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(namespace, schema text) of each of `names` (`add.out`) whose entry writes its
    schema plainly on its `func:` line; the others (derived by `autogen:`, or written
    otherwise, or whose value may go on below) are missing."""
    wanted = set(names)
    found: dict[str, tuple[str, str]] = {}
    text = "\n" + text
    plain_func = re.compile(_PLAIN_FUNC)
    for named in re.finditer(_FUNC_LINE_NAME, text):
        if named.group(1) in wanted:
            match = plain_func.match(text, named.start())
            if match is not None:
                found[match.group(3)] = (match.group(1) or "aten", match.group(2))
    return found
