"""Where the installed torchgen package keeps its data, found without importing it.

Upstream's generators read files that ship inside torchgen: the packaged ATen
spec and templates (`packaged/ATen`), the AOTInductor fallback-op table
(`aoti/fallback_ops.py`). opgen reads the same files when the user names no
other, but never imports torch or torchgen: `importlib.util.find_spec` finds a
top-level package's directory without running its code.
"""

from __future__ import annotations

import os
import sys


def package_dir() -> str | None:
    """The directory of the installed torchgen package, if there is one."""
    for entry in sys.path:  # a plain installation, found without importing importlib.util
        candidate = os.path.normpath(os.path.join(entry or ".", "torchgen"))
        if os.path.isfile(os.path.join(candidate, "__init__.py")):
            return candidate
    import importlib.util  # finders of other kinds, such as editable installations use

    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        return None
    return str(next(iter(spec.submodule_search_locations)))


def packaged_aten() -> str | None:
    """The ATen directory (native/, templates/) upstream's generators read by default.

    That is `aten/src/ATen` beside torchgen in a PyTorch checkout, else the
    installed package's `packaged/ATen`; None if there is neither.
    """
    root = package_dir()
    if root is None:
        return None
    checkout = os.path.join(os.path.dirname(root), "aten", "src", "ATen")
    for aten in (checkout, os.path.join(root, "packaged", "ATen")):
        if os.path.isfile(os.path.join(aten, "native", "native_functions.yaml")):
            return aten
    return None
