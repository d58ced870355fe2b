"""`ViewFuncs.h` and `ViewFuncs.cpp`: a class that replays each view operator.

Autograd must sometimes redo a view on another base tensor (a view of a
tensor that does not support `as_strided`, or a view that changes metadata;
see ADInplaceOrViewType). For that, every view operator with a derived
autograd kernel that does not modify its arguments (`transpose.int`, not
`transpose_`) gets a `torch::autograd::ViewFunc` subclass, named after the
operator in camel case (`TransposeIntViewFunc`): it stores the view's
arguments but `self` in owning types (`::std::vector<c10::SymInt>` for a
`c10::SymIntArrayRef`), plus a `view_idx` for views that return a list.
Calling it applies the view to a new base through the dispatcher; its SymInts
and tensors can be read and replaced, in argument order (`get_symints`,
`set_symints`, ..., `clone_and_set`), so that the replay can be redone with
other sizes or tensors.

The header declares the classes (and a `<NAME>_VIEW_FUNC_AVAILABLE` macro
each), the source defines their methods; both are written in every
configuration, including `--disable-autograd`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from opgen.api import dispatcher
from opgen.api.translate import translate
from opgen.api.types import SYM_INT, TENSOR, ArgumentStyle, Binding, VectorCType
from opgen.autograd.model import NativeFunctionWithDifferentiabilityInfo
from opgen.autograd.views import get_view_info, modifies_arguments
from opgen.cached import cached
from opgen.frozen import frozen
from opgen.output import OutputSet
from opgen.spec.arguments import Argument
from opgen.spec.native import NativeFunction
from opgen.spec.types import OptionalType, Type
from opgen.targets.autograd.run import AutogradRun, emitted
from opgen.targets.autograd.wrappers import extract_bindings, use_derived
from opgen.targets.emitters import Emitted
from opgen.template import indented

GENERATED_NAMESPACE = "torch::autograd::generated::"

# The parameter of `operator()`: the base the view is replayed on.
INPUT_BASE = "input_base"
# For views returning a list: which of the list's tensors the class replays.
VIEW_IDX = "view_idx"


def view_func_name(
    f: NativeFunction, *, include_namespace: bool = False, camel_case: bool = True
) -> str:
    """`split.Tensor` -> `SplitTensorViewFunc` (`split_Tensor_view_func` in snake case).

    Each `_`-separated word is title-cased as Python's `str.title` does (`2d`
    -> `2D`); a leading underscore is kept.
    """
    snake = f"{f.func.name.unambiguous_name().replace('.', '_')}_view_func"
    name = snake
    if camel_case:
        name = "".join(word.title() for word in snake.split("_"))
        if snake.startswith("_"):
            name = f"_{name}"
    return f"{GENERATED_NAMESPACE}{name}" if include_namespace else name


def is_replayable_view(fn: NativeFunctionWithDifferentiabilityInfo) -> bool:
    """Whether the function gets a ViewFunc: a derived kernel's view that mutates nothing."""
    f = fn.func
    return use_derived(fn) and get_view_info(f) is not None and not modifies_arguments(f)


def returns_tensor_list(f: NativeFunction) -> bool:
    """Whether the view's one return is a list of tensors (so each needs a `view_idx`)."""
    (ret,) = f.func.returns
    return ret.type.is_list_like() is not None and ret.type.is_tensor_like()


@frozen
class StateAccess:
    """How a ViewFunc reads and replaces the saved values of one kind (SymInts or tensors)."""

    get: list[str]  # statements returning them as a vector, in argument order
    set: list[str]  # statements replacing them from the vector
    count: str  # an expression: how many there are


def state_access(bindings: Sequence[Binding], vector: str, vector_type: str) -> StateAccess:
    """Accessors over the saved `bindings` through the vector `vector` of type `vector_type`.

    A list contributes its elements, an optional one value if it has one, any
    other value one.
    """
    counts: list[str] = []
    gets: list[str] = []
    sets: list[str] = []
    for b in bindings:
        assert isinstance(b.argument, Argument), "ViewFunc state comes from schema arguments"
        name = b.name
        if b.argument.type.is_list_like():
            counts.append(f"{name}.size()")
            gets.append(f"{vector}.insert({vector}.end(), {name}.begin(), {name}.end());")
            sets.append(
                f"std::copy({vector}.begin() + i, {vector}.begin() + i + {name}.size(), "
                f"{name}.begin());"
            )
        elif isinstance(b.argument.type, OptionalType):
            counts.append(f"({name}.has_value() ? 1 : 0)")
            gets.append(f"if({name}.has_value()) {vector}.insert({vector}.end(), *({name}));")
            sets.append(f"if({name}.has_value()) {name} = {vector}[i];")
        else:
            counts.append("1")
            gets.append(f"{vector}.push_back({name});")
            sets.append(f"{name} = {vector}[i];")
    count = " + ".join(counts) if counts else "0"
    get = [f"{vector_type} {vector};"]
    setter: list[str] = []
    if bindings:
        get.append(f"{vector}.reserve({count});")
        setter.append("auto i = 0;")
        for i, statement in enumerate(sets):
            setter.append(statement)
            if i < len(sets) - 1:  # move past what this one took
                setter.append(f"i += {counts[i]};")
    return StateAccess([*get, *gets, f"return {vector};"], setter, count)


@frozen(eq=False)
class ViewFuncClass:
    """The ViewFunc subclass of one view operator `f`."""

    f: NativeFunction

    @cached
    def parts(self) -> ViewFuncParts:
        """What the declaration and the definition are made of; derived once for both."""
        f = self.f
        style = ArgumentStyle.of(f)
        params = [b for b in extract_bindings(f) if b.name != "self"]
        # Saved in owning types; the view's first argument is the base.
        fields = [
            dispatcher.argument(a, style=style, owning=True) for a in f.func.arguments.flat_all[1:]
        ]
        exprs = translate(params, fields, allow_expensive_conversions=True)
        constructor_args = [b.defn() for b in params]
        clone_args = [b.name for b in params]
        state = [f"{b.nctype.remove_const_ref().cpp_type()} {b.name};" for b in fields]
        # Parameters skip `self`, fields the first argument: the same arguments for a
        # view of `self` (every view but `sparse_coo_tensor_with_dims_and_tensors`).
        initializers = [f"{b.nctype.name}({e.expr})" for b, e in zip(params, exprs, strict=False)]
        call_args = ", ".join([INPUT_BASE, *clone_args])
        op_call = f"at::_ops::{f.func.name.unambiguous_name()}::call({call_args})"
        if returns_tensor_list(f):
            constructor_args.append(f"int64_t {VIEW_IDX}")
            clone_args.append(VIEW_IDX)
            state.append(f"int64_t {VIEW_IDX};")
            initializers.append(f"{VIEW_IDX}({VIEW_IDX})")
            op_call += f"[{VIEW_IDX}]"
        symints = state_access(
            [b for b in params if _argument_type(b).is_symint_like()],
            "symints",
            VectorCType(SYM_INT).cpp_type(),
        )
        tensors = state_access(
            [b for b in params if _argument_type(b).is_tensor_like()],
            "tensors",
            VectorCType(TENSOR).cpp_type(),
        )
        return ViewFuncParts(
            name=view_func_name(f),
            macro=f"{view_func_name(f, camel_case=False).upper()}_AVAILABLE",
            constructor_args=", ".join(constructor_args),
            initializers=f": {', '.join(initializers)}" if initializers else "",
            state=state,
            clone_args=", ".join(clone_args),
            call=op_call,
            symints=symints,
            tensors=tensors,
        )

    def declaration(self) -> str:
        return view_func_declaration(self.parts)

    def definition(self) -> str:
        return view_func_definition(self.parts)


@frozen
class ViewFuncParts:
    """What the declaration and the definition of one ViewFunc class are made of."""

    name: str  # SplitTensorViewFunc
    macro: str  # SPLIT_TENSOR_VIEW_FUNC_AVAILABLE
    constructor_args: str
    initializers: str  # ": dim(dim), ..." or ""
    state: list[str]  # the member declarations
    clone_args: str
    call: str  # applies the view to `input_base`
    symints: StateAccess
    tensors: StateAccess


def view_func_declaration(p: ViewFuncParts) -> str:
    """The class in ViewFuncs.h, with its `<NAME>_AVAILABLE` macro."""
    vectors = ("std::optional<std::vector<c10::SymInt>>", "std::optional<std::vector<at::Tensor>>")
    lines = [
        f"#define {p.macro}",
        f"struct {p.name} : public torch::autograd::ViewFunc {{",
        f"  {p.name}({p.constructor_args}) {p.initializers}",
        "  {}",
        f"  virtual ~{p.name}() override = default;",
        "  virtual std::vector<c10::SymInt> get_symints() const override;",
        "  virtual size_t num_symints() const override;",
        "  virtual std::vector<at::Tensor> get_tensors() const override;",
        "  virtual size_t num_tensors() const override;",
        "  virtual at::Tensor operator()(const at::Tensor&) const override;",
        "  virtual std::unique_ptr<ViewFunc> clone_and_set(",
        f"      {vectors[0]} = ::std::nullopt,",
        f"      {vectors[1]} = ::std::nullopt) const override;",
        "",
        "protected:",
        "  virtual void set_symints(std::vector<c10::SymInt>) override;",
        "  virtual void set_tensors(std::vector<at::Tensor>) override;",
        "",
        "private:",
        indented("  ", p.state),
        "};",
    ]
    return "\n".join(lines) + "\n\n"


def _state_methods(cls: str, kind: str, element: str, access: StateAccess) -> list[str]:
    """`get_<kind>`, `num_<kind>` and `set_<kind>` of one kind of saved value."""
    return [
        f"std::vector<{element}> {cls}::get_{kind}() const {{",
        indented("  ", access.get),
        "}",
        "",
        f"size_t {cls}::num_{kind}() const {{",
        f"  return static_cast<size_t>({access.count});",
        "}",
        "",
        f"void {cls}::set_{kind}(std::vector<{element}> {kind}) {{",
        f"  TORCH_INTERNAL_ASSERT({kind}.size() == num_{kind}());",
        indented("  ", access.set),
        "}",
        "",
    ]


def view_func_definition(p: ViewFuncParts) -> str:
    """The class's methods in ViewFuncs.cpp."""
    cls = p.name
    lines = [
        *_state_methods(cls, "symints", "c10::SymInt", p.symints),
        *_state_methods(cls, "tensors", "at::Tensor", p.tensors),
        f"at::Tensor {cls}::operator()(const at::Tensor& input_base) const {{",
        f"  return {p.call};",
        "}",
        "",
        f"std::unique_ptr<ViewFunc> {cls}::clone_and_set(",
        "    std::optional<std::vector<c10::SymInt>> symints,",
        "    std::optional<std::vector<at::Tensor>> tensors) const {",
        f"  auto output = std::make_unique<{cls}>({p.clone_args});",
        "  if (symints.has_value()) {",
        "    output->set_symints(std::move(*(symints)));",
        "  }",
        "  if (tensors.has_value()) {",
        "    output->set_tensors(std::move(*(tensors)));",
        "  }",
        "  return output;",
        "}",
    ]
    return "\n".join(lines) + "\n\n"


def _argument_type(b: Binding) -> Type:
    argument = b.argument
    assert isinstance(argument, Argument), "view arguments are schema arguments"
    return argument.type


@frozen(eq=False)
class ViewFuncFiles:
    """Both files' classes, derived once, when the first of the two renders."""

    run: AutogradRun
    out: OutputSet  # the set the files are in, whose templates they are rendered from

    @cached
    def classes(self) -> tuple[ViewFuncClass, ...]:
        return tuple(ViewFuncClass(fn.func) for fn in self.run.fns if is_replayable_view(fn))

    def render(self, template: str, key: str, text: Callable[[ViewFuncClass], str]) -> str:
        """`template` with `key` holding each class's `text`."""
        classes = self.classes
        return self.out.render(
            template,
            {
                "generated_comment": f"@generated from {self.run.template_comment_dir}/{template}",
                key: [text(c) for c in classes],
                "ops_headers": [f"#include <ATen/ops/{c.f.root_name}_ops.h>" for c in classes],
            },
        )


def emit_view_funcs(run: AutogradRun) -> Emitted:
    out = run.output_set()
    files = ViewFuncFiles(run, out)
    header = partial(
        files.render, "ViewFuncs.h", "view_func_declarations", ViewFuncClass.declaration
    )
    source = partial(
        files.render, "ViewFuncs.cpp", "view_func_definitions", ViewFuncClass.definition
    )
    out.add("ViewFuncs.h", header, family=files)
    out.add("ViewFuncs.cpp", source, family=files)
    return emitted(out)
