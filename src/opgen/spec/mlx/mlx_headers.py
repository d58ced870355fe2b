"""The names `mlx::core` declares, read from MLX's installed C++ headers.

Gradient formulas call MLX operations, and a name that MLX does not declare
should be an error when the spec is read, not when the generated code is
compiled. MLX's Python wheel ships its headers (`mlx/include/mlx/*.h`); this
module finds them without importing MLX (`importlib.util.find_spec` of the
namespace package, else a scan of `sys.path`) and collects, by a regex over
the declarations at namespace level (function bodies and class bodies are
skipped):

- function names: `MLX_API array exp(const array& a, StreamOrDevice s = {});`;
- constants and types: `inline constexpr Dtype float32{...}`, `struct Dtype`,
  `using Shape = ...`.

Names in `mlx::core` are collected bare (`exp`), names in a nested namespace
with it (`fast::rms_norm`, `linalg::inv`, `random::normal`, `fft::fft`).
Reading is a pure function of the files: nothing is cached between calls.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Iterator, Sequence

from opgen.diagnostics import SpecError

# The headers whose declarations formulas and bound functions' calls may use: those of
# `mlx/mlx.h` that declare functions of mlx::core.
HEADERS = (
    *("ops.h", "fast.h", "linalg.h", "random.h", "fft.h", "transforms.h", "dtype.h"),
    *("einsum.h", "io.h", "compile.h", "export.h", "memory.h", "stream.h", "device.h"),
    *("utils.h", "version.h"),
)
# Types every formula may name, whatever the installed version declares.
CORE_TYPES = frozenset(
    {"array", "Shape", "Strides", "ShapeElem", "Dtype", "StreamOrDevice", "Stream", "Device"}
)
_ROOT_NAMESPACE = "mlx::core"

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_NAMESPACE_OPEN = re.compile(r"namespace\s+([\w:]+)\s*$")
# (A word before the name starts where a word does: not trying each of its characters.)
_FUNCTION = re.compile(r"(?P<before>(?<![\w:])[\w:]+|[>&*])\s+(?P<name>[A-Za-z_]\w*)\s*\(")
_CONSTANT = re.compile(r"constexpr\s+[\w:]+\s+(?P<name>[A-Za-z_]\w*)\s*[{=]")
_TYPE = re.compile(
    r"(?:struct|class)\s+(?:MLX_API\s+)?(?P<name>[A-Za-z_]\w*)|using\s+(?P<alias>[A-Za-z_]\w*)\s*="
)
# Words before a name and `(` that make it a call or a construct, not a declaration.
_NOT_A_RETURN_TYPE = frozenset(
    {"return", "new", "throw", "else", "case", "delete", "if", "while", "for", "switch"}
)


def find_mlx_include(search_path: Sequence[str] | None = None) -> str | None:
    """MLX's `include` directory (holding `mlx/ops.h`), or None if MLX is not installed."""
    candidates: list[str] = []
    if search_path is None:
        spec = importlib.util.find_spec("mlx")
        if spec is not None and spec.submodule_search_locations is not None:
            candidates.extend(spec.submodule_search_locations)
        search_path = sys.path
    candidates.extend(os.path.join(entry or ".", "mlx") for entry in search_path)
    for package in candidates:
        include = os.path.join(package, "include")
        if os.path.isfile(os.path.join(include, "mlx", "ops.h")):
            return include
    return None


def mlx_names(search_path: Sequence[str] | None = None) -> frozenset[str]:
    """Every name formulas may use from `mlx::core`, from the installed headers.

    `search_path`: the directories to look for the `mlx` package in (default:
    where Python finds it). Raises SpecError if MLX's headers are not there.
    """
    include = find_mlx_include(search_path)
    if include is None:
        raise SpecError(
            "cannot check gradient formulas: MLX's C++ headers (mlx/include/mlx/ops.h) were "
            "not found; install MLX (pip install 'mlx[cpu]' on Linux)"
        )
    names = set(CORE_TYPES)
    for header in HEADERS:
        path = os.path.join(include, "mlx", header)
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                names.update(declared_names(f.read()))
    return frozenset(names)


def declared_names(text: str) -> Iterator[str]:
    """The names a header declares at namespace level, qualified below `mlx::core`."""
    for namespace, code in _namespace_level(_COMMENT.sub(" ", text)):
        if namespace != _ROOT_NAMESPACE and not namespace.startswith(f"{_ROOT_NAMESPACE}::"):
            continue
        prefix = namespace[len(_ROOT_NAMESPACE) + 2 :]
        qualify = f"{prefix}::" if prefix else ""
        for m in _FUNCTION.finditer(code):
            if m.group("before") not in _NOT_A_RETURN_TYPE:
                yield qualify + m.group("name")
        for m in _CONSTANT.finditer(code):
            yield qualify + m.group("name")
        for m in _TYPE.finditer(code):
            yield qualify + (m.group("name") or m.group("alias"))


_BRACE = re.compile(r"[{}]")


def _namespace_level(text: str) -> Iterator[tuple[str, str]]:
    """The code at namespace level, piece by piece, with the namespace it is in.

    A `{` opened by `namespace name` is transparent; any other brace (a body, an
    initializer, a default `{}`) hides what it holds.
    """
    stack: list[str | None] = []  # a namespace's full name, or None for another brace
    start = 0
    for brace in _BRACE.finditer(text):
        i, c = brace.start(), brace.group()
        if _visible(stack):
            yield _current(stack), text[start : i + 1]  # with the brace: `float32{`
        if c == "{":
            m = _NAMESPACE_OPEN.search(text, start, i)
            if m is not None and _visible(stack):
                outer = _current(stack)
                stack.append(f"{outer}::{m.group(1)}" if outer else m.group(1))
            else:
                stack.append(None)
        elif stack:
            stack.pop()
        start = i + 1
    if _visible(stack):
        yield _current(stack), text[start:]


def _visible(stack: list[str | None]) -> bool:
    return all(entry is not None for entry in stack)


def _current(stack: list[str | None]) -> str:
    return stack[-1] or "" if stack else ""
