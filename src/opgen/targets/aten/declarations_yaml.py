"""Declarations.yaml: the legacy description of every function (declarations_yaml part).

One mapping per function, in spec order, with keys in this order: name (the
C++ API name, `_out` for out= functions), operator_name, overload_name,
manual_kernel_registration, category_override (`''` when unset),
schema_string (`aten::<schema>`), arguments (the C++ API's convenience
signature: out arguments first, the TensorOptions group as one `options`
argument), schema_order_cpp_signature, schema_order_arguments (every schema
argument, in schema order), method_of (`Type`, then `Tensor` for methods,
`namespace` for functions), mode (`native`), python_module, returns, inplace,
is_factory_method (has TensorOptions and is no method), abstract,
device_guard, with_gil and deprecated (always false), has_math_kernel (has a
CompositeImplicitAutograd kernel).

An argument's keys are sorted: allocate and output (out arguments), annotation,
default (the C++ default read back as a YAML bool, int or float where it is
one, else a string), dynamic_type (the C++ type, but `at::Tensor` for Tensor
and Tensor?, and no optional), field_name (an out argument's return name, if
the return is named), is_nullable, kwarg_only, name, size (fixed-size lists
other than bool), type (the C++ type, never SymInt). A return has
dynamic_type, field_name (if named), name (`self` inplace, the out argument for
out=, else its C++ return name) and type.

Text is built directly (see `yaml_text` for the scalar rules); each distinct
argument is rendered once per run.
"""

from __future__ import annotations

from collections.abc import Callable

from opgen.api import cpp, cpp_literals
from opgen.api.signatures import FunctionSignatures
from opgen.api.types import ArgumentStyle, Binding
from opgen.spec.arguments import Argument, Return, TensorOptionsArguments
from opgen.spec.keys import Variant
from opgen.spec.native import NativeFunction
from opgen.spec.types import OptionalType, Type
from opgen.targets.aten.run import AtenRun
from opgen.targets.aten.yaml_text import YamlScalars
from opgen.targets.emitters import Emitted

_ITEM = "\n    "  # between keys of a mapping in a sequence under a top-level entry


def dynamic_type(t: Type, style: ArgumentStyle) -> str:
    """The legacy type name: the C++ type, without optional, Tensor for Tensor?, never SymInt."""
    while isinstance(t, OptionalType):
        t = t.elem
    if str(t) == "Tensor":
        return "at::Tensor"
    return cpp.argument_ctype(t, mutable=False, symint=False, style=style).cpp_type()


def pythonify_default(s: str) -> object:
    """A C++ default as YAML shows it: a bool, int or float where it reads as one."""
    if s == "true":
        return True
    if s == "false":
        return False
    try:
        return int(s)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            return s


_BOOL = {True: "true", False: "false"}

# Per-argument memo key: the argument's identity, kwarg-only, out, return name, style flags.
_ArgumentKey = tuple[int, bool, bool, str | None, bool, bool]


class DeclarationWriter:
    """Renders entries, keeping each distinct argument's and return's text.

    Memos are keyed by object identity (the spec shares equal arguments
    between functions, and keeps them alive for the whole run); each value
    holds its object, so an identity is never reused while the memo lives.
    """

    def __init__(self) -> None:
        self.scalars = YamlScalars()
        self._argument_texts: dict[_ArgumentKey, tuple[Argument, str, str]] = {}
        self._return_texts: dict[tuple[int, str, bool, bool], tuple[Return, str]] = {}

    def _s(self, value: object) -> str:
        return self.scalars.scalar(value, 2)

    def argument(
        self, a: Argument, kwarg_only: bool, out: bool, field: str | None, style: ArgumentStyle
    ) -> tuple[str, str]:
        """(the argument's YAML item, its C++ type)."""
        key = (id(a), kwarg_only, out, field, *_flags(style))
        found = self._argument_texts.get(key)
        if found is None:
            ctype = cpp.argument_ctype(a.type, mutable=a.is_write, symint=False, style=style)
            text = self._render_argument(a, kwarg_only, out, field, style, ctype.cpp_type())
            found = self._argument_texts[key] = (a, text, ctype.cpp_type())
        return found[1], found[2]

    def _render_argument(
        self,
        a: Argument,
        kwarg_only: bool,
        out: bool,
        field: str | None,
        style: ArgumentStyle,
        ctype: str,
    ) -> str:
        s = self._s
        lines = []
        if out:
            lines.append("allocate: true")
        lines.append(f"annotation: {s(str(a.annotation) if a.annotation else None)}")
        if a.default is not None:
            default = cpp_literals.default_expr(a.default, a.type, symint=False)
            lines.append(f"default: {s(pythonify_default(default))}")
        lines.append(f"dynamic_type: {s(dynamic_type(a.type, style))}")
        if out and field is not None:
            lines.append(f"field_name: {s(field)}")
        lines.append(f"is_nullable: {s(a.type.is_nullable())}")
        if kwarg_only:
            lines.append("kwarg_only: true")
        lines.append(f"name: {s(a.name)}")
        if out:
            lines.append("output: true")
        listed = a.type.is_list_like()
        if listed is not None and listed.size is not None and str(listed.elem) != "bool":
            lines.append(f"size: {listed.size}")
        lines.append(f"type: {s(ctype)}")
        return "  - " + _ITEM.join(lines) + "\n"

    def options(self, b: Binding) -> str:
        s = self._s
        lines = ["annotation: null"]
        if b.default is not None:
            lines.append(f"default: {s(b.default)}")
        lines += ["dynamic_type: at::TensorOptions", "is_nullable: false", "kwarg_only: true"]
        lines += [f"name: {s(b.name)}", f"type: {s(b.type)}"]
        return "  - " + _ITEM.join(lines) + "\n"

    def _arguments(
        self, sigs: FunctionSignatures, fields: dict[str, str]
    ) -> tuple[list[str], list[str], list[str]]:
        """The C++ API arguments' texts, the schema-order ones', and the latter's C++ types."""
        func, style = sigs.f.func, sigs.style
        kwarg_only = {a.name for a in func.arguments.flat_kwarg_only}
        outs = {a.name for a in func.arguments.out}

        def item(a: Argument) -> tuple[str, str]:
            n = a.name
            return self.argument(a, n in kwarg_only, n in outs, fields.get(n), style)

        # The C++ API's arguments are the schema's (the same objects), reordered.
        ordered = {id(a): item(a) for a in func.schema_order_arguments()}
        arguments = []
        for b in sigs.cpp.signature.arguments():
            if isinstance(b.argument, TensorOptionsArguments):
                arguments.append(self.options(b))
            else:
                assert isinstance(b.argument, Argument)
                found = ordered.get(id(b.argument))
                arguments.append((found or item(b.argument))[0])
        texts = ordered.values()
        return arguments, [text for text, _ in texts], [ctype for _, ctype in texts]

    def entry(self, sigs: FunctionSignatures) -> str:
        f, style = sigs.f, sigs.style
        func, op = f.func, f.func.name
        string = self.scalars.string
        returns, fields = self._returns_of(f, style)
        arguments, ordered, types = self._arguments(sigs, fields)
        cpp_returns = cpp.returns_type(func.returns, style=style).cpp_type()
        signature = f"{cpp_returns} ({', '.join(types)})"
        method = Variant.method in f.variants
        method_of = "  - Type\n" + ("  - Tensor\n" if method else "")
        if Variant.function in f.variants:
            method_of += "  - namespace\n"
        factory = func.arguments.tensor_options is not None and not method
        return "".join(
            [
                f"- name: {string(cpp.name(func), 1)}\n",
                f"  operator_name: {string(str(op.name), 1)}\n",
                f"  overload_name: {string(op.overload_name, 1)}\n",
                f"  manual_kernel_registration: {_BOOL[f.manual_kernel_registration]}\n",
                f"  category_override: {string(f.category_override or '', 1)}\n",
                f"  schema_string: {string(f'aten::{func}', 1)}\n",
                _sequence("arguments", arguments),
                f"  schema_order_cpp_signature: {string(signature, 1)}\n",
                _sequence("schema_order_arguments", ordered),
                f"  method_of:\n{method_of}",
                "  mode: native\n",
                f"  python_module: {string(f.python_module or '', 1)}\n",
                _sequence("returns", returns),
                f"  inplace: {_BOOL[op.name.inplace]}\n",
                f"  is_factory_method: {_BOOL[factory]}\n",
                f"  abstract: {_BOOL[f.is_abstract]}\n",
                f"  device_guard: {_BOOL[f.device_guard]}\n",
                "  with_gil: false\n  deprecated: false\n",
                f"  has_math_kernel: {_BOOL[f.has_composite_implicit_autograd_kernel]}\n",
            ]
        )

    def _returns_of(
        self, f: NativeFunction, style: ArgumentStyle
    ) -> tuple[list[str], dict[str, str]]:
        """The returns' texts, and each out argument's return name (where named)."""
        func = f.func
        is_out = func.is_out_fn()
        fields: dict[str, str] = {}
        texts = []
        for i, (r, name) in enumerate(zip(func.returns, cpp.return_names(f), strict=False)):
            if r.name and is_out:
                fields[func.arguments.out[i].name] = r.name
            key = (id(r), name, *_flags(style))
            found = self._return_texts.get(key)
            if found is None:
                found = self._return_texts[key] = (r, self._render_return(r, name, style))
            texts.append(found[1])
        return texts, fields

    def _render_return(self, r: Return, name: str, style: ArgumentStyle) -> str:
        s = self._s
        lines = [f"dynamic_type: {s(dynamic_type(r.type, style))}"]
        if r.name:
            lines.append(f"field_name: {s(r.name)}")
        lines.append(f"name: {s(name)}")
        lines.append(f"type: {s(cpp.return_type(r, style=style).cpp_type())}")
        return "  - " + _ITEM.join(lines) + "\n"


def _flags(style: ArgumentStyle) -> tuple[bool, bool]:
    return style.const_ref_for_mutable_tensors, style.ilistref_for_tensor_lists


def _sequence(key: str, items: list[str]) -> str:
    if not items:
        return f"  {key}: []\n"
    return f"  {key}:\n" + "".join(items)


def declarations_yaml(run: AtenRun) -> str:
    writer = DeclarationWriter()
    of: Callable[[NativeFunction], FunctionSignatures] = run.signatures.of
    entries = [writer.entry(of(f)) for f in run.spec.functions]
    return "".join(entries) if entries else "[]\n"


def emit_declarations_yaml(run: AtenRun) -> Emitted:
    """Declarations.yaml (AtenPart.declarations_yaml)."""
    outputs = run.outputs()
    outputs.cpu.add("Declarations.yaml", lambda: declarations_yaml(run))
    return outputs.emitted()
