"""Native AOT stubs (torch 2.15 on): NativeAotStubs.h/.cpp, and the stub call of structured kernels.

PyTorch ships ahead-of-time compiled kernels for a few operators. Each is declared by
a Python file `<ops dir>/<entry>/aot.py` (`--native-aot-ops-dir`; by default
`torch/_native/ops` of the checkout holding `--source-path`; an empty string turns the
feature off). The file is the declaration (module constants and functions), or its
`declarations()` returns a non-empty list of declaration objects. A declaration names
its operator (`ATEN_OP`: `topk`, or `gt.Tensor` for one overload) and dispatch key
(`DISPATCH_KEY`), and says with `UNCONDITIONAL` whether its kernels replace the
operator's rather than offer a faster path. The rest of a declaration (the kernel
module, the precompile grid, the C++ snippets, the architectures) is for PyTorch's
export tool; opgen checks it only as far as torchgen refuses a declaration for it.

The files run as Python when read (their module scope imports no torch), in the
sorted order of the entries; entries without an `aot.py` are skipped, and a
missing directory declares nothing (it is not even listed). Each declaration must
name exactly one structured group: `gt.Tensor` the group whose functional variant is
called so, `topk` the only structured group of that base name.

What is generated, for each declaration, in the order of (dispatch key, operator):
- NativeAotStubs.h (headers part): the function type of the stub, the group's
  structured `impl()` parameters returning bool, and the stub's `DECLARE_DISPATCH`;
- NativeAotStubs.cpp (sources part): its `DEFINE_DISPATCH` and `REGISTER_NO_CPU_DISPATCH`;
- in `Register<Key>.cpp` of the declared key: every structured wrapper of the group
  calls `op.impl(...)` only when the stub (gated by the context's switch) declines,
  and `RegisterCUDA` includes NativeAotStubs.h when CUDA has any declaration.
Each file is written whenever its part is generated, empty of stubs when nothing is
declared. torch 2.15's torchgen cannot order declarations of two dispatch keys: it
fails while rendering either file (so not in a dry run), and so does opgen.
The declarations are read with the run's model (`native_aot_stubs`); the two files are
`native_aot_files`'.
"""

from __future__ import annotations

import os
import re
import types
from collections.abc import Iterable, Mapping, Sequence
from importlib.util import module_from_spec, spec_from_file_location
from typing import cast

from opgen.api import structured
from opgen.cached import cached
from opgen.diagnostics import Location, SpecError
from opgen.frozen import frozen
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import DispatchKey
from opgen.spec.model import Spec

# What a declaration must define: its constants, then its functions with how many
# positional parameters each takes (None: not checked).
_CONSTANTS = ("ATEN_OP", "DISPATCH_KEY", "KERNEL_MODULE")
_FUNCTIONS: Mapping[str, int | None] = {
    "kernel_precompile_grid": 0,
    "covered_axes": None,
    "cpp_dispatch": 1,
    "cpp_launch": 2,
}
# Functions a declaration may define (or set to None).
_OPTIONAL_FUNCTIONS: Mapping[str, int] = {
    "cpp_dispatch_prelude": 0,
    "cpp_helpers": 0,
    "cpp_covers": 0,
}
# An `ARCHS` entry: `sm_<major><minor>` with an optional `a`, the major from 3 to 12.
_ARCH = re.compile(r"sm_([1-9][0-9]{1,2})a?")
_MAJORS = range(3, 13)
_UNSET = object()  # an attribute the declaration does not set


@frozen
class NativeAotManifest:
    """What opgen reads of one declaration (torchgen's name for it)."""

    op: str  # `topk`, or overload-qualified `gt.Tensor`
    dispatch_key: DispatchKey
    unconditional: bool  # its kernels are the implementation: only a private mask skips them
    location: Location  # its aot.py

    @property
    def decl_id(self) -> str:
        """The operator as a C identifier (`gt_Tensor`): it names the stub and its type."""
        return self.op.replace(".", "_")

    @property
    def stub_name(self) -> str:
        return f"{self.decl_id}_aot_stub"

    @property
    def fn_type_name(self) -> str:
        return f"{self.decl_id}_aot_fn"

    @property
    def qualified(self) -> bool:
        return "." in self.op

    def matches(self, g: NativeFunctionsGroup) -> bool:
        name = g.functional.func.name
        return self.op == (str(name) if self.qualified else name.name.base)


@frozen(eq=False)
class NativeAotStubs:
    """A run's declarations, each with the structured group whose stub it declares."""

    stubs: tuple[tuple[NativeAotManifest, NativeFunctionsGroup], ...] = ()

    @cached
    def by_key(self) -> Mapping[DispatchKey, Mapping[str, NativeAotManifest]]:
        """Each dispatch key's declarations by operator."""
        by_key: dict[DispatchKey, dict[str, NativeAotManifest]] = {}
        for m, _ in self.stubs:
            by_key.setdefault(m.dispatch_key, {})[m.op] = m
        return by_key

    def declares(self, key: DispatchKey) -> bool:
        return key in self.by_key

    def consulted(self, key: DispatchKey, g: NativeFunctionsGroup) -> NativeAotManifest | None:
        """The declaration whose stub `g`'s wrappers for `key` call: the one naming the
        functional overload, else the one naming the base name."""
        by_op = self.by_key.get(key)
        if by_op is None:
            return None
        name = g.functional.func.name
        return by_op.get(str(name)) or by_op.get(name.name.base)

    def in_file_order(self) -> list[tuple[NativeAotManifest, NativeFunctionsGroup]]:
        """The stubs sorted by operator, as the files list them (all of one dispatch key)."""
        if len(self.by_key) > 1:
            keys = ", ".join(sorted(str(k) for k in self.by_key))
            raise SpecError(
                f"native AOT declarations for more than one dispatch key ({keys}): torch "
                "2.15's torchgen cannot order them in NativeAotStubs.h and fails; declare "
                "one dispatch key",
                self.stubs[-1][0].location,
            )
        return sorted(self.stubs, key=lambda stub: stub[0].op)


# -- reading the declarations ---------------------------------------------------------


def native_aot_stubs(ops_dir: str, spec: Spec) -> NativeAotStubs:
    """The stubs `ops_dir` declares for `spec` (`AtenOptions.native_aot_dir`, of a run for
    torch 2.15 on): none when the directory is not given or does not exist."""
    if not ops_dir or not os.path.isdir(ops_dir):
        return NativeAotStubs()
    return resolve(load_manifests(ops_dir), spec)


def load_manifests(ops_dir: str) -> tuple[NativeAotManifest, ...]:
    """Every declaration under `ops_dir`, in the order of its entries; raises SpecError."""
    seen: set[tuple[str, str]] = set()
    found: dict[tuple[DispatchKey, str], NativeAotManifest] = {}
    for entry in sorted(os.listdir(ops_dir)):
        path = os.path.join(ops_dir, entry, "aot.py")
        if not os.path.exists(path):
            continue
        for declaration in _declarations(path, f"{entry}_aot"):
            m = declaration.manifest()
            raw = (declaration.text("DISPATCH_KEY"), m.op)
            if raw in seen:
                raise SpecError(
                    f"{m.op} is declared twice for {raw[0]} (each operator and key once)",
                    declaration.location("ATEN_OP"),
                )
            seen.add(raw)
            found[(m.dispatch_key, m.op)] = m
    return tuple(found.values())


def resolve(manifests: Sequence[NativeAotManifest], spec: Spec) -> NativeAotStubs:
    """Each declaration with the one structured group it names; raises SpecError."""
    by_base: dict[str, list[NativeFunctionsGroup]] = {}
    for g in spec.groups:
        if g.structured:
            by_base.setdefault(g.functional.func.name.name.base, []).append(g)
    stubs = []
    for m in manifests:
        candidates = by_base.get(m.op.split(".")[0], [])
        matching = [g for g in candidates if m.matches(g)]
        if len(matching) != 1:
            raise SpecError(_unresolved(m, candidates), m.location)
        stubs.append((m, matching[0]))
    return NativeAotStubs(tuple(stubs))


def _unresolved(m: NativeAotManifest, candidates: list[NativeFunctionsGroup]) -> str:
    names = [str(g.functional.func.name) for g in candidates]
    where = f"the native AOT declaration of {m.op} for {m.dispatch_key}"
    if m.qualified:
        return (
            f"{where} names no structured group: the structured overloads of "
            f"'{m.op.split('.')[0]}' are {', '.join(names) or 'none'}"
        )
    if not names:
        return (
            f"{where} names no structured operator: its stub is called between meta() "
            "and impl(), so only a structured operator can have one"
        )
    return (
        f"{where} is ambiguous: '{m.op}' is the base name of the structured groups "
        f"{', '.join(names)}; name the overload in ATEN_OP (such as '{names[0]}')"
    )


def _declarations(path: str, module_name: str) -> list[_Declaration]:
    """The declarations of one aot.py, each checked as torchgen checks it."""
    module = _load(path, module_name)
    lines = _top_level_lines(path)
    family = getattr(module, "declarations", None)
    if family is None:
        declaration = _Declaration(module, path, "", lines)
        declaration.check()
        return [declaration]
    where = Location(path, lines.get("declarations", 1))
    listed = _called(family, "declarations()", where, path)
    if not isinstance(listed, list) or not listed:
        raise SpecError("declarations() must return a non-empty list of declarations", where)
    found = []
    for i, d in enumerate(listed):
        label = f"declarations()[{i}] ({getattr(d, 'ATEN_OP', '?')}): "
        declaration = _Declaration(d, path, label, {"": where.line})
        declaration.check()
        found.append(declaration)
    return found


def _load(path: str, module_name: str) -> types.ModuleType:
    """Runs aot.py as a module of its own (never entered in `sys.modules`)."""
    loaded = spec_from_file_location(module_name, path)
    if loaded is None or loaded.loader is None:
        raise SpecError("cannot be loaded as a Python module", Location(path, 1))
    module = module_from_spec(loaded)
    try:
        loaded.loader.exec_module(module)
    except SyntaxError as e:
        location = Location(path, e.lineno or 1, e.offset)
        raise SpecError(f"invalid Python: {e.msg}", location) from None
    except Exception as e:  # the file's own code failed: report where
        raise SpecError(f"loading it raised {_raised(e)}", _raised_at(e, path)) from None
    return module


def _called(function: object, what: str, where: Location, path: str) -> object:
    if not callable(function):
        raise SpecError(f"{what.removesuffix('()')} must be a function", where)
    try:
        return function()
    except Exception as e:  # the declaration's own code failed: report where
        raise SpecError(f"{what} raised {_raised(e)}", _raised_at(e, path, where)) from None


def _raised(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _raised_at(e: BaseException, path: str, default: Location | None = None) -> Location:
    """The line of `path` deepest in the traceback of `e`."""
    found = default or Location(path, 1)
    frame = e.__traceback__
    real = os.path.realpath(path)
    while frame is not None:
        if os.path.realpath(frame.tb_frame.f_code.co_filename) == real:
            found = Location(path, frame.tb_lineno)
        frame = frame.tb_next
    return found


def _top_level_lines(path: str) -> dict[str, int]:
    """The line of each top-level name aot.py defines, to point errors at it."""
    import ast  # only where manifests are read: a run without them does not import it

    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return {}
    lines: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            lines.setdefault(node.name, node.lineno)
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                lines.setdefault(target.id, node.lineno)
    return lines


@frozen(eq=False)
class _Declaration:
    """One declaration being read: a module, or an object `declarations()` returned."""

    value: object
    path: str
    label: str  # "" for a module, else which element of declarations() it is
    lines: Mapping[str, int]  # names to point at ("" for the whole declaration)

    def attribute(self, name: str) -> object:
        return getattr(self.value, name, None)

    def location(self, name: str) -> Location:
        attribute = self.attribute(name)
        code = getattr(attribute, "__code__", None)
        if isinstance(code, types.CodeType) and _same_file(code.co_filename, self.path):
            return Location(self.path, code.co_firstlineno)
        return Location(self.path, self.lines.get(name, self.lines.get("", 1)))

    def error(self, name: str, message: str) -> SpecError:
        return SpecError(self.label + message, self.location(name))

    def text(self, name: str) -> str:
        value = self.attribute(name)
        assert isinstance(value, str), "checked by check()"
        return value

    def check(self) -> None:
        """What torchgen refuses a declaration for, whether opgen uses it or not."""
        for name in _CONSTANTS:
            if not isinstance(self.attribute(name), str):
                raise self.error(name, f"{name} must be set to a string")
        for name, arity in _FUNCTIONS.items():
            if not callable(self.attribute(name)):
                raise self.error(name, f"{name}() must be defined")
            if arity is not None:
                self._check_arity(name, arity)
        for name, arity in _OPTIONAL_FUNCTIONS.items():
            if self.attribute(name) is not None:
                self._check_arity(name, arity)
        self._check_archs()
        self._check_grid()

    def _check_arity(self, name: str, arity: int) -> None:
        import inspect  # as ast above

        function = getattr(self.value, name)
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            raise self.error(name, f"{name} must be a function or None") from None
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        count = sum(1 for p in parameters if p.kind in positional)
        if count != arity:
            per = "precompile point" if arity else "operator"
            raise self.error(
                name,
                f"{name}() must take {arity} positional parameter(s), not {count} "
                f"(it renders once per {per})",
            )

    def _check_archs(self) -> None:
        declared = getattr(self.value, "ARCHS", _UNSET)
        if declared is _UNSET:
            return  # the default: every architecture the export tool knows
        try:
            archs = tuple(cast("Iterable[object]", declared))
        except TypeError:
            archs = ()
        if not archs or not all(isinstance(a, str) and _is_arch(a) for a in archs):
            raise self.error(
                "ARCHS",
                "ARCHS must be a non-empty sequence of architectures such as "
                f"('sm_90a', 'sm_100'), sm_<major><minor> with an optional 'a' and a major "
                f"from {_MAJORS.start} to {_MAJORS.stop - 1}; got {declared!r}",
            )

    def _check_grid(self) -> None:
        where = self.location("kernel_precompile_grid")
        grid = _called(
            self.attribute("kernel_precompile_grid"),
            "kernel_precompile_grid()",
            where,
            self.path,
        )
        if not isinstance(grid, list) or not grid or not all(isinstance(p, dict) for p in grid):
            raise self.error(
                "kernel_precompile_grid",
                "kernel_precompile_grid() must return a non-empty list of dicts",
            )

    def manifest(self) -> NativeAotManifest:
        key_name = self.text("DISPATCH_KEY")
        key = DispatchKey.maybe_parse(key_name)
        if key is None:
            raise self.error("DISPATCH_KEY", f"DISPATCH_KEY: unknown dispatch key '{key_name}'")
        unconditional = getattr(self.value, "UNCONDITIONAL", False)
        if not isinstance(unconditional, bool):
            raise self.error(
                "UNCONDITIONAL", f"UNCONDITIONAL must be True or False, not {unconditional!r}"
            )
        return NativeAotManifest(self.text("ATEN_OP"), key, unconditional, self.location("ATEN_OP"))


def _is_arch(text: str) -> bool:
    match = _ARCH.fullmatch(text)
    return match is not None and int(match[1]) // 10 in _MAJORS


def _same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


# -- the C++ ------------------------------------------------------------------------


def stub_declaration(m: NativeAotManifest, g: NativeFunctionsGroup) -> str:
    """NativeAotStubs.h: the stub's function type (`impl()`'s parameters) and declaration."""
    parameters = ", ".join(b.decl() for b in structured.impl_arguments(g))
    return (
        f"using {m.fn_type_name} = bool (*)({parameters});\n"
        f"DECLARE_DISPATCH({m.fn_type_name}, {m.stub_name})\n"
    )


def stub_definition(m: NativeAotManifest) -> str:
    """NativeAotStubs.cpp: the stub, with no CPU kernel."""
    return f"DEFINE_DISPATCH({m.stub_name});\nREGISTER_NO_CPU_DISPATCH({m.stub_name})\n"


# Emitted C++ as torchgen writes it (byte-identical output). What the call does.
_CALL_COMMENT = (
    "// native-AOT: the last conjunct is the LAUNCH, not a query -- it runs the\n"
    "// AOT kernel into the meta()-allocated outputs and returns true if it\n"
    "// handled the call, false if it declined this shape. && short-circuits, so\n"
)
# Emitted C++ as torchgen writes it (byte-identical output). When op.impl runs.
_GATED_CASES = (
    "// the stub is never called when AOT is switched off or the device is\n"
    "// unsupported. op.impl below is the ordinary aten kernel, and it runs in\n"
    "// exactly those three cases: switched off, unsupported device, or declined.\n"
)
# Emitted C++ as torchgen writes it (byte-identical output). The same, for UNCONDITIONAL.
_UNCONDITIONAL_CASES = (
    "// the stub is never called when the device is unsupported. op.impl\n"
    "// below is the ordinary aten kernel.\n"
    "// declared UNCONDITIONAL: these kernels are the implementation, so\n"
    "// torch._native.set_aot_enabled(False) does NOT mask them -- only the\n"
    "// private reference-computation hatch does. op.impl runs when that hatch\n"
    "// is set, when the device is unsupported, or when the kernels decline\n"
    "// this shape.\n"
)


def stub_call(m: NativeAotManifest, impl_arguments: str) -> str:
    """The wrapper's `op.impl(...)`, run only when the stub is off or declines the call.

    The context's switch comes first: `allowNativeAot()` (the user's off switch), or
    for an UNCONDITIONAL declaration `!maskUnconditionalNativeAot()`, which the user's
    switch does not reach.
    """
    device = f"c10::DeviceType::{m.dispatch_key}"
    stub = f"at::native::{m.stub_name}"
    if m.unconditional:
        cases, gate = _UNCONDITIONAL_CASES, "!at::globalContext().maskUnconditionalNativeAot()"
    else:
        cases, gate = _GATED_CASES, "at::globalContext().allowNativeAot()"
    return (
        f"{_CALL_COMMENT}{cases}if (!({gate} && {stub}.is_device_supported({device}) && "
        f"{stub}({device}, {impl_arguments}))) {{ op.impl({impl_arguments}); }}"
    )
