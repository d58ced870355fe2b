"""The Python half of a library: the package's `__init__.py` and `__init__.pyi`.

Importing the package is all a user does. The package loads the compiled
library that sits beside it (`_C` with the interpreter's extension suffix) or,
for a library without C++, defines the schemas itself; then it binds one typed
function per operator overload (`rms_norm`, `scale_out` for `scale.out`) to
the resolved `torch.ops` overload, and registers the spec's Python kernels,
fake kernels and (for libraries without C++) gradient formulas with
`torch.library`.
"""

from __future__ import annotations

from opgen.spec.library import PythonRef
from opgen.spec.native import NativeFunction
from opgen.targets.torch_library import backend_select
from opgen.targets.torch_library.autograd import python_autograd
from opgen.targets.torch_library.library import Library, python_name
from opgen.targets.torch_library.python_types import ResultClass, python_signature, result_class


def _imports(text: str, library: Library) -> str:
    """The imports the rendered text needs (math, Sequence, NamedTuple only when used)."""
    lines = []
    if "math." in text:
        lines.append("import math\n")
    if "Sequence[" in text:
        lines.append("from collections.abc import Sequence\n")
    if any(result_class(f) for f in library.operators):
        lines.append("from typing import NamedTuple\n")
    if lines:
        lines.append("\n")
    lines.append("import torch\nfrom torch import Tensor\n")
    return "".join(lines)


def _docstring(f: NativeFunction) -> str:
    text = f.extensions.doc or f"{f.namespace}::{f.func}"
    text = text.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if "\n" not in text:
        return f'    """{text}"""\n'
    lines = text.splitlines()
    body = "".join(f"    {line}".rstrip() + "\n" for line in lines[1:])
    return f'    """{lines[0]}\n{body}    """\n'


def _overload(f: NativeFunction) -> str:
    name = f.func.name
    return f"torch.ops.{f.namespace}.{name.name}.{name.overload_name or 'default'}"


def _class(named: ResultClass, docstring: str) -> str:
    fields = "".join(f"    {name}: {annotation}\n" for name, annotation in named.fields)
    return f"class {named.name}(NamedTuple):\n{docstring}{fields}"


def wrapper(f: NativeFunction) -> str:
    """`_op = torch.ops...` and the typed function that calls it (after its result class)."""
    sig = python_signature(f)
    name = python_name(f)
    call = f"_{name}({sig.call_arguments()})"
    named = result_class(f)
    head = ""
    if named is not None:  # torch.ops returns a plain tuple
        head = _class(named, f'    """The outputs of `{name}`."""\n\n') + "\n\n"
        call = f"{named.name}(*{call})"
    return (
        f"{head}_{name} = {_overload(f)}\n\n\n"
        f"def {name}({sig.parameter_list()}) -> {sig.returns}:\n"
        + _docstring(f)
        + f"    return {call}\n"
    )


def stub(f: NativeFunction) -> str:
    sig = python_signature(f)
    named = result_class(f)
    head = "" if named is None else _class(named, "") + "\n"
    return f"{head}def {python_name(f)}({sig.parameter_list()}) -> {sig.returns}: ...\n"


def exported_names(f: NativeFunction) -> list[str]:
    """What the package exports for `f`: its function, and its result class if it has one."""
    named = result_class(f)
    return [python_name(f), *([named.name] if named else [])]


def _load_compiled(library: Library) -> str:
    first = library.operators[0]
    return (
        "def _load_library() -> None:\n"
        '    """Load the compiled operators: `_C` beside this file, unless already loaded."""\n'
        "    import importlib.machinery\n"
        "    import pathlib\n\n"
        "    here = pathlib.Path(__file__).parent\n"
        "    for suffix in importlib.machinery.EXTENSION_SUFFIXES:\n"
        '        path = here / f"_C{suffix}"\n'
        "        if path.is_file():\n"
        "            torch.ops.load_library(str(path))\n"
        "            return\n"
        f'    if not torch._C._dispatch_has_kernel("{first.namespace}::{first.func.name.name}"):\n'
        "        raise ImportError(\n"
        f'            f"{library.package}: no compiled library _C beside {{here}}; build the '
        'package, "\n'
        '            "or load the library (torch.ops.load_library) before importing it"\n'
        "        )\n\n\n"
        "_load_library()\n"
        f'_lib = torch.library.Library("{library.namespace}", "FRAGMENT")\n'
    )


def _define_in_python(library: Library) -> str:
    lines = [f'_lib = torch.library.Library("{library.namespace}", "DEF")']
    for f in library.operators:
        tags = "".join(f"torch.Tag.{t}, " for t in sorted(f.tags))
        suffix = f", tags=({tags.rstrip(' ')})" if tags else ""
        lines.append(f'_lib.define("{f.func}"{suffix})')
    return "\n".join(lines) + "\n"


def _registrations(library: Library) -> list[str]:
    imports: dict[str, None] = {}
    calls: list[str] = []

    def bind(ref: PythonRef, alias: str) -> str:
        # After the wrappers, so that a kernel module may import this package.
        imports[f"from {ref.module} import {ref.function} as {alias}  # noqa: E402"] = None
        return alias

    for f in library.operators:
        name, ext = python_name(f), f.extensions
        for key, ref in ext.python_kernels.items():
            fn = bind(ref, f"_{key}_{name}")
            calls.append(f'_lib.impl("{f.func.name}", {fn}, "{key}")')
        if ext.fake is not None:
            fn = bind(ext.fake, f"_fake_{name}")
            calls.append(
                f'torch.library.register_fake("{f.namespace}::{f.func.name}", {fn}, lib=_lib)'
            )
    blocks = []
    if imports:
        blocks.append("\n".join(sorted(imports)) + "\n\n" + "\n".join(calls) + "\n")
    if not library.compiled:  # else the library's C++ has these
        blocks.extend(python_autograd(d) for d in library.derivatives.values())
        selected = (f for f in library.operators if library.backend_selected(f))
        blocks.extend(backend_select.python_kernel(f) for f in selected)
    return blocks


def init_env(library: Library, generated: str) -> dict[str, object]:
    wrappers = [wrapper(f) for f in library.operators]
    registrations = _registrations(library)
    body = "".join(wrappers) + "".join(registrations)
    load = _load_compiled(library) if library.compiled else _define_in_python(library)
    return {
        "generated_comment": generated,
        "docstring": f"The `{library.namespace}` operator library (generated by opgen).",
        "imports": _imports(body, library),
        "load": load,
        "wrappers": "\n\n".join(wrappers),
        "registrations": "\n\n".join(registrations),
        "all_names": [f'"{n}",' for f in library.operators for n in exported_names(f)],
    }


def stub_env(library: Library, generated: str) -> dict[str, object]:
    # Stub style: consecutive functions, a blank line around each class.
    stubs = [
        ("\n" if i and result_class(f) else "") + stub(f) for i, f in enumerate(library.operators)
    ]
    return {
        "generated_comment": generated,
        "imports": _imports("".join(stubs), library),
        "stubs": stubs,
    }
