"""The Python API: how `torch.add(...)` and `Tensor.add(...)` are parsed and typed.

Python bindings parse their arguments with `PythonArgParser`, which takes
signature strings in its own small language, e.g.
`add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)`:
- types use the parser's names (`int64_t`, `IntArrayRef[2]`, `Tensor?`,
  `ScalarList`), defaults are Python values (`None`, `True`, `1e-05`);
- outside methods, `self` is called `input`; methods have no `self` at all;
- keyword-only arguments follow a `*`; the out arguments are one keyword
  `out` (one tensor, or a tuple of them) that defaults to None;
- factory functions and `*_like`/`new_*` functions take dtype, layout,
  device, pin_memory and requires_grad as keywords, whatever the schema
  says (the schema's TensorOptions arguments are dropped and re-created).

The same signature model renders the `.pyi` type hints (`signature_str_pyi`,
with the hint types of `pyi.py`). Deprecated signatures (torch's
`deprecated.yaml`: old argument orders kept for compatibility) are Python
signatures of their own that call an existing operator with reordered or
constant arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from opgen.api import cpp_literals, pyi
from opgen.api.types import BindingMemo
from opgen.cached import cached
from opgen.frozen import field, frozen, replace
from opgen.spec.arguments import Argument, Arguments, Return
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.spec.types import Annotation, BaseTy, BaseType, ListType, OptionalType, Type

# C++ defaults as the parser and the stubs spell them.
_PYTHON_DEFAULTS = {
    "nullptr": "None",
    "::std::nullopt": "None",
    "std::nullopt": "None",
    "{}": "None",
}
_PYI_DEFAULTS = {
    **_PYTHON_DEFAULTS,
    "c10::MemoryFormat::Contiguous": "contiguous_format",
    "QScheme::PER_TENSOR_AFFINE": "per_tensor_affine",
}
_INT = BaseType(BaseTy.int)


@frozen
class PythonArgument:
    name: str
    type: Type
    default: str | None  # a C++ default made Python-like (see `pythonify_default`)
    # The expression the binding uses when the argument is not given, where the
    # default is not a constant: `torch::tensors::get_default_device()`.
    default_init: str | None

    # A run shares one PythonArgument among the functions that have the schema
    # argument (`BindingMemo`), so the usual texts are rendered once and kept;
    # `method` changes them only for an argument named `self`.

    def argument_str(self, *, method: bool = False, symint: bool = True) -> str:
        """The parameter in a `PythonArgParser` signature string."""
        if symint and not (method and self.name == "self"):
            return self._parser_text
        return self._argument_str(method=method, symint=symint)

    @cached
    def _parser_text(self) -> str:
        return self._argument_str(method=False, symint=True)

    def _argument_str(self, *, method: bool, symint: bool) -> str:
        type_str = argument_type_str(self.type, symint=symint)
        type_str = type_str.replace("const ", "").replace(" &", "")
        name = self.name
        if name == "self" and type_str in ("Tensor", "Number") and not method:
            name = "input"
        if self.default is None:
            return f"{type_str} {name}"
        return f"{type_str} {name}={_PYTHON_DEFAULTS.get(self.default, self.default)}"

    def argument_str_pyi(
        self, hints: pyi.Hints, *, method: bool = False, deprecated: bool = False
    ) -> str:
        """The parameter in a `.pyi` definition: `name: hint = default`."""
        if not deprecated and not (method and self.name == "self"):
            return self.pyi_text(hints)
        return self._argument_str_pyi(hints, method=method, deprecated=deprecated)

    def pyi_text(self, hints: pyi.Hints) -> str:
        """The usual `.pyi` parameter, kept for each release's hints."""
        texts = self._pyi_texts
        text = texts.get(hints)
        if text is None:
            text = texts[hints] = self._argument_str_pyi(hints, method=False, deprecated=False)
        return text

    @cached
    def _pyi_texts(self) -> dict[pyi.Hints, str]:
        return {}

    def _argument_str_pyi(self, hints: pyi.Hints, *, method: bool, deprecated: bool) -> str:
        type_str = pyi.argument_type_str(self.type, hints)
        name = self.name
        if name == "self" and type_str == "Tensor" and not method and not deprecated:
            name = "input"
        if name == "from":  # a Python keyword
            name = "from_"
        if name == "out" and not deprecated and (hints.exact_tensor_lists or type_str == "Tensor"):
            # The stubs merge the out= and functional overloads: `out` may be None.
            type_str = pyi.or_none(type_str)
        default = self.default
        if default is None or (
            deprecated and isinstance(self, PythonOutArgument) and default == "None"
        ):
            return f"{name}: {type_str}"
        t = self.type
        is_int_list = isinstance(t, ListType) and t.elem == _INT
        if is_int_list and default.startswith("{") and default.endswith("}"):
            items = ", ".join(item.strip() for item in default[1:-1].split(","))
            return f"{name}: {type_str} = ({items})"
        return f"{name}: {type_str} = {_PYI_DEFAULTS.get(default, default)}"


@frozen
class PythonOutArgument(PythonArgument):
    """The `out` keyword: one out tensor, or several packed into a tuple."""

    outputs: tuple[PythonArgument, ...]

    @staticmethod
    def from_outputs(outputs: tuple[PythonArgument, ...]) -> PythonOutArgument | None:
        if not outputs:
            return None
        if len(outputs) == 1:
            only = outputs[0]
            return PythonOutArgument(only.name, only.type, "None", None, outputs)
        if not all(o.type.is_tensor_like() for o in outputs):
            raise ValueError(f"only tensors can be packed into 'out', not {outputs}")
        packed = ListType(BaseType(BaseTy.Tensor), len(outputs))
        return PythonOutArgument("out", packed, "None", None, outputs)


@frozen
class PythonSignature:
    name: str  # the base name, without overload or inplace suffix handling
    input_args: tuple[PythonArgument, ...]  # positional
    input_kwargs: tuple[PythonArgument, ...]  # keyword-only, except out and TensorOptions
    output_args: PythonOutArgument | None
    returns: tuple[Return, ...]
    # dtype, layout, device, pin_memory and requires_grad, re-created for
    # factory functions (packed into TensorOptions when calling C++).
    tensor_options_args: tuple[PythonArgument, ...]
    method: bool
    # The run's memo (see `signature`): signatures that share their argument
    # tuples share the texts made from them.
    memo: BindingMemo | None = field(default=None, compare=False, repr=False, kw_only=True)

    @property
    def deprecated(self) -> bool:
        return False

    def arguments(
        self, *, skip_outputs: bool = False, skip_tensor_options: bool = False
    ) -> tuple[PythonArgument, ...]:
        """The parser's arguments in its order: positional, keyword-only, `out`, TensorOptions."""
        out = self.output_args
        tail: tuple[PythonArgument, ...] = () if out is None or skip_outputs else (out,)
        if not skip_tensor_options:
            tail += self.tensor_options_args
        return (*self.input_args, *self.input_kwargs, *tail)

    def output_idx(self) -> int:
        """Where `out` is among `arguments()`: after every input."""
        return len(self.input_args) + len(self.input_kwargs)

    def arguments_count(self) -> int:
        """How many arguments the parser reads (`_r` holds one per argument)."""
        has_out = self.output_args is not None
        return self.output_idx() + has_out + len(self.tensor_options_args)

    def signature_str(self, *, skip_outputs: bool = False, symint: bool = True) -> str:
        """The `PythonArgParser` signature string."""
        method = self.method
        args = self._formal_arguments(skip_outputs)
        if symint and not method:  # the usual texts, kept by each argument
            formals = [a._parser_text for a in args]
        else:
            formals = [a.argument_str(method=method, symint=symint) for a in args]
        return f"{self.name}({', '.join(self._with_star(formals))})"

    def signature_str_pyi(self, hints: pyi.Hints, *, skip_outputs: bool = False) -> str:
        """The `.pyi` definition."""
        args = self._formal_arguments(skip_outputs)
        if self.method:
            formals = self._with_star([a.argument_str_pyi(hints, method=True) for a in args])
            formals.insert(0, "self")
        else:  # the usual texts, kept by each argument
            formals = self._with_star([a.pyi_text(hints) for a in args])
        return pyi.format_function_signature(self.name, formals, self.returns_str_pyi(hints))

    def _formal_arguments(self, skip_outputs: bool) -> list[PythonArgument]:
        """`arguments(skip_outputs=...)`, as a list to insert the `*` into."""
        return list(self.arguments(skip_outputs=skip_outputs))

    def signature_str_pyi_vararg(
        self, hints: pyi.Hints, *, skip_outputs: bool = False
    ) -> str | None:
        """The `.pyi` definition taking a lone int list as varargs (`x.view(2, 3)`), if any."""
        args = self.arguments(skip_outputs=skip_outputs)
        if not args or len(self.input_args) != 1:
            return None
        first = args[0].type
        if not (isinstance(first, ListType) and str(first.elem) in ("int", "SymInt")):
            return None
        formals = [a.argument_str_pyi(hints, method=self.method) for a in args]
        formals[0] = f"*{args[0].name}: {pyi.argument_type_str(first.elem, hints)}"
        if self.method:
            formals.insert(0, "self")
        return pyi.format_function_signature(self.name, formals, self.returns_str_pyi(hints))

    def returns_str_pyi(self, hints: pyi.Hints) -> str:
        if not self.returns and pyi.returns_its_list(self.name, hints):
            return "tuple[Tensor, ...] | list[Tensor]"
        memo = self.memo
        if memo is None:
            return pyi.returns_str(self.name, self.returns, hints)
        returns = self.returns
        hint = memo.derived(returns, ("pyi.returns", hints), lambda r: pyi.returns_hint(r, hints))
        return hint if hint is not None else pyi.structseq_name(self.name)

    def returns_structseq_pyi(self, hints: pyi.Hints) -> tuple[str, str] | None:
        return pyi.returns_structseq(self.name, self.returns, hints)

    def _with_star(self, formals: list[str]) -> list[str]:
        positional = len(self.input_args)
        if len(formals) > positional:
            formals.insert(positional, "*")
        return formals


@frozen
class PythonSignatureDeprecated(PythonSignature):
    """A deprecated argument order, bound to the operator it calls."""

    deprecated_schema: FunctionSchema
    # The operator's arguments in its own order, as names of this signature's
    # arguments or constants: `(self, mat1, mat2, beta, 1)`.
    deprecated_args_exprs: tuple[str, ...]

    @property
    def deprecated(self) -> bool:
        return True

    def signature_str(self, *, skip_outputs: bool = False, symint: bool = True) -> str:
        return super().signature_str(skip_outputs=skip_outputs, symint=symint) + "|deprecated"

    def signature_str_pyi(self, hints: pyi.Hints, *, skip_outputs: bool = False) -> str:
        formals = [
            a.argument_str_pyi(hints, method=self.method, deprecated=True)
            for a in self.arguments(skip_outputs=skip_outputs)
        ]
        formals = self._with_star(formals)
        return pyi.format_function_signature(self.name, formals, self.returns_str_pyi(hints))

    def signature_str_pyi_vararg(
        self, hints: pyi.Hints, *, skip_outputs: bool = False
    ) -> str | None:
        return None  # the stubs have no vararg forms of deprecated signatures


@frozen
class PythonSignatureNativeFunctionPair:
    """A Python signature and the function it calls (one function may have several)."""

    signature: PythonSignature
    function: NativeFunction


@frozen
class PythonSignatureGroup:
    """A function and its out= variant, parsed by one signature with an optional `out`."""

    signature: PythonSignature
    base: NativeFunction
    outplace: NativeFunction | None

    @staticmethod
    def from_pairs(
        functional: PythonSignatureNativeFunctionPair,
        out: PythonSignatureNativeFunctionPair | None,
    ) -> PythonSignatureGroup:
        if out is None:
            return PythonSignatureGroup(functional.signature, functional.function, None)
        # The out= signature parses both calls; out= overloads have no
        # TensorOptions in C++, so those come from the functional variant.
        merged = replace(
            out.signature, tensor_options_args=functional.signature.tensor_options_args
        )
        return PythonSignatureGroup(merged, functional.function, out.function)


# -- argument types and defaults ------------------------------------------------------

# The base types `PythonArgParser` cannot read; it names the others as the
# schema does, except three that it spells as C++ does.
_PARSER_UNREADABLE = frozenset({BaseTy.DimVector, BaseTy.GraphModule, BaseTy.SymBool})
_PARSER_BASE_NAMES: dict[BaseTy, str] = {
    **{t: t.value for t in BaseTy if t not in _PARSER_UNREADABLE},
    BaseTy.float: "double",
    BaseTy.int: "int64_t",
    BaseTy.str: "c10::string_view",
}
_PARSER_LIST_NAMES = {
    "int": "IntArrayRef",
    "SymInt": "SymIntArrayRef",
    "Tensor": "TensorList",
    "Scalar": "ScalarList",
    "Dimname": "DimnameList",
}


def argument_type_str(t: Type, *, simple_type: bool = False, symint: bool = True) -> str:
    """The parser's name for schema type `t`.

    `simple_type` drops list sizes and writes `Tensor?[]` as a value type
    (the older form some bindings still use).
    """
    if isinstance(t, BaseType):
        parser_name = _PARSER_BASE_NAMES.get(t.name)
        if parser_name is None:
            raise ValueError(f"the Python argument parser has no type '{t}'")
        return parser_name
    if isinstance(t, OptionalType):
        return argument_type_str(t.elem, simple_type=simple_type, symint=symint) + "?"
    if isinstance(t, ListType):
        elem = str(t.elem)
        if elem == "bool":
            assert t.size is not None, "bool[] without a size"
            return f"::std::array<bool,{t.size}>"
        if elem == "Tensor?":
            if simple_type:
                return "c10::List<::std::optional<Tensor>>"
            return "const c10::List<::std::optional<Tensor>> &"
        if elem == "SymInt" and not symint:
            elem = "int"
        list_name = _PARSER_LIST_NAMES.get(elem)
        if list_name is None:
            return f"ArrayRef<{argument_type_str(t.elem, simple_type=simple_type, symint=symint)}>"
        size = None if simple_type else t.size
        return list_name if size is None else f"{list_name}[{size}]"
    raise ValueError(f"the Python argument parser has no type '{t}'")


def argument_type_size(t: Type) -> int | None:
    """The fixed size of a list type other than `bool[N]`, if any."""
    lst = t.is_list_like()
    if lst is not None and str(lst.elem) != "bool":
        return lst.size
    return None


def pythonify_default(s: str) -> str:
    """A C++ default as Python writes it: `true` is `True`, `1e-5` is `1e-05`."""
    if s == "true":
        return "True"
    if s == "false":
        return "False"
    try:
        return str(int(s))
    except ValueError:
        pass
    try:
        return str(float(s))
    except ValueError:
        return s


def argument(a: Argument) -> PythonArgument:
    default = None
    if a.default is not None:
        default = pythonify_default(cpp_literals.default_expr(a.default, a.type, symint=False))
    return PythonArgument(a.name, a.type, default, None)


# -- signatures ----------------------------------------------------------------------


def signature(
    f: NativeFunction,
    *,
    method: bool = False,
    pyi: bool = False,
    memo: BindingMemo | None = None,
) -> PythonSignature:
    return signature_from_schema(
        f.func, category_override=f.category_override, method=method, pyi=pyi, memo=memo
    )


def signature_from_schema(
    func: FunctionSchema,
    *,
    category_override: str | None,
    method: bool = False,
    pyi: bool = False,
    memo: BindingMemo | None = None,
) -> PythonSignature:
    """The Python signature of a schema; `pyi` is accepted for symmetry and changes nothing.

    With a `memo`, functions with the same `Arguments` object share their
    argument tuples (and so the texts each argument renders once).
    """
    args = func.arguments
    if memo is None:
        parts = _argument_parts(args, method, argument)
    else:
        parts = memo.derived(args, ("python", method), _shared_parts, method, memo)
    input_args, input_kwargs, output_args = parts
    name = str(func.name.name)
    return PythonSignature(
        name,
        input_args,
        input_kwargs,
        output_args,
        func.returns,
        _tensor_options_args(func, category_override, name),
        method,
        memo=memo,
    )


_ArgumentParts = tuple[
    tuple[PythonArgument, ...], tuple[PythonArgument, ...], PythonOutArgument | None
]


def _argument_parts(
    args: Arguments, method: bool, convert: Callable[[Argument], PythonArgument]
) -> _ArgumentParts:
    """The positional, keyword-only and out arguments of a signature."""
    if any(a.name == "requires_grad" for a in args.flat_all):
        raise ValueError("'requires_grad' is reserved for the Python bindings; rename the argument")
    self_args = [args.self_arg.argument] if args.self_arg is not None and not method else []
    positional = (*args.pre_self_positional, *self_args, *args.post_self_positional)
    keyword = (*args.pre_tensor_options_kwarg_only, *args.post_tensor_options_kwarg_only)
    return (
        tuple(map(convert, positional)),
        tuple(map(convert, keyword)),
        PythonOutArgument.from_outputs(tuple(map(convert, args.out))),
    )


def _shared_parts(args: Arguments, method: bool, memo: BindingMemo) -> _ArgumentParts:
    """`_argument_parts` with one PythonArgument per schema argument for the whole run."""
    return _argument_parts(args, method, lambda a: memo.derived(a, "python.argument", argument))


def _tensor_options_args(
    func: FunctionSchema, category_override: str | None, name: str
) -> tuple[PythonArgument, ...]:
    """The TensorOptions keywords of factory and `*_like`/`new_*` functions, else none.

    `name` is the base name. (The C++ name, `cpp.name`, adds `_out` to out=
    functions, which then do not end with `_like`.)
    """
    if category_override == "dummy":
        return ()
    is_like_or_new = (
        category_override in ("new", "like")
        or name.startswith("new_")
        or (name.endswith("_like") and not func.arguments.out)
    )
    if not is_like_or_new and category_override != "factory":
        # A factory makes tensors from no tensor. Most functions are not one: the
        # tests run in the order that settles that soonest.
        if func.arguments.has_tensor_arg():
            return ()
        if not any(r.type.is_tensor_like() for r in func.returns):
            return ()

    def init(part: str) -> str | None:
        # A like/new function takes unspecified options from its input tensor.
        options = func.arguments.tensor_options
        if is_like_or_new or options is None:
            return None
        a = {"dtype": options.dtype, "layout": options.layout, "device": options.device}[part]
        if a.default is None or a.default == "None":
            return None
        return cpp_literals.default_expr(a.default, a.type, symint=False)

    device_init = init("device")
    if device_init is None and not is_like_or_new:
        device_init = "torch::tensors::get_default_device()"
    optional_bool = OptionalType(BaseType(BaseTy.bool))
    return (
        PythonArgument("dtype", OptionalType(BaseType(BaseTy.ScalarType)), "None", init("dtype")),
        PythonArgument("layout", OptionalType(BaseType(BaseTy.Layout)), "None", init("layout")),
        PythonArgument("device", OptionalType(BaseType(BaseTy.Device)), "None", device_init),
        PythonArgument("pin_memory", optional_bool, "False", None),
        PythonArgument("requires_grad", optional_bool, "False", None),
    )


# -- deprecated signatures -------------------------------------------------------------

# Constants a deprecated signature may pass to the operator it calls, with their types.
_DEPRECATED_CONSTANTS = {"1": BaseType(BaseTy.Scalar)}


def deprecated_signatures(
    pairs: Sequence[PythonSignatureNativeFunctionPair],
    schema: FunctionSchema,
    call: str,
    *,
    method: bool,
    pyi: bool = False,
) -> list[PythonSignatureNativeFunctionPair]:
    """The deprecated signature `schema`, bound to each function `call` may mean.

    `call` is how the deprecated signature calls the operator, e.g.
    `addmm_out(out, self, mat1, mat2, beta, 1)`: a function name (with `_out`
    for the out= variant) and arguments that are names of `schema`'s
    arguments or known constants. It matches each function of that name whose
    arguments, in that order, have exactly those types and annotations (the
    rest having defaults) and whose returns are the same.
    """
    name, call_args = _split_call(call)
    is_out = name.endswith("_out")
    if is_out:
        name = name.replace("_out", "")
    by_name = {a.name: a for a in schema.arguments.flat_all}
    unknown = [a for a in call_args if a not in by_name and a not in _DEPRECATED_CONSTANTS]
    if unknown:
        raise ValueError(f"deprecated signature {schema}: unknown value '{unknown[0]}' in '{call}'")
    wanted = [
        (_DEPRECATED_CONSTANTS[a], None)
        if a in _DEPRECATED_CONSTANTS
        else (by_name[a].type, by_name[a].annotation)
        for a in call_args
    ]
    results = []
    for pair in pairs:
        if pair.signature.name != name or not _calls(pair.function.func, wanted, schema, is_out):
            continue
        base = signature_from_schema(
            schema, category_override=pair.function.category_override, method=method, pyi=pyi
        )
        deprecated = PythonSignatureDeprecated(
            **{field: getattr(base, field) for field in _SIGNATURE_FIELDS},
            deprecated_schema=schema,
            deprecated_args_exprs=tuple(call_args),
        )
        results.append(PythonSignatureNativeFunctionPair(deprecated, pair.function))
    if not results:
        raise ValueError(f"no function named {name} matches the deprecated signature {schema}")
    return results


_SIGNATURE_FIELDS = (
    "name",
    "input_args",
    "input_kwargs",
    "output_args",
    "returns",
    "tensor_options_args",
    "method",
)


def _split_call(call: str) -> tuple[str, list[str]]:
    head, paren, rest = call.partition("(")
    if not paren or not rest.endswith(")") or not head:
        raise ValueError(f"expected 'name(arg, ...)', not '{call}'")
    return head.partition(".")[0], rest[:-1].split(", ")


def _calls(
    target: FunctionSchema,
    wanted: Sequence[tuple[Type, Annotation | None]],
    schema: FunctionSchema,
    is_out: bool,
) -> bool:
    args: Iterable[Argument] = (
        (*target.arguments.out, *target.arguments.flat_non_out)
        if is_out
        else target.arguments.flat_all
    )
    for i, a in enumerate(args):
        if i < len(wanted):
            if wanted[i] != (a.type, a.annotation):
                return False
        elif a.default is None:
            return False
    return schema.returns == target.returns
