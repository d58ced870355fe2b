"""`ViewMetaClasses.h`, `ViewMetaClasses.cpp` and `FunctionalInverses.h` (`--generate sources`).

Every view group whose view is not CompositeImplicitAutograd gets one
`ViewMeta` specialization for its view and one for its inplace view, if any
(see `opgen.api.functionalization`): the header declares the class (its
serializable tuple, constructors, `forward`/`reverse` and fields), the source
defines `forward` (the view, or its `_copy` variant when views are not
reapplied), `reverse` (the view's inverse) and, for multi-output views,
`to_out_index`. A selective build (one that does not include all operators)
gets no classes. `FunctionalInverses.h` declares the inverse of every such
view, whatever the selection; the inverses themselves are written by hand.

`ViewMetaClasses.cpp` includes the `_native.h` and `_ops.h` headers of every
view group's view and copy variant (per-operator builds only).
"""

from __future__ import annotations

from opgen.api import functionalization as fapi
from opgen.api.translate import translate
from opgen.api.types import ArgumentStyle
from opgen.frozen import frozen
from opgen.spec.groups import NativeFunctionsViewGroup
from opgen.spec.native import NativeFunction
from opgen.targets.aten.run import AtenRun


@frozen
class ViewMetaClass:
    """The `ViewMeta` specialization of one view (or inplace view) `f` of group `g`."""

    g: NativeFunctionsViewGroup
    f: NativeFunction

    @property
    def style(self) -> ArgumentStyle:
        return ArgumentStyle.of(self.f)

    @property
    def multi_output(self) -> bool:
        return fapi.is_multi_output(self.f.func)

    @property
    def out_index(self) -> str:
        return "out_index" if self.multi_output else "0"

    @property
    def name(self) -> str:
        return fapi.classname(self.f.func)

    def decl(self) -> str:
        func, style, name = self.f.func, self.style, self.name
        base = fapi.base_ctor_arguments(func)
        extra = fapi.extra_ctor_arguments(func, style)
        fields = fapi.attributes(func, style)
        tuple_types = ",\n".join(f"      {b.type} /* {b.name} */" for b in base + fields)
        from_tuple = ", ".join(f"std::get<{i}>(tpl)" for i in range(len(base) + len(extra)))
        params = ", ".join(b.decl() for b in base + extra)
        base_init = (
            f"has_symbolic_inputs, /*is_multi_output=*/{str(self.multi_output).lower()}, "
            f"/*is_as_strided=*/{str(str(func.name) == 'as_strided').lower()}, "
            f"/*out_index=*/{self.out_index}"
        )
        exprs = translate(extra, fields, method=False, allow_expensive_conversions=True)
        inits = ",\n".join(f"        {e.type.name}({e.expr})" for e in exprs)
        tuple_values = ", ".join(b.name for b in base + fields)
        field_decls = "\n".join(f"  {b.decl()};" for b in fields)
        to_out_index = ""
        if self.multi_output:
            to_out_index = "  std::shared_ptr<ViewMeta> to_out_index(int64_t out_idx) override;"
        return f"""
struct TORCH_API {name} : public ViewMeta {{
  FUNCTIONALIZATION_VIEWMETA_NAME({name})
  FUNCTIONALIZATION_VIEWMETA_SERIALIZABLE_TUPLE(\n{tuple_types});

  {name}(const SerializableTuple& tpl)
      : {name}({from_tuple}) {{}}

  {name}({params})
      : at::functionalization::ViewMeta({base_init}),
{inits} {{}}

  Tensor forward(const Tensor& base) override;
  Tensor reverse(const Tensor& base, const Tensor& mutated_view) override;
{to_out_index}

  SerializableTuple to_serializable_tuple() {{
    return std::make_tuple({tuple_values});
  }}

{field_decls}
}};
"""

    def call(self, *, is_reverse: bool, reapply_views: bool) -> str:
        """The call `forward` or `reverse` makes, from the fields and parameters in scope."""
        g, func, style = self.g, self.f.func, self.style
        assert g.view_copy is not None
        if is_reverse:
            op = fapi.reverse_name(g.view, include_namespace=True)
        else:
            op = fapi.forward_name(g, reapply_views=reapply_views)
        goals = fapi.op_arguments(g.view_copy.func, style, is_reverse=is_reverse)
        context = [fapi.BASE, *fapi.base_ctor_arguments(func), *fapi.attributes(func, style)]
        if is_reverse:
            context.append(fapi.MUTATED_VIEW)
        args = ", ".join(e.expr for e in translate(context, goals, method=False))
        index = f"[{self.out_index}]" if not is_reverse and self.multi_output else ""
        return f"{op}({args}){index}"

    def impl(self) -> list[str]:
        name = self.name
        functions = [
            f"""
at::Tensor {name}::forward(const at::Tensor& base) {{
  if (reapply_views) {{
    return {self.call(is_reverse=False, reapply_views=True)};
  }} else {{
    return {self.call(is_reverse=False, reapply_views=False)};
  }}
}}""",
            f"""
at::Tensor {name}::reverse(const at::Tensor& base, const Tensor& mutated_view) {{
  return {self.call(is_reverse=True, reapply_views=True)};
}}""",
        ]
        if self.multi_output:
            new = fapi.new_view_meta(self.f.func, self.style, "out_index")
            functions.append(f"""
std::shared_ptr<at::functionalization::ViewMeta> {name}::to_out_index(int64_t out_index) {{
  return {new};
}}
""")
        return functions


def view_meta_classes(run: AtenRun) -> list[ViewMetaClass]:
    """The specializations a run generates, in view-group order."""
    if not run.selection.include_all_operators:
        return []
    return [
        ViewMetaClass(g, f)
        for g in run.spec.view_groups
        if not g.composite
        for f in (g.view, g.view_inplace)
        if f is not None
    ]


def view_group_op_headers(g: NativeFunctionsViewGroup) -> list[str]:
    """The per-operator headers of a view group's view and copy variant."""
    headers = []
    for f in (g.view, g.view_copy):
        if f is not None:
            headers.append(f"#include <ATen/ops/{f.root_name}_native.h>")
            headers.append(f"#include <ATen/ops/{f.root_name}_ops.h>")
    return headers


def emit_view_meta(run: AtenRun) -> None:
    """ViewMetaClasses.h, ViewMetaClasses.cpp, FunctionalInverses.h (Generate.sources)."""
    out = run.outputs.cpu

    def inverses() -> dict[str, object]:
        decls = [
            fapi.view_inverse_decl(g, ArgumentStyle.of(g.view))
            for g in run.spec.view_groups
            if not g.view.has_composite_implicit_autograd_kernel
        ]
        return {"view_inverse_declarations": decls}

    def header() -> dict[str, object]:
        return {"view_meta_declarations": [c.decl() for c in view_meta_classes(run)]}

    def source() -> dict[str, object]:
        impls = [text for c in view_meta_classes(run) for text in c.impl()]
        headers = [h for g in run.spec.view_groups for h in view_group_op_headers(g)]
        return {"view_meta_implementations": impls, "op_headers": headers}

    out.add_template("FunctionalInverses.h", inverses)
    out.add_template("ViewMetaClasses.h", header)
    out.add_template("ViewMetaClasses.cpp", source)
