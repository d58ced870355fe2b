"""The targets opgen knows: its own, and those other packages register.

A target is found by name without importing any other: opgen's own are listed here
as `module:attribute` references to their `Target` objects, and other packages
register theirs in the `opgen.targets` entry-point group, in the same form
(`hello = "opgen_hello:TARGET"` under `[project.entry-points."opgen.targets"]`).
The installed packages' metadata is read only when a command is not one of opgen's
own, or to list every command; an entry point named like one of opgen's commands
is ignored.
"""

from __future__ import annotations

import importlib
from typing import Any

from opgen.targets.contract import Target

ENTRY_POINT_GROUP = "opgen.targets"

# In the order `opgen --help` lists them.
BUILTIN_TARGETS: dict[str, str] = {
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
}


class TargetLoadError(Exception):
    """A registered target that cannot be imported, or is not a target."""


def load_target(reference: str) -> Target[Any]:
    """The target a `module:attribute` reference names."""
    module_name, _, attribute = reference.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except Exception as e:  # another package's code: whatever it raises, no traceback
        raise TargetLoadError(f"{reference}: {e}") from e
    missing = [name for name in _TARGET_MEMBERS if not hasattr(found, name)]
    if missing:
        raise TargetLoadError(f"{reference} is not a target: it has no {', '.join(missing)}")
    target: Target[Any] = found
    return target


_TARGET_MEMBERS = ("name", "help", "description", "add_arguments", "options", "read", "emit")


def plugin_targets(taken: frozenset[str]) -> dict[str, str]:
    """The entry points of other packages' targets, by name, sorted; not the `taken` names."""
    from importlib.metadata import entry_points

    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return {name: found[name] for name in sorted(found) if name not in taken}
