"""The AOTInductor fallback-op table, read from PyTorch's `torchgen/aoti/fallback_ops.py`.

The table is an input of the C shim, like native_functions.yaml: it lives in
PyTorch's source tree, not in opgen. It is a Python file holding two dict
literals: `inductor_fallback_ops` (the operators of the per-backend shims)
and `aten_shimified_ops` (the dispatcher-calling `c_shim_aten`). Each maps an
operator name `namespace.name.overload` (`default` for no overload) to its
version info:

    "aten.foo.default": {
        "since": "TORCH_VERSION_2_12_0",              # optional: v1 is gated
        "v2": {"new_args": ["bar"], "since": "..."},   # an added argument, gated
    }

Before feature versions (`releases.AOTI_FEATURE_VERSIONS`), a version is only
the list of the arguments it added (`"v2": ["bar"]`) and nothing is gated.

The file is never imported: its two assignments are found with `ast` and their
values read with `ast.literal_eval`, so the file runs no code. It is
`--aoti-fallback-ops FILE` if given; else it is found from `--source-path`:
`<torchgen>/packaged/ATen` (torch's wheel) has it at
`<torchgen>/aoti/fallback_ops.py`, and a PyTorch checkout's `aten/src/ATen`
at `<root>/torchgen/aoti/fallback_ops.py`; else, for a source tree of its own
(an out-of-tree backend's fork of the spec), it is the installed torchgen's,
found without importing it, as upstream always reads its own, but only if that
torchgen is of the run's release: another release's table is a usage error that
says so, never read under rules it was not written for.

Version info is checked where it is used (for operators the spec has), as
torchgen does; a bad entry is a `SpecError` at the entry's line.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Mapping
from pathlib import Path

from opgen.diagnostics import Location, SpecError
from opgen.frozen import frozen
from opgen.releases import NEWEST, Release, parse_release
from opgen.targets.contract import UsageError
from opgen.targets.torch_version import tree_version

TABLES = ("inductor_fallback_ops", "aten_shimified_ops")
_VERSION = re.compile(r"^TORCH_VERSION_\d+_\d+_\d+$")


@frozen
class OpVersions:
    """One operator's entry: argument names added by each version, and version gates."""

    new_args: Mapping[int, tuple[str, ...]]  # version -> args it added; 1 -> ()
    since: Mapping[int, str]  # version -> TORCH_VERSION_X_Y_Z, for gated versions


@frozen
class FallbackEntry:
    info: object  # the literal value, checked by `versions`
    location: Location

    def versions(self, op: str, *, gated: bool = True) -> OpVersions:
        """The entry's versions; `gated`: in the format with `since` gates, else in
        the older one, where a version is the list of the arguments it added."""
        info = self.info
        if not isinstance(info, dict):
            raise SpecError(f"the entry of {op} must be a dict", self.location)
        new_args: dict[int, tuple[str, ...]] = {1: ()}
        since: dict[int, str] = {}
        for key, payload in sorted(info.items(), key=lambda kv: str(kv[0])):
            if key == "since" and gated:
                continue
            version = self._version_number(op, key, gated)
            if version in new_args:
                raise SpecError(f"version {key} of {op} is defined twice", self.location)
            if gated:
                new_args[version] = self._gated_args(op, key, payload)
                gate = payload.get("since")
                if gate is not None:
                    since[version] = self._gate(op, gate)
            else:
                new_args[version] = self._args(f"version {key} of {op}", payload)
        gate = info.get("since") if gated else None
        if gate is not None:
            since[1] = self._gate(op, gate)
        return OpVersions(new_args, since)

    def _gated_args(self, op: str, key: object, payload: object) -> tuple[str, ...]:
        if not isinstance(payload, dict):
            raise SpecError(
                f"version {key} of {op} must be a dict "
                "{'new_args': [...], 'since': 'TORCH_VERSION_X_Y_Z'}",
                self.location,
            )
        return self._args(f"'new_args' of version {key} of {op}", payload.get("new_args", []))

    def _args(self, what: str, args: object) -> tuple[str, ...]:
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise SpecError(f"{what} must be a list of argument names", self.location)
        return tuple(args)

    def _version_number(self, op: str, key: object, gated: bool) -> int:
        text = str(key)
        if not text.startswith("v") or not text[1:].lstrip("+-").isdigit():
            also = ", or 'since'" if gated else ""
            raise SpecError(
                f"version key '{text}' of {op} must be 'v' and a number{also}", self.location
            )
        return int(text[1:])

    def _gate(self, op: str, value: object) -> str:
        if not isinstance(value, str) or not _VERSION.match(value):
            raise SpecError(
                f"'since' of {op} is {value!r}, not of the form TORCH_VERSION_X_Y_Z",
                self.location,
            )
        return value


@frozen
class FallbackTables:
    path: str
    inductor_fallback_ops: Mapping[str, FallbackEntry]
    aten_shimified_ops: Mapping[str, FallbackEntry]


def table_candidates(source_path: str) -> list[Path]:
    """Where the table may be beside `--source-path` (packaged layout first)."""
    aten = Path(os.path.abspath(source_path))  # so that parents are directories, never "/"
    candidates = (
        aten.parent.parent / "aoti" / "fallback_ops.py",
        aten.parent.parent.parent / "torchgen" / "aoti" / "fallback_ops.py",
    )
    return list(dict.fromkeys(candidates))  # the same path, in the packaged layout


def find_fallback_table(source_path: str, release: Release) -> str:
    """The table's file for a run of `release` over `source_path`: the one beside it, else
    the installed torchgen's, if that is of the same release (as upstream reads its own).

    Another release's table would be read under this release's rules and refused as if
    it were malformed, or read as the wrong table: a usage error, which says where the
    table was looked for, what was found, and how to name the right one.
    """
    candidates = table_candidates(source_path)
    for path in candidates:
        if path.is_file():
            return str(path)
    tried = " and ".join(str(p) for p in candidates)
    from opgen.installed_torchgen import package_dir

    installed = package_dir()
    table = None if installed is None else os.path.join(installed, "aoti", "fallback_ops.py")
    if table is None or not os.path.isfile(table):
        raise UsageError(
            "the AOTInductor fallback-op table (torchgen/aoti/fallback_ops.py) was not found: "
            f"not beside --source-path (looked for {tried}), and torchgen is not installed; "
            "name it with --aoti-fallback-ops FILE"
        )
    found = tree_version(table)
    found_release = None if found is None else parse_release(found[0])
    if found is None or found_release is None or _as_generated(found_release) == release:
        return table
    raise UsageError(
        f"the AOTInductor fallback-op table of torch {release} was not found beside "
        f"--source-path (looked for {tried}); the installed torchgen's, {table}, is torch "
        f"{found[0]}'s (from {found[1]}), and a run for torch {release} does not read "
        f"another release's table. Run from the torch {release} checkout or wheel whose "
        "torchgen/ holds aoti/fallback_ops.py, or name torch "
        f"{release}'s table with --aoti-fallback-ops FILE"
    )


def _as_generated(release: Release) -> Release:
    """The release a run of `release` generates as: a newer one than opgen knows
    generates as the newest (`opgen.targets.torch_version`)."""
    return NEWEST if release.key > NEWEST.key else release


def load_fallback_tables(
    source_path: str, table: str | None = None, release: Release = NEWEST
) -> FallbackTables:
    """The table `table` names; else the one `find_fallback_table` finds."""
    if table is not None:
        if not Path(table).is_file():
            raise SpecError("no such file (given as --aoti-fallback-ops)", Location(table, 1))
        return read_fallback_tables(table)
    return read_fallback_tables(find_fallback_table(source_path, release))


def read_fallback_tables(path: str) -> FallbackTables:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        module = ast.parse(text, filename=path)
    except SyntaxError as e:
        raise SpecError(f"cannot parse: {e.msg}", Location(path, e.lineno or 1, e.offset)) from None
    found: dict[str, dict[str, FallbackEntry]] = {}
    for node in module.body:
        target, value = _assignment(node)
        if target in TABLES and value is not None:
            found[target] = _read_table(path, target, value)
    for name in TABLES:
        if name not in found:
            raise SpecError(f"no assignment of a dict literal to '{name}'", Location(path, 1))
    return FallbackTables(path, found[TABLES[0]], found[TABLES[1]])


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ):
        return node.targets[0].id, node.value
    return None, None


def _read_table(path: str, name: str, value: ast.expr) -> dict[str, FallbackEntry]:
    where = Location(path, value.lineno, value.col_offset + 1)
    if not isinstance(value, ast.Dict):
        raise SpecError(f"'{name}' must be assigned a dict literal", where)
    table: dict[str, FallbackEntry] = {}
    for key, item in zip(value.keys, value.values, strict=True):
        at = Location(path, item.lineno, item.col_offset + 1)
        if key is None:
            raise SpecError(f"'{name}' must not use ** unpacking", at)
        at = Location(path, key.lineno, key.col_offset + 1)
        try:
            op, info = ast.literal_eval(key), ast.literal_eval(item)
        except ValueError:
            raise SpecError(f"an entry of '{name}' is not a literal", at) from None
        if not isinstance(op, str):
            raise SpecError(f"the keys of '{name}' must be operator-name strings", at)
        table[op] = FallbackEntry(info, at)  # a repeated key wins, as in Python
    return table
