"""`ViewMetaClasses.h`, `ViewMetaClasses.cpp` and `FunctionalInverses.h` (`--generate sources`).

Every view group whose view is not CompositeImplicitAutograd gets one
`ViewMeta` specialization for its view and one for its inplace view, if any
(see `opgen.api.functionalization`): the header declares the class (its
serializable tuple, constructors, `forward`/`reverse` and fields), the source
defines `forward` (the view, or its `_copy` variant when views are not
reapplied), `reverse` (the view's inverse) and, for multi-output views,
`to_out_index`. Since torch 2.15 (`SINGLE_OUTPUT_VIEW_REPLAY`) the `forward` of a
multi-output view builds only the output it stands for, one slice or select of
the base, instead of calling the view and indexing its result; only
`split.Tensor`, `split_with_sizes` and `unbind.int` have such a replay, and any
other multi-output view is an error. A selective build (one that does not
include all operators) gets no classes. `FunctionalInverses.h` declares the inverse of every such
view, whatever the selection; the inverses themselves are written by hand.

`ViewMetaClasses.cpp` includes the `_native.h` and `_ops.h` headers of every
view group's view and copy variant (per-operator builds only).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from opgen.api import functionalization as fapi
from opgen.api.translate import translate
from opgen.api.types import ArgumentStyle
from opgen.diagnostics import SpecError
from opgen.frozen import frozen
from opgen.releases import SINGLE_OUTPUT_VIEW_REPLAY, VIEW_META_BY_VALUE
from opgen.spec.groups import NativeFunctionsViewGroup
from opgen.spec.native import NativeFunction
from opgen.targets.aten.run import AtenRun
from opgen.targets.emitters import Emitted

# Emitted C++ as torchgen writes it (byte-identical output). The body of `forward`
# that builds output `out_index` of a multi-output view directly from `base`, by
# operator name; `{slice}` and `{select}` are the ops it calls (the view ops, or
# their `_copy` variants when views are not reapplied). Each output of these views
# is one slice or select along `dim`, so replaying the whole view to keep one
# output (quadratic over all outputs) is not needed.
_SINGLE_OUTPUT_FORWARD: Mapping[str, str] = MappingProxyType(
    {
        "split.Tensor": """\
    // split() chunk `i` is base[i * split_size : (i + 1) * split_size] along dim,
    // and slice clamps the end, which gives the short final chunk for free.
    auto start = split_size * out_index;
    return {slice}(base, dim, start, start + split_size, 1);""",
        "split_with_sizes": """\
    c10::SymInt start = 0;
    for (int64_t i = 0; i < out_index; ++i) {{
      start += split_sizes[i];
    }}
    return {slice}(base, dim, start, start + split_sizes[out_index], 1);""",
        "unbind.int": """\
    return {select}(base, dim, out_index);""",
    }
)


@frozen
class ViewMetaClass:
    """The `ViewMeta` specialization of one view (or inplace view) `f` of group `g`."""

    g: NativeFunctionsViewGroup
    f: NativeFunction
    # Fields hold tensors and scalars by value, not by const reference (`releases`).
    by_value: bool
    # The `forward` body that builds the one output directly (a multi-output view
    # since `SINGLE_OUTPUT_VIEW_REPLAY`), or None: `forward` calls the view.
    single_output_forward: str | None = None

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
        fields = fapi.attributes(func, style, by_value=self.by_value)
        tuple_types = ",\n".join(f"      {b.type} /* {b.name} */" for b in base + fields)
        from_tuple = ", ".join(f"std::get<{i}>(tpl)" for i in range(len(base) + len(extra)))
        params = ", ".join(b.decl() for b in base + extra)
        base_init = (
            f"has_symbolic_inputs, /*is_multi_output=*/{str(self.multi_output).lower()}, "
            f"/*is_as_strided=*/{str(str(func.name) == 'as_strided').lower()}, "
            f"/*out_index=*/{self.out_index}"
        )
        exprs = translate(
            extra, fields, allow_expensive_conversions=True, copy_tensors=self.by_value
        )
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
        fields = fapi.attributes(func, style, by_value=self.by_value)
        context = [fapi.BASE, *fapi.base_ctor_arguments(func), *fields]
        if is_reverse:
            context.append(fapi.MUTATED_VIEW)
        args = ", ".join(e.expr for e in translate(context, goals, method=False))
        index = f"[{self.out_index}]" if not is_reverse and self.multi_output else ""
        return f"{op}({args}){index}"

    def forward_body(self, *, reapply_views: bool) -> str:
        """One arm of `forward`: the view (or its copy variant) computes the output."""
        replay = self.single_output_forward
        if replay is None:
            return f"    return {self.call(is_reverse=False, reapply_views=reapply_views)};"
        if reapply_views:
            return replay.format(
                slice="at::_ops::slice_Tensor::call", select="at::_ops::select_int::call"
            )
        return replay.format(
            slice="at::_ops::slice_copy_Tensor::call", select="at::_ops::select_copy_int::call"
        )

    def impl(self) -> list[str]:
        name = self.name
        functions = [
            f"""
at::Tensor {name}::forward(const at::Tensor& base) {{
  if (reapply_views) {{
{self.forward_body(reapply_views=True)}
  }} else {{
{self.forward_body(reapply_views=False)}
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
    """The specializations a run generates, in view-group order; raises SpecError for
    a multi-output view without a single-output replay (since 2.15)."""
    if not run.selection.include_all_operators:
        return []
    release = run.release
    by_value = release.has(VIEW_META_BY_VALUE)
    replays = release.has(SINGLE_OUTPUT_VIEW_REPLAY)
    return [
        ViewMetaClass(g, f, by_value, _single_output_forward(f) if replays else None)
        for g in run.spec.view_groups
        if not g.composite
        for f in (g.view, g.view_inplace)
        if f is not None
    ]


def _single_output_forward(f: NativeFunction) -> str | None:
    if not fapi.is_multi_output(f.func):
        return None
    name = str(f.func.name)
    replay = _SINGLE_OUTPUT_FORWARD.get(name)
    if replay is None:
        # A new multi-output view would silently keep replaying every output.
        raise SpecError(
            f"'{name}' is a multi-output view, but functionalization can rebuild one "
            f"output at a time only for {', '.join(_SINGLE_OUTPUT_FORWARD)}",
            f.schema_location(0, len(name)),
        )
    return replay


def view_group_op_headers(g: NativeFunctionsViewGroup) -> list[str]:
    """The per-operator headers of a view group's view and copy variant."""
    headers = []
    for f in (g.view, g.view_copy):
        if f is not None:
            headers.append(f"#include <ATen/ops/{f.root_name}_native.h>")
            headers.append(f"#include <ATen/ops/{f.root_name}_ops.h>")
    return headers


def emit_view_meta(run: AtenRun) -> Emitted:
    """ViewMetaClasses.h, ViewMetaClasses.cpp, FunctionalInverses.h (AtenPart.sources)."""
    outputs = run.outputs()
    out = outputs.cpu

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
    return outputs.emitted()
