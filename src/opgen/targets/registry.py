"""The commands opgen knows: its own, and those other packages register.

A command is found by name without importing any other: opgen's own are listed here,
targets and tools in one table, as `module:attribute` references to their command
objects (`opgen.targets.contract`), and other packages register theirs in the
`opgen.targets` entry-point group, in the same form (`hello = "opgen_hello:TARGET"`
under `[project.entry-points."opgen.targets"]`). The installed packages' metadata is
read only when a command is not one of opgen's own, or to list every command; an entry
point named like one of opgen's commands is ignored.
"""

from __future__ import annotations

import importlib
from typing import Any

from opgen.targets.contract import Target, Tool, is_target

ENTRY_POINT_GROUP = "opgen.targets"

# In the order `opgen --help` lists them: the tools over a spec, the targets, then the
# tools that compare operator sets.
COMMANDS: dict[str, str] = {
    "check": "opgen.tooling.check:TOOL",
    "dump": "opgen.tooling.dump:TOOL",
    "aten": "opgen.targets.aten.command:TARGET",
    "autograd": "opgen.targets.autograd.command:TARGET",
    "annotated-fn-args": "opgen.targets.autograd.annotated_command:TARGET",
    "python": "opgen.targets.python.command:TARGET",
    "pyi": "opgen.targets.pyi.command:TARGET",
    "backend": "opgen.targets.backend.command:TARGET",
    "lazy": "opgen.targets.lazy.command:TARGET",
    "generate-code": "opgen.targets.generate_code.command:TARGET",
    "executorch": "opgen.targets.executorch.command:TARGET",
    "executorch-oplist": "opgen.targets.executorch_oplist.command:TARGET",
    "executorch-op-variants": "opgen.targets.executorch_oplist.variants_command:TARGET",
    "torch-library": "opgen.targets.torch_library.command:TARGET",
    "mlx": "opgen.targets.mlx.command:TARGET",
    "aten-mlx": "opgen.targets.aten_mlx.command:TARGET",
    "diff": "opgen.tooling.diff.command:TOOL",
    "coverage": "opgen.tooling.coverage.command:TOOL",
}


class TargetLoadError(Exception):
    """A registered command that cannot be imported, or is not a command."""


def load_command(reference: str) -> Target[Any] | Tool:
    """The command a `module:attribute` reference names: a target or a tool."""
    module_name, _, attribute = reference.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except Exception as e:  # another package's code: whatever it raises, no traceback
        raise TargetLoadError(f"{reference}: {e}") from e
    is_tool = hasattr(found, "run") and not (hasattr(found, "read") or hasattr(found, "emit"))
    members = _TOOL_MEMBERS if is_tool else _TARGET_MEMBERS
    missing = [name for name in members if not hasattr(found, name)]
    if missing:
        raise TargetLoadError(f"{reference} is not a command: it has no {', '.join(missing)}")
    command: Target[Any] | Tool = found
    return command


def load_target(reference: str) -> Target[Any]:
    """The target a `module:attribute` reference names (a tool is not one)."""
    command = load_command(reference)
    if not is_target(command):
        raise TargetLoadError(f"{reference} is a tool, not a target")
    return command


_COMMAND_MEMBERS = ("name", "help", "description", "add_arguments")
_TARGET_MEMBERS = (*_COMMAND_MEMBERS, "options", "read", "emit")
_TOOL_MEMBERS = (*_COMMAND_MEMBERS, "run")


def plugin_commands(taken: frozenset[str]) -> dict[str, str]:
    """The entry points of other packages' commands, by name, sorted; not the `taken` names."""
    from importlib.metadata import entry_points

    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return {name: found[name] for name in sorted(found) if name not in taken}
