"""One Python binding's C++: the function that parses a call of one name and dispatches it.

For each name (`add`, `max`, `__and__`) of a namespace, the bindings file
holds a `THPVariable_<name>` function and an entry of the namespace's method
table (`method_def`); functions of the `torch.` namespaces are also declared
ahead (`forward_decls`). The function:
- unpacks `self` for Tensor methods, and creates the structseq types its
  overloads return (`static PyTypeObject* NamedTuple = generated::get_max_structseq();`);
- parses the arguments against every overload's signature string, in
  `group_overloads` order (`PythonArgParser`, told whether every overload is
  traced), and hands calls on tensor subclasses to `__torch_function__`;
- dispatches the overload that parsed (`switch (_r.idx)`, no switch for one),
  choosing between a functional and its out= variant by whether `out` was
  given (`_r.isNone(<out index>)`);
- each call (`python_dispatch.DispatchCall`) returns the wrapped result, a
  structseq, `None`, or, for inplace `_foreach_` functions, which return
  nothing in C++, their `self` list.
A method with a single overload and no arguments (`x.abs()`) is a
`METH_NOARGS` function without a parser, which asks `has_torch_function(self_)`
(`check_has_torch_function(self_)` before torch 2.13). Dunder methods (`__and__`) turn a
`TypeError` into `NotImplemented`, so that Python tries the reflected
operator. Facts from torchgen/packaged/autograd/gen_python_functions.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api.cpp import name as cpp_name
from opgen.api.cpp_literals import cpp_string
from opgen.api.pyi import structseq_fieldnames, structseq_key
from opgen.api.python import PythonSignature, PythonSignatureDeprecated, PythonSignatureGroup
from opgen.api.signatures import SignatureSet
from opgen.autograd.tracing import should_trace
from opgen.autograd.views import is_tensor_list_type
from opgen.diagnostics import SpecError
from opgen.python_bindings.dispatch import (
    DispatchCall,
    PythonArgParserOutputExpr,
    UnreadableArgument,
    arg_parser_output_exprs,
    dispatch_call,
)
from opgen.python_bindings.overloads import Pair, parse_order
from opgen.releases import HAS_TORCH_FUNCTION_METHODS, NEWEST, Release
from opgen.spec.keys import SchemaKind
from opgen.spec.native import NativeFunction
from opgen.spec.schema import BaseOperatorName
from opgen.template import indented

# The Python module object of each namespace, which `__torch_function__` overrides receive.
NAMESPACE_OBJECTS = {
    "torch": "THPVariableFunctionsModule",
    "torch.fft": "THPFFTVariableFunctionsModule",
    "torch.linalg": "THPLinalgVariableFunctionsModule",
    "torch.nested": "THPNestedVariableFunctionsModule",
    "torch.nn": "THPNNVariableFunctionsModule",
    "torch.sparse": "THPSparseVariableFunctionsModule",
    "torch.special": "THPSpecialVariableFunctionsModule",
}

# An inplace `_foreach_` function returns nothing in C++; in Python it returns its `self` list.
_RETURN_SELF_LIST = (
    "PyObject* self_tensorlist = _r.args[0];\n"
    "Py_INCREF(self_tensorlist);\n"
    "return self_tensorlist;\n"
)


def pycname(name: BaseOperatorName) -> str:
    return f"THPVariable_{name}"


def is_noarg(overloads: Sequence[Pair]) -> bool:
    return len(overloads) == 1 and overloads[0].signature.arguments_count() == 0


def forward_decls(name: BaseOperatorName, overloads: Sequence[Pair], *, method: bool) -> list[str]:
    """The declaration of a namespace function, ahead of the method table (none for methods)."""
    if method:
        return []
    if is_noarg(overloads):
        return [f"static PyObject * {pycname(name)}(PyObject* self_, PyObject* args);\n"]
    return [
        f"static PyObject * {pycname(name)}(PyObject* self_, PyObject* args, PyObject* kwargs);\n"
    ]


def method_def(
    name: BaseOperatorName, module: str | None, overloads: Sequence[Pair], *, method: bool
) -> str:
    """The binding's entry in its namespace's `PyMethodDef` table."""
    function = pycname(name)
    if name.dunder_method:
        function = f"TypeError_to_NotImplemented_<{function}>"
    if is_noarg(overloads):
        flags = "METH_NOARGS" if method else "METH_VARARGS | METH_KEYWORDS"
    else:
        function = f"castPyCFunctionWithKeywords({function})"
        flags = "METH_VARARGS | METH_KEYWORDS"
    if module == "torch":
        flags += " | METH_STATIC"
    return f'{{"{name}", {function}, {flags}, nullptr}},'


def method_impl(
    name: BaseOperatorName,
    module: str | None,
    overloads: Sequence[Pair],
    signatures: SignatureSet,
    *,
    method: bool,
    release: Release = NEWEST,
) -> str:
    """The binding's function: parse, hand to `__torch_function__`, dispatch."""
    typedefs, typenames = _structseq_types(overloads)
    header = ["  HANDLE_TH_ERRORS", *(f"  {t}" for t in typedefs)]
    if method:
        header.append("  const Tensor& self = THPVariable_Unpack(self_);")
    check = _torch_function_check(name, module, overloads, method=method, release=release)
    texted = parse_order(overloads)
    groups = [group for _, group in texted]
    if is_noarg(overloads):
        return f"""\
// {name}
static PyObject * {pycname(name)}(PyObject* self_, PyObject* args)
{{
{chr(10).join(header)}
{check}
{_dispatch_case(groups[0], typenames, signatures, "  ", release)}
  END_HANDLE_TH_ERRORS
}}

"""
    head = f"""\
// {name}
static PyObject * {pycname(name)}(PyObject* self_, PyObject* args, PyObject* kwargs)
{{
{chr(10).join(header)}
{_parser(texted, overloads, method=method)}
{check}"""
    if len(groups) == 1:
        dispatch = _dispatch_case(groups[0], typenames, signatures, "  ", release)
        return f"{head}\n{dispatch}\n  Py_RETURN_NONE;\n  END_HANDLE_TH_ERRORS\n}}\n\n"
    cases = "\n".join(
        f"    case {i}: {{\n{_dispatch_case(g, typenames, signatures, '      ', release)}\n    }}"
        for i, g in enumerate(groups)
    )
    # (Upstream's template for several overloads starts with a stray backslash line.)
    return f"""\
\\
{head}
  switch (_r.idx) {{
{cases}
  }}
  Py_RETURN_NONE;
  END_HANDLE_TH_ERRORS
}}

"""


def _parser(
    texted: Sequence[tuple[str, PythonSignatureGroup]], overloads: Sequence[Pair], *, method: bool
) -> str:
    """The parser of the groups' signatures (given with their texts), and the parse."""
    signatures = "\n".join(f"    {cpp_string(text)}," for text, _ in texted)
    traceable = "true" if all(should_trace(p.function) for p in overloads) else "false"
    max_args = max(p.signature.arguments_count() for p in overloads)
    return f"""\
  static PythonArgParser parser({{
{signatures}
  }}, /*traceable=*/{traceable});

  ParsedArgs<{max_args}> parsed_args;
  auto _r = parser.parse({"self_" if method else "nullptr"}, args, kwargs, parsed_args);"""


def _torch_function_check(
    name: BaseOperatorName,
    module: str | None,
    overloads: Sequence[Pair],
    *,
    method: bool,
    release: Release,
) -> str:
    """Hands a call involving a tensor subclass that overrides it to `__torch_function__`
    (indented as in the function's body; "" for a function without arguments)."""
    if is_noarg(overloads):
        if not method:
            return ""
        if release.has(HAS_TORCH_FUNCTION_METHODS):
            condition = "if (has_torch_function(self_)) {"
        else:
            condition = "if(check_has_torch_function(self_)) {"
        return f"""\
  {condition}
    return handle_torch_function(self_, "{name}");
  }}"""
    namespace = NAMESPACE_OBJECTS[module] if module else "THPVariableClass"
    handler = f"_r, {'self_' if method else 'nullptr'}, args, kwargs, {namespace}"
    return f"""\
  if(_r.has_torch_function()) {{
    return handle_torch_function({handler}, "{module or "torch.Tensor"}");
  }}"""


def _structseq_types(overloads: Sequence[Pair]) -> tuple[list[str], dict[str, str]]:
    """The structseq types the overloads return, as local statics, and their names by key."""
    typedefs: list[str] = []
    typenames: dict[str, str] = {}
    for pair in overloads:
        f = pair.function
        if not _fieldnames(f):
            continue
        key = _structseq_key(f)
        if key in typenames:
            continue
        typename = f"NamedTuple{len(typedefs) or ''}"
        typenames[key] = typename
        getter = f"generated::get_{cpp_name(pair.function.func)}_structseq()"
        typedefs.append(f"static PyTypeObject* {typename} = {getter};")
    return typedefs, typenames


def _structseq_key(f: NativeFunction) -> str:
    """`structseq_key` of `f`'s returns (a function without a structseq has its C++ name
    as key, which a structseq's may equal)."""
    return structseq_key(f.func, _fieldnames(f))


def _fieldnames(f: NativeFunction) -> list[str]:
    try:
        return structseq_fieldnames(f.func.returns)
    except ValueError as e:
        raise SpecError(str(e), f.location_of("func")) from None


def _dispatch_case(
    group: PythonSignatureGroup,
    typenames: dict[str, str],
    signatures: SignatureSet,
    indent: str,
    release: Release,
) -> str:
    """The dispatch of one parsed signature, indented: its function, or a choice by `out`."""
    ps = group.signature
    outputs = _parser_outputs(ps, group.base)
    call = _single_dispatch(ps, group.base, outputs, typenames, signatures, release)
    if group.outplace is None:
        return indented(indent, call)
    call_out = _single_dispatch(ps, group.outplace, outputs, typenames, signatures, release)
    inner = indent + "  "
    return f"""\
{indent}if (_r.isNone({ps.output_idx()})) {{
{indented(inner, call)}
{indent}}} else {{
{indented(inner, call_out)}
{indent}}}"""


def _parser_outputs(ps: PythonSignature, f: NativeFunction) -> dict[str, PythonArgParserOutputExpr]:
    try:
        return arg_parser_output_exprs(ps)
    except UnreadableArgument as e:
        named = [a for a in f.func.arguments.flat_all if a.name == e.name]
        at = f.schema_location(*f.func.span(named[0])) if named else f.location_of("func")
        raise SpecError(f"no Python binding for {f.func.name}: {e}", at) from None


def _unbindable(f: NativeFunction, error: ValueError) -> SpecError:
    return SpecError(f"no Python binding for {f.func.name}: {error}", f.location_of("func"))


def _single_dispatch(
    ps: PythonSignature,
    f: NativeFunction,
    outputs: dict[str, PythonArgParserOutputExpr],
    typenames: dict[str, str],
    signatures: SignatureSet,
    release: Release,
) -> str:
    """The call of one function: the lambda, and the statement returning its result."""
    try:
        call = dispatch_call(ps, f, outputs, signatures.of(f), release)
    except ValueError as e:
        raise _unbindable(f, e) from None
    if isinstance(ps, PythonSignatureDeprecated):
        comment = f"// [deprecated] aten::{ps.deprecated_schema}"
    else:
        comment = f"// aten::{f.func}"
    name = cpp_name(f.func)
    result = f"dispatch_{name}({call.args}){call.set_requires_grad}"
    if call.returns == "void":
        ending = f"{result};\n{_void_return(f)}"
    else:
        typename = typenames.get(_structseq_key(f))
        ending = f"return wrap({'' if typename is None else typename + ', '}{result});\n"
    inits = "\n".join(call.inits)
    return f"{comment}\n{inits}\n{dispatch_lambda_args(name, call)}\n{ending}"


def dispatch_lambda_args(name: str, call: DispatchCall) -> str:
    statement = "" if call.returns == "void" else "return "
    return f"""\
auto dispatch_{name} = []({call.formals}) -> {call.returns} {{
  pybind11::gil_scoped_release no_gil;
  {statement}{call.callee}({call.callee_args});
}};"""


def _void_return(f: NativeFunction) -> str:
    if not (str(f.func.name).startswith("_foreach_") and f.func.kind is SchemaKind.inplace):
        return "Py_RETURN_NONE;\n"
    self_arg = f.func.arguments.self_arg
    if self_arg is None or not is_tensor_list_type(self_arg.argument.type):
        raise SpecError(
            f"the inplace foreach function {f.func.name} must take a tensor list 'self'",
            f.location_of("func"),
        )
    return _RETURN_SELF_LIST
