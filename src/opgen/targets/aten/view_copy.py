"""`CompositeViewCopyKernels.cpp` (`--generate sources`): kernels that are wholly generated.

Three kinds of `at::native` kernels, all CompositeExplicitAutograd(NonFunctional):
- `{view}_copy`: for every view group whose copy variant is named `<view>_copy`
  (not `slice_scatter` and the like, which are written by hand), call the
  view through `at::_ops` and clone the result contiguously (each tensor, for
  list-returning views). `view_copy` itself falls back to `reshape` when the
  view is impossible;
- functional variants derived from an inplace or mutable operator (tagged
  `generated`): clone the arguments the target mutates, call it, return the
  clones after its own fresh results;
- out= variants derived from a functional operator: call the functional one,
  resize and copy each result into its out argument.

Signatures: the `{view}_copy` kernels follow the native API of their
CompositeExplicitAutogradNonFunctional kernel; the derived kernels follow the
dispatcher API, named `<name>` / `<name>_<overload>` plus `_symint` when the
out= variant has SymInts. The derived kernels use the argument style of their
group's out= variant.
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api import dispatcher
from opgen.api.dispatcher import DispatcherSignature
from opgen.api.translate import translate
from opgen.api.types import ArgumentStyle, Binding, Expr
from opgen.spec.arguments import Return
from opgen.spec.groups import NativeFunctionsGroup, NativeFunctionsViewGroup
from opgen.spec.keys import DispatchKey
from opgen.spec.native import NativeFunction
from opgen.spec.schema import FunctionSchema
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted

# view_copy reshapes when the view is impossible (so lazy backends need no clone).
# Emitted C++ as torchgen writes it (byte-identical output). `view_copy`'s kernel.
_VIEW_COPY_KERNEL = """\
at::Tensor view_copy_symint(const at::Tensor & self, at::SymIntArrayRef size) {
  c10::SymDimVector shape = infer_size_dv(size, self.sym_numel());
  if (!at::detail::computeStride(self.sym_sizes(), self.sym_strides(), shape).has_value()) {
    return self.reshape_symint(size);
  } else {
    auto output = at::_ops::view::call(self, size);
    return output.clone(/*memory_format=*/at::MemoryFormat::Contiguous);
  }
}
"""

_CLONE = "clone(/*memory_format=*/at::MemoryFormat::Contiguous)"


def return_statement(returns: Sequence[Return], names: Sequence[str], style: ArgumentStyle) -> str:
    """`return x;`, a tuple of the names, or nothing for a function without returns."""
    assert len(returns) == len(names), f"{len(returns)} returns but names {names}"
    if not returns:
        return ""
    if len(returns) == 1:
        return f"return {names[0]};"
    tuple_type = dispatcher.returns_type(tuple(returns), style=style).cpp_type()
    return f"return {tuple_type}({', '.join(names)});"


def _view_copy_kernel(run: AtenRun, g: NativeFunctionsViewGroup) -> str | None:
    copy = g.view_copy
    if copy is None or copy.func.name.name.base != f"{g.view.func.name.name}_copy":
        return None
    index = run.backend_index(DispatchKey.CompositeExplicitAutogradNonFunctional)
    metadata = index.get_kernel(copy)
    assert metadata is not None, f"no CompositeExplicitAutogradNonFunctional kernel for {copy.func}"
    if str(copy.func.name) == "view_copy":
        assert metadata.kernel == "view_copy_symint"
        return _VIEW_COPY_KERNEL
    copy_sig = run.signatures.of(copy).native(metadata)
    view_sig = run.signatures.of(g.view).dispatcher
    exprs = ", ".join(e.expr for e in translate(copy_sig.arguments(), view_sig.arguments()))
    returns = g.view.func.returns
    assert len(returns) == 1 and str(returns[0].type) in ("Tensor", "Tensor[]")
    if str(returns[0].type) == "Tensor":
        result = f"  return output.{_CLONE};"
    else:
        result = (
            f"  {copy_sig.returns_text} out_clone;\n"
            "  for (const auto i : c10::irange(output.size())) {\n"
            f"    out_clone.push_back(output[i].{_CLONE});\n"
            "  }\n"
            "  return out_clone;"
        )
    return f"""
{copy_sig.defn(name=metadata.kernel)} {{
  auto output = at::_ops::{g.view.func.name.unambiguous_name()}::call({exprs});
  {result}
}}
"""


def dispatcher_signature(
    run: AtenRun, f: NativeFunction, style: ArgumentStyle
) -> DispatcherSignature:
    """`f`'s dispatcher signature in the style of the code calling it (shared if its own)."""
    sigs = run.signatures.of(f)
    if sigs.style == style:
        return sigs.dispatcher
    return DispatcherSignature(f.func, style, memo=run.signatures.memo)


def _fresh_returns(func: FunctionSchema, var: str) -> list[str]:
    """The returns of `func` that alias no argument, read off its result `var`."""
    several = len(func.returns) > 1
    return [
        f"std::get<{i}>({var})" if several else var
        for i, name in enumerate(func.aliased_return_names())
        if name is None
    ]


def _kernel_name(g: NativeFunctionsGroup, base: str) -> str:
    return base + ("_symint" if g.out.func.has_symint() else "")


def _composite_functional(run: AtenRun, g: NativeFunctionsGroup) -> str | None:
    if "generated" not in g.functional.tags:
        return None
    target: NativeFunction | None = None
    for candidate in (g.inplace, g.mutable):
        if candidate is not None and "generated" not in candidate.tags:
            target = candidate
            break
    assert target is not None, f"no hand-written variant to derive {g.functional.func} from"
    style = ArgumentStyle.of(g.out)
    sig = dispatcher_signature(run, g.functional, style)
    target_sig = dispatcher_signature(run, target, style)
    context: list[Binding | Expr] = []
    clones, cloned = [], []
    pairs = zip(
        g.functional.func.schema_order_arguments(),
        target.func.schema_order_arguments(),
        strict=False,
    )
    for a, t in pairs:
        if t.is_write:
            clones.append(f"auto {a.name}_clone = clone_arg({a.name});")
            context.append(Expr(f"{a.name}_clone", dispatcher.argument_type(a, style=style)))
            cloned.append(f"{a.name}_clone")
        else:
            context.append(dispatcher.argument(a, style=style))
    exprs = ", ".join(e.expr for e in translate(context, target_sig.arguments()))
    assign = "auto output = " if target.func.returns else ""
    names = _fresh_returns(target.func, "output") + cloned
    clone_text = "\n".join(clones)
    return f"""
{sig.defn(name=_kernel_name(g, sig.name()))} {{
  {clone_text}
  {assign}at::_ops::{target.func.name.unambiguous_name()}::call({exprs});
  {return_statement(g.functional.func.returns, names, style)}
}}
"""


def _composite_out(run: AtenRun, g: NativeFunctionsGroup) -> str | None:
    if "generated" not in g.out.tags:
        return None
    style = ArgumentStyle.of(g.out)
    out_func, functional = g.out.func, g.functional.func
    sig = dispatcher_signature(run, g.out, style)
    target_sig = dispatcher_signature(run, g.functional, style)
    exprs = ", ".join(e.expr for e in translate(sig.arguments(), target_sig.arguments()))
    single = len(functional.returns) == 1

    def result(i: int) -> str:
        return "tmp_output" if single else f"std::get<{i}>(tmp_output)"

    copies = "\n".join(
        f"  resize_out_helper({a.name}, {result(i)});\n  copy_arg({a.name}, {result(i)});"
        for i, a in enumerate(out_func.arguments.out)
    )
    names = [
        name if name is not None else result(i)
        for i, name in enumerate(out_func.aliased_return_names())
    ]
    return f"""
{sig.defn(name=_kernel_name(g, out_func.name.unambiguous_name()))} {{
  auto tmp_output = at::_ops::{functional.name.unambiguous_name()}::call({exprs});
  {copies}
  {return_statement(out_func.returns, names, style)}
}}
"""


def _includes(functions: Sequence[NativeFunction]) -> str:
    return "\n".join(
        f"#include <ATen/ops/{f.root_name}_ops.h>\n#include <ATen/ops/{f.root_name}_native.h>"
        for f in functions
    )


def _env(run: AtenRun) -> dict[str, object]:
    view_groups, groups = run.spec.view_groups, run.spec.groups
    headers = [_includes([f for f in (g.view, g.view_copy) if f is not None]) for g in view_groups]
    for sg in groups:
        members = (sg.inplace, sg.mutable, sg.functional)
        headers.append(
            _includes([f for f in members if f is not None and "generated" not in f.tags])
        )
    view_copies = [_view_copy_kernel(run, g) for g in view_groups]
    functionals = [_composite_functional(run, g) for g in groups]
    outs = [_composite_out(run, g) for g in groups]
    return {
        "ops_headers": headers,
        "CompositeViewCopyKernel_Definitions": [k for k in view_copies if k is not None],
        "GeneratedCompositeFunctional_Definitions": [k for k in functionals if k is not None],
        "GeneratedCompositeOut_Definitions": [k for k in outs if k is not None],
    }


def emit_view_copy_kernels(run: AtenRun) -> Emitted:
    """CompositeViewCopyKernels.cpp (AtenPart.sources)."""
    outputs = run.outputs()
    outputs.cpu.add_template("CompositeViewCopyKernels.cpp", lambda: _env(run))
    return outputs.emitted()
