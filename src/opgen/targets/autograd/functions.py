"""Functions.h and Functions.cpp: the backward node classes of every differentiable operator.

Functions.h declares one struct per node (`backward_nodes.BackwardNode`): a
`Node` subclass naming itself, holding its saved values, releasing them once
the graph is freed (under the node's lock), and declaring its entry points.
Functions.cpp defines, per node:

- `<op>_apply_functional`: the backward proper, a pure function of the
  gradients, a mask of the inputs that need gradients, and the saved values.
  It aliases the gradients the formulas name (`grad`, or `grad_<output>`),
  then runs each formula whose inputs need a gradient and copies the results
  into the inputs' ranges (`copy_range`). A formula for one plain tensor input
  yields an undefined tensor when no gradient is defined; one for several
  inputs returns a tuple, and may read which of them are needed
  (`grad_input_mask`); a foreach formula runs once per tensor of the list;
- `<op>_apply_functional_ivalue`: the same over packed IValues (compiled autograd);
- `<op>::apply`: locks, checks nothing was released, unpacks the saved values,
  asks the engine which inputs need gradients, and calls the functional form;
- `<op>::compiled_args` and `<op>::apply_with_saved`: hand the saved values to
  compiled autograd and call the functional form through it.

Both files are generated in every configuration, also without autograd
kernels. Each node's texts are built once, with plain string operations; the
two files share them and are rendered together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from opgen.autograd.backward_nodes import (
    BackwardNode,
    backward_node,
    infos_with_derivatives,
)
from opgen.autograd.model import Derivative, uses_single_grad
from opgen.cached import cached
from opgen.output import OutputSet
from opgen.spec.arguments import Argument
from opgen.targets.autograd.run import AutogradRun, emitted
from opgen.targets.emitters import Emitted


def emit_functions(run: AutogradRun) -> Emitted:
    out = run.output_set()
    nodes = _Nodes(run, out)
    for name in _FILES:
        out.add(name, partial(nodes.render, name), family=nodes)
    return emitted(out)


class _Nodes:
    """The run's backward nodes, derived when the first of the two files renders."""

    def __init__(self, run: AutogradRun, out: OutputSet) -> None:
        self._run = run
        self._out = out

    @cached
    def nodes(self) -> list[BackwardNode]:
        run = self._run
        infos = infos_with_derivatives(run.derivatives, run.fns)
        return [backward_node(info, run.release) for info in infos]

    def render(self, name: str) -> str:
        key, text = _FILES[name]
        env = {
            "generated_comment": f"@generated from {self._run.template_comment_dir}/{name}",
            key: [text(node) for node in self.nodes],
        }
        return self._out.render(name, env)


def _block(indent: str, lines: Iterable[str]) -> str:
    """Lines one below the other at `indent`, blank ones left empty; "" (one empty line) for none.

    This is a template's block placeholder: with no lines, the line it stands on
    stays, empty.
    """
    return "\n".join(indent + line if line else "" for line in lines)


def node_declaration(node: BackwardNode) -> str:
    """The node's struct in Functions.h."""
    op, base = node.op, node.superclass
    lock = ("std::lock_guard<std::mutex> lock(mutex_);",) if node.releases_variables else ()
    release = [statement for member in node.saved for statement in member.release]
    will_release = (
        (
            "bool retain_variables = true;",
            "void will_release_variables() override {",
            "  retain_variables = false;",
            "}",
        )
        if node.retains_variables
        else ()
    )
    members = [declaration for member in node.saved for declaration in member.declarations]
    sizes = [f"size_t {i.name}_size_;" for i in node.inputs if i.is_list]
    return f"""\
#ifdef _WIN32
struct {op} : public {base} {{
  TORCH_API {op}() = default;
#else
struct TORCH_API {op} : public {base} {{
#endif
  using {base}::{base};
  variable_list apply(variable_list&& grads) override;
  std::string name() const override {{ return "{op}"; }}
  void release_variables() override {{
{_block("    ", lock)}
{_block("    ", release)}
  }}
{_block("  ", will_release)}
  void compiled_args(CompiledNodeArgs& args) const override;
  variable_list apply_with_saved(const variable_list& inputs, SwapSavedVariables& saved) override;
{_block("  ", members)}
{_block("  ", sizes)}
}};
"""


def node_definition(node: BackwardNode) -> str:
    """The node's functions in Functions.cpp."""
    op = node.op
    n = len(node.inputs)
    ranges = _index_ranges(node)
    args = "".join(f", {name}" for _, name in node.functional_args)
    parameters = "".join(f", {ref_type} {name}" for ref_type, name in node.functional_args)
    unpack_ivalues = [
        f"auto {name} = packed_args.unpack<{ref_type.removesuffix('&')}>();"
        for ref_type, name in node.functional_args
    ]
    prologue = _apply_prologue(node)
    return f"""\
static variable_list {op}_apply_functional(
  variable_list&& grads,
  std::array<bool,{n}> needs_input_grad{parameters})
{{
  IndexRangeGenerator gen;
{_block("  ", ranges)}
  variable_list grad_inputs(gen.size());
{_block("  ", backward_body(node))}
  return grad_inputs;
}}
inline variable_list {op}_apply_functional_ivalue(const variable_list& grads, const ivalue_list& args)
{{
#ifdef C10_MOBILE
  TORCH_INTERNAL_ASSERT(false, "compiled autograd doesn't work on mobile");
#else
  auto packed_args = PackedArgs(args);
  auto needs_input_grad = packed_args.unpack<std::array<bool, {n}>>();
{_block("  ", unpack_ivalues)}
  return {op}_apply_functional(variable_list(grads), needs_input_grad{args});
#endif
}}

variable_list {op}::apply(variable_list&& grads) {{
{_block("  ", ("std::lock_guard<std::mutex> lock(mutex_);",) if node.releases_variables else ())}
{prologue}
  return {op}_apply_functional(std::move(grads), needs_input_grad{args});
}}

{_compiled_autograd(node, prologue)}
"""  # noqa: E501


def _index_ranges(node: BackwardNode) -> list[str]:
    """Each input's range of gradient outputs: one slot, or one per tensor of a list."""
    return [
        f"auto {i.name}_ix = gen.range({f'{i.name}_size_' if i.is_list else '1'});"
        for i in node.inputs
    ]


def _apply_prologue(node: BackwardNode) -> str:
    """What apply() and apply_with_saved() do first: check, unpack, compute the mask."""
    checks = [member.check for member in node.saved if member.check is not None]
    unpacks = [member.unpack for member in node.saved if member.unpack is not None]
    masks = [f"  task_should_compute_output({{ {i.name}_ix }})," for i in node.inputs]
    needs_input_grad = [
        "IndexRangeGenerator gen;",
        *(_index_ranges(node) or [""]),
        f"auto needs_input_grad = std::array<bool, {len(node.inputs)}>{{",
        *masks,
        "};",
    ]
    return "\n".join((_block("  ", checks), _block("  ", unpacks), _block("  ", needs_input_grad)))


def _compiled_autograd(node: BackwardNode, prologue: str) -> str:
    """compiled_args() and apply_with_saved(): the node seen by compiled autograd."""
    op = node.op
    collect = [
        f"args.collect({m.member}, {'true' if m.is_output else 'false'});"
        if m.saved_variable
        else f"args.collect({m.member});"
        for m in node.saved
    ]
    schema_types = [
        f"std::array<bool, {len(node.inputs)}>",
        *(
            ref_type.removesuffix("&").removeprefix("const").strip()
            for ref_type, _ in node.functional_args
        ),
    ]
    schema = [
        "std::vector<at::TypePtr> schema = {",
        *(f"  torch::dynamo::autograd::IValuePacker<{t}>::packed_type()," for t in schema_types),
        "};",
    ]
    pack = [f"packed_args.pack({name});" for _, name in node.functional_args]
    return f"""\
void {op}::compiled_args(CompiledNodeArgs& args) const {{
{_block("    ", collect)}
}}
variable_list {op}::apply_with_saved(const variable_list& grads, SwapSavedVariables& saved) {{
#ifdef C10_MOBILE
  TORCH_INTERNAL_ASSERT(false, "compiled autograd doesn't work on mobile");
#else
{_block("  ", (f"saved.before({m.member});" for m in node.saved))}

  static bool called = false;
  if (!called) {{
    called = true;
{_block("    ", schema)}
    const auto& pyinterface = torch::dynamo::autograd::getPyCompilerInterface();
    pyinterface->bind_function(saved.get_py_compiler(), name(), {op}_apply_functional_ivalue, schema);
  }}

  variable_list output_result;

  PackedArgs packed_args;
{prologue}
  packed_args.pack(needs_input_grad);
{_block("  ", pack)}

  output_result = compiled_autograd_apply_functional(packed_args, next_edges(), saved, grads, name());

{_block("  ", (f"saved.after({m.member});" for m in node.saved))}
  return output_result;
#endif
}}
"""  # noqa: E501


def backward_body(node: BackwardNode) -> list[str]:
    """The lines of `<op>_apply_functional` between allocating and returning the gradients."""
    info = node.info
    if uses_single_grad(info):
        lines = ["const auto& grad = grads[0];"]
    else:
        lines = [
            f"const auto& {name} = grads[{info.available_named_gradients.index(name)}];"
            for name in sorted(info.used_named_gradients)
        ]
    index = {i.name: position for position, i in enumerate(node.inputs)}
    formulas: list[str] = []
    checks_defined = False
    for derivative in info.derivatives:
        if len(derivative.var_names) == 1:
            checked, text = _single_input_formula(node, derivative, index)
            checks_defined |= checked
        else:
            text = _multi_input_formula(derivative, index)
        formulas.append(text)
    if checks_defined:
        # Computed once, before the formulas that need it.
        lines.append("bool any_grad_defined = any_variable_defined(grads);")
    lines.extend(line.rstrip() for text in formulas for line in text.splitlines())
    return lines


def _single_input_formula(
    node: BackwardNode, derivative: Derivative, index: dict[str, int]
) -> tuple[bool, str]:
    """A formula for one input, and whether it checks that some gradient is defined.

    For a plain tensor input (`Tensor`, `Tensor?`), the gradient is undefined
    when no incoming gradient is, unless the formula reports `not_implemented`.
    """
    name = derivative.var_names[0]
    formula = derivative.formula
    checked = False
    if "not_implemented" not in formula:
        matching = [a for a in node.info.args_with_derivatives if a.name == name]
        if (
            len(matching) == 1
            and isinstance(matching[0].argument, Argument)
            and str(matching[0].argument.type) in ("Tensor", "Tensor?")
        ):
            formula = f"any_grad_defined ? ({formula}) : Tensor()"
            checked = True
    idx = index[name]
    if node.info.name.startswith("_foreach_"):
        return checked, _foreach_formula(name, idx, formula)
    return checked, (
        f"if (needs_input_grad[/*{name}*/{idx}]) {{\n"
        f"  auto grad_result = {formula};\n"
        f"  copy_range(grad_inputs, {name}_ix, grad_result);\n"
        "}"
    )


def _foreach_formula(name: str, idx: int, formula: str) -> str:
    """A foreach function's formula for one list: the element formula per defined gradient."""
    return f"""\
if (needs_input_grad[/*{name}*/{idx}]) {{  // {name}
  std::vector<Tensor> grad_result;
  grad_result.reserve(grads.size());
  for (const auto & i : c10::irange(grads.size())) {{
    if (grads[i].defined()) {{
      grad_result.emplace_back({formula});
    }} else {{
      grad_result.emplace_back(Tensor());
    }}
  }}
  copy_range(grad_inputs, {name}_ix, grad_result);
}}"""


def _multi_input_formula(derivative: Derivative, index: dict[str, int]) -> str:
    """A formula for several inputs: it returns a tuple, one gradient per input."""
    names = derivative.var_names
    needed = " || ".join(f"needs_input_grad[{index[name]}]" for name in names)
    if "grad_input_mask" in derivative.formula:
        mask = "\n".join(
            (
                f"    auto grad_input_mask = std::array<bool, {len(names)}>{{",
                *(f"      needs_input_grad[{index[name]}]," for name in names),
                "    };",
            )
        )
    else:
        mask = ""
    copies = "\n".join(
        f"    if (needs_input_grad[/*{name}*/{index[name]}]) {{\n"
        f"      copy_range(grad_inputs, {name}_ix, std::get<{position}>(grad_result));\n"
        "    }"
        for position, name in enumerate(names)
    )
    return f"if ({needed}) {{\n{mask}\n  auto grad_result = {derivative.formula};\n{copies}\n}}"


# Each file: (its template's placeholder, the text each node puts there).
_FILES: dict[str, tuple[str, Callable[[BackwardNode], str]]] = {
    "Functions.h": ("autograd_function_declarations", node_declaration),
    "Functions.cpp": ("autograd_function_definitions", node_definition),
}
