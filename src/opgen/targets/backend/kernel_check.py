"""`--impl-path`: does the backend's C++ file define every kernel its YAML lists?

The check is textual, as upstream's: a definition is `<class>::<name>(` on a
line whose text before the class name does not end in `:` (which would be a
qualified call such as `return ns::XLANativeFunctions::add(...)`). Each kernel
name must be defined once per operator that uses it (overloads of one name
count separately). A mismatch is reported at the YAML entry of the first
operator that needs the kernel, with the declarations the file should define.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Set

from opgen.diagnostics import Diagnostic, SpecError
from opgen.spec.native import NativeFunction
from opgen.spec.schema import OperatorName
from opgen.spec.yaml.load import read_text
from opgen.targets.backend.files import BackendRun


def check_kernel_definitions(
    run: BackendRun, impl_path: str, *, generated: Set[OperatorName] = frozenset()
) -> None:
    """Raise SpecError unless `impl_path` defines each listed kernel (but the `generated`)."""
    backend = run.backend
    text = read_text(impl_path)
    class_name = re.escape(run.kernel_class)
    defined = Counter(
        name
        for before, name in re.findall(rf"(.*){class_name}::\s*([\w\d]*)\(", text)
        if not before.endswith(":")
    )
    listed = {
        op.name: op.location
        for op in (*backend.supported, *backend.full_codegen, *backend.autograd)
        if op.name not in generated
    }
    kernels = {
        name: m.kernel for index in backend.indices.values() for name, m in index.index.items()
    }
    needed: dict[str, list[NativeFunction]] = {}
    for f in run.functions:  # in spec order, as upstream lists them
        if f.func.name in listed:
            needed.setdefault(kernels[f.func.name], []).append(f)
    errors = []
    for kernel, functions in needed.items():
        if defined[kernel] == len(functions):
            continue
        declarations = "; ".join(run.signatures.of(f).dispatcher.decl() for f in functions)
        operators = ", ".join(str(f.func.name) for f in functions)
        errors.append(
            Diagnostic(
                listed[functions[0].func.name],
                f"{impl_path} defines {run.kernel_class}::{kernel} {defined[kernel]} "
                f"time(s), but it needs {len(functions)} definition(s), for {operators}: "
                f"{declarations}",
            )
        )
    if errors:
        raise SpecError.of(errors)
