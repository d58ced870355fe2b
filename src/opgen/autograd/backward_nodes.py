"""The backward nodes: what each differentiability info's `torch::autograd::Node` holds.

Every info with derivatives becomes a node class (`MulBackward0`), declared in
Functions.h, defined in Functions.cpp and exposed to Python by
python_functions.cpp. `BackwardNode` is what those files share, derived once
per info:

- its inputs, the arguments with derivatives, in schema order: each takes one
  slot of the node's gradient outputs, a tensor list as many as it had tensors
  (the node records the list's size, `<name>_size_`);
- its saved values (`SavedMember`), the formulas' saved inputs then saved
  outputs, each sorted by name. How a value is held follows from its C++ type
  (`saved_member`): tensors in a `SavedVariable` (`<name>_`), tensor lists in a
  vector of them that can be released only once, array references copied into
  owning vectors, other values by value. The type also decides the Python
  property python_functions.cpp defines for it (`Getter`). A saved output is
  unpacked with the node itself as its grad_fn: `getptr()`, or before torch
  2.13, when nodes were held by `std::shared_ptr`, `shared_from_this()`;
- the arguments of its functional form (`<op>_apply_functional`): the list
  sizes, the saved values, and `retain_variables` when a formula reads it.

`infos_with_derivatives` lists the infos as Functions.cpp orders its nodes:
the derivatives file's entries (every dispatch key), then the infos derived for
out-of-place foreach functions (`_foreach_add.List` from `add.Tensor`), in the
order of the run's functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum

from opgen.api.types import (
    BOOL,
    DOUBLE,
    I_TENSOR_LIST_REF,
    INT_ARRAY_REF,
    OPTIONAL_INT_ARRAY_REF,
    OPTIONAL_SYM_INT_ARRAY_REF,
    OPTIONAL_TENSOR,
    SCALAR,
    SYM_INT,
    SYM_INT_ARRAY_REF,
    TENSOR,
    TENSOR_LIST,
    ArrayRefCType,
    BaseCType,
    CType,
    ListCType,
    MutRefCType,
    OptionalCType,
    VectorCType,
)
from opgen.autograd.model import (
    DerivativeInfos,
    DifferentiabilityInfo,
    NativeFunctionWithDifferentiabilityInfo,
    SavedAttribute,
    is_foreach_func,
    uses_retain_variables,
)
from opgen.autograd.views import VIEW_FUNCTIONS
from opgen.diagnostics import SpecError
from opgen.frozen import frozen
from opgen.releases import INTRUSIVE_NODES, NEWEST, Release
from opgen.spec.schema import FunctionSchema

LONG = BaseCType("int64_t")
STRING = BaseCType("c10::string_view")

# Binding types of an argument that is a list of tensors (`Tensor[]`, `Tensor?[]`):
# its gradient takes one slot per tensor.
TENSOR_LIST_BINDING_TYPES = frozenset(
    {
        "at::TensorList",
        "const c10::List<::std::optional<at::Tensor>> &",
        "const at::ITensorListRef &",
    }
)


class GetterForm(Enum):
    """How a Python property of the node reads its member (python_functions.cpp)."""

    VALUE = "value"  # the member itself
    OPTIONAL = "optional"  # std::optional: None when empty
    OPTIONAL_ARRAY = "optional_array"  # c10::OptionalArray: None when empty
    SAVED_VARIABLE = "saved_variable"  # `<name>_`, unpacked; also a raw property
    SAVED_LIST = "saved_list"  # `<name>_`, a released-once vector; also a raw property
    SCALAR_LIST = "scalar_list"  # a released-once vector of scalars


class GetterValue(Enum):
    """How the property converts the value it read to a Python object."""

    TENSOR = "tensor"
    TENSORS = "tensors"
    INT64 = "int64"
    SYMINT = "symint"
    DOUBLE = "double"
    BOOL = "bool"
    STRING = "string"
    SCALAR = "scalar"
    INT64_LIST = "int64_list"
    SYMINT_LIST = "symint_list"
    DOUBLE_LIST = "double_list"
    SCALAR_LIST = "scalar_list"


@frozen
class Getter:
    form: GetterForm
    value: GetterValue


@frozen
class SavedMember:
    """One saved value as the node holds it: `SavedVariable self_;` for `self`."""

    name: str  # the formulas' name for it; the local variable `apply` unpacks
    is_output: bool
    declarations: tuple[str, ...]  # members of the node's struct
    release: tuple[str, ...]  # statements of release_variables()
    unpack: str | None  # statement of apply() making the local from the member
    check: str | None  # statement of apply() failing once the member was released
    member: str  # the member compiled autograd visits: `self_` or `dim`
    saved_variable: bool  # held in SavedVariable(s): compiled autograd is told the direction
    ref_type: str  # the parameter type of the functional form
    getter: Getter | None  # the Python property; None for types Python cannot read


@frozen
class NodeInput:
    """An argument with a derivative: a range of the node's gradient outputs."""

    name: str
    is_list: bool  # a tensor list: as many slots as tensors, `<name>_size_` of them


@frozen(eq=False)
class BackwardNode:
    info: DifferentiabilityInfo
    op: str
    superclass: str  # `Node` for views (their backward is not traceable), else TraceableFunction
    inputs: tuple[NodeInput, ...]
    saved: tuple[SavedMember, ...]
    retains_variables: bool  # a formula reads `retain_variables`
    # (C++ type, name) of each argument of `<op>_apply_functional` after the mask.
    functional_args: tuple[tuple[str, str], ...]

    @property
    def releases_variables(self) -> bool:
        """Whether release_variables() does anything (and so apply() takes the node's lock)."""
        return any(member.release for member in self.saved)


def infos_with_derivatives(
    derivatives: DerivativeInfos, fns: Iterable[NativeFunctionWithDifferentiabilityInfo]
) -> list[DifferentiabilityInfo]:
    """Every info with derivatives, in the order of the node classes in Functions.cpp."""
    infos = [info for per_key in derivatives.infos.values() for info in per_key.values()]
    infos.extend(_derived_foreach_infos(derivatives.infos, fns))
    return [info for info in infos if info.has_derivatives]


def _derived_foreach_infos(
    entries: Mapping[FunctionSchema, object], fns: Iterable[NativeFunctionWithDifferentiabilityInfo]
) -> Iterable[DifferentiabilityInfo]:
    """The infos derived for out-of-place foreach functions without an entry of their own.

    Only those describe their own function; an inplace foreach function reuses
    the info of the operator it loops over, which is already listed.
    """
    for fn in fns:
        f = fn.func
        if fn.info is None or not is_foreach_func(f) or f.func in entries:
            continue
        for info in fn.info.values():
            if info.func.func == f.func:
                yield info


def backward_node(info: DifferentiabilityInfo, release: Release = NEWEST) -> BackwardNode:
    """The node of an info with derivatives, as `release` defines it."""
    assert info.op is not None, f"{info.name} has derivatives but no node class"
    inputs = tuple(
        NodeInput(arg.name, arg.type in TENSOR_LIST_BINDING_TYPES)
        for arg in info.args_with_derivatives
    )
    saved = tuple(
        [
            *(
                saved_member(info, var, is_output=False, release=release)
                for var in sorted(info.all_saved_inputs, key=_saved_name)
            ),
            *(
                saved_member(info, var, is_output=True, release=release)
                for var in sorted(info.all_saved_outputs, key=_saved_name)
            ),
        ]
    )
    retains = uses_retain_variables(info)
    functional_args = [
        *(("size_t", f"{i.name}_size_") for i in inputs if i.is_list),
        *((member.ref_type, member.name) for member in saved),
    ]
    if retains:
        functional_args.append(("bool", "retain_variables"))
    superclass = "Node" if info.name in VIEW_FUNCTIONS else "TraceableFunction"
    return BackwardNode(info, info.op, superclass, inputs, saved, retains, tuple(functional_args))


def _saved_name(var: SavedAttribute) -> str:
    return str(var.nctype.name)


def saved_member(
    info: DifferentiabilityInfo,
    var: SavedAttribute,
    *,
    is_output: bool,
    release: Release,
) -> SavedMember:
    """How the node of `info` holds saved value `var` (an input's, or an output's)."""
    name = str(var.nctype.name)
    t = var.nctype.type
    # A saved output is unpacked with the node as its grad_fn.
    node = _self_pointer(release) if is_output else None
    if t in _SAVED_VARIABLE_TYPES or (t == SCALAR and is_output):
        return _saved_variable(name, is_output, node)
    if t in _SAVED_LIST_TYPES:
        foreach = info.func.func.name.name.base.startswith("_foreach")
        if t == VectorCType(TENSOR) and not (foreach and is_output):
            # Only a foreach function's `Tensor[]` result is saved as a vector of tensors.
            raise SpecError(
                f"{info.name}: `{name}` is saved as a std::vector<Tensor>, which only "
                "the result of a foreach function may be",
                info.location,
            )
        return _saved_list(name, is_output, node, optional=False)
    if t == ListCType(OPTIONAL_TENSOR):
        return _saved_list(name, is_output, node, optional=True)
    if t == ArrayRefCType(SCALAR):
        return _saved_scalar_list(name, is_output)
    owned = _OWNED_VALUE_TYPES.get(t)
    if owned is not None:
        member_type, initializer, getter = owned
        return _saved_value(name, is_output, member_type, initializer, getter)
    member_type = t.cpp_type()
    lowered = member_type.lower()
    if "ref" in lowered or "view" in lowered or "*" in member_type or "&" in member_type:
        raise SpecError(
            f"{info.name}: `{name}` would be saved as {member_type}, "
            "which looks like a non-owning reference",
            info.location,
        )
    return _saved_value(name, is_output, member_type, "", _VALUE_GETTERS.get(t))


def _self_pointer(release: Release) -> str:
    """The expression of a node's pointer to itself, in its member functions."""
    return "getptr()" if release.has(INTRUSIVE_NODES) else "shared_from_this()"


def _saved_variable(name: str, is_output: bool, node: str | None) -> SavedMember:
    return SavedMember(
        name=name,
        is_output=is_output,
        declarations=(f"SavedVariable {name}_;",),
        release=(f"{name}_.reset_data();",),
        unpack=f"auto {name} = {name}_.unpack({node or ''});",
        check=None,
        member=f"{name}_",
        saved_variable=True,
        ref_type="Tensor&",
        getter=Getter(GetterForm.SAVED_VARIABLE, GetterValue.TENSOR),
    )


def _saved_list(name: str, is_output: bool, node: str | None, *, optional: bool) -> SavedMember:
    if optional:
        unpack, ref_type = f"unpack_opt_list({name}_)", "torch::List<std::optional<Tensor>>&"
    else:
        unpack, ref_type = f"unpack_list({name}_, {node or 'nullptr'})", "std::vector<Tensor>&"
    return SavedMember(
        name=name,
        is_output=is_output,
        declarations=(f"std::vector<SavedVariable> {name}_;", f"bool {name}_released_ = false;"),
        # Clearing the vector frees every SavedVariable's tensor and grad_fn.
        release=(f"{name}_.clear();", f"{name}_released_ = true;"),
        unpack=f"auto {name} = {unpack};",
        check=f"TORCH_CHECK(!{name}_released_, ERR_BACKWARD_TWICE);",
        member=f"{name}_",
        saved_variable=True,
        ref_type=ref_type,
        getter=Getter(GetterForm.SAVED_LIST, GetterValue.TENSORS),
    )


def _saved_scalar_list(name: str, is_output: bool) -> SavedMember:
    # Held by value with a released flag; release clears it but never sets the flag.
    return SavedMember(
        name=name,
        is_output=is_output,
        declarations=(f"std::vector<at::Scalar> {name};", f"bool {name}_released_ = false;"),
        release=(f"{name}.clear();",),
        unpack=None,
        check=None,
        member=name,
        saved_variable=False,
        ref_type="std::vector<at::Scalar>&",
        getter=Getter(GetterForm.SCALAR_LIST, GetterValue.SCALAR_LIST),
    )


def _saved_value(
    name: str, is_output: bool, member_type: str, initializer: str, getter: Getter | None
) -> SavedMember:
    return SavedMember(
        name=name,
        is_output=is_output,
        declarations=(f"{member_type} {name}{initializer};",),
        release=(),
        unpack=None,
        check=None,
        member=name,
        saved_variable=False,
        ref_type=f"{member_type}&",
        getter=getter,
    )


_SAVED_VARIABLE_TYPES: frozenset[CType] = frozenset(
    {TENSOR, OPTIONAL_TENSOR, MutRefCType(OPTIONAL_TENSOR)}
)
_SAVED_LIST_TYPES: frozenset[CType] = frozenset(
    {TENSOR_LIST, I_TENSOR_LIST_REF, VectorCType(TENSOR)}
)

_INT64_LIST = Getter(GetterForm.VALUE, GetterValue.INT64_LIST)
_SYMINT_LIST = Getter(GetterForm.VALUE, GetterValue.SYMINT_LIST)
_OPTIONAL_INT64_LIST = Getter(GetterForm.OPTIONAL_ARRAY, GetterValue.INT64_LIST)
_OPTIONAL_SYMINT_LIST = Getter(GetterForm.OPTIONAL_ARRAY, GetterValue.SYMINT_LIST)

# Types the node holds as another, owning type: C++ type -> (member type,
# initializer, Python property).
_OWNED_VALUE_TYPES: dict[CType, tuple[str, str, Getter]] = {
    INT_ARRAY_REF: ("std::vector<int64_t>", "", _INT64_LIST),
    SYM_INT_ARRAY_REF: ("std::vector<c10::SymInt>", "", _SYMINT_LIST),
    OPTIONAL_INT_ARRAY_REF: ("c10::OptionalArray<int64_t>", "", _OPTIONAL_INT64_LIST),
    OPTIONAL_SYM_INT_ARRAY_REF: ("c10::OptionalArray<c10::SymInt>", "", _OPTIONAL_SYMINT_LIST),
    OptionalCType(INT_ARRAY_REF): ("c10::OptionalArray<int64_t>", "", _OPTIONAL_INT64_LIST),
    OptionalCType(SYM_INT_ARRAY_REF): (
        "c10::OptionalArray<c10::SymInt>",
        "",
        _OPTIONAL_SYMINT_LIST,
    ),
    OptionalCType(ArrayRefCType(DOUBLE)): (
        "c10::OptionalArray<double>",
        "",
        Getter(GetterForm.OPTIONAL_ARRAY, GetterValue.DOUBLE_LIST),
    ),
    LONG: ("int64_t", " = 0", Getter(GetterForm.VALUE, GetterValue.INT64)),
    SYM_INT: ("c10::SymInt", "", Getter(GetterForm.VALUE, GetterValue.SYMINT)),
    STRING: ("std::string", "", Getter(GetterForm.VALUE, GetterValue.STRING)),
    OptionalCType(STRING): (
        "std::optional<std::string>",
        "",
        Getter(GetterForm.OPTIONAL, GetterValue.STRING),
    ),
}

# The Python properties of values held as their own type; the others (TypeAndSize,
# ScalarType, TensorOptions, TensorGeometry, vectors of them) have none.
_VALUE_GETTERS: dict[CType, Getter] = {
    OptionalCType(LONG): Getter(GetterForm.OPTIONAL, GetterValue.INT64),
    OptionalCType(SYM_INT): Getter(GetterForm.OPTIONAL, GetterValue.SYMINT),
    DOUBLE: Getter(GetterForm.VALUE, GetterValue.DOUBLE),
    OptionalCType(DOUBLE): Getter(GetterForm.OPTIONAL, GetterValue.DOUBLE),
    BOOL: Getter(GetterForm.VALUE, GetterValue.BOOL),
    SCALAR: Getter(GetterForm.VALUE, GetterValue.SCALAR),
    OptionalCType(SCALAR): Getter(GetterForm.OPTIONAL, GetterValue.SCALAR),
}
