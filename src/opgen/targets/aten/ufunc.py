"""The ufunc kernels: `UfuncCPU_<op>.cpp`, `UfuncCPUKernel_<op>.cpp`, `UfuncCUDA_<op>.cu`.

Emitted with the sources (`AtenPart.sources`), by `emit_ufunc_kernels`. Every
structured group whose out= entry has `ufunc_inner_loop:` gets, for each of
the run's dispatch keys that is CPU or CUDA (in `options.dispatch_keys` order,
so `--backend-whitelist` can drop either):

- CPU: `UfuncCPU_<op>.cpp` (cpu set): the structured kernel `ufunc_<op>_CPU`,
  whose `impl()` calls the DispatchStub `<op>_stub`; and
  `UfuncCPUKernel_<op>.cpp` (cpu_vec set, compiled once per CPU capability):
  `<op>_kernel`, a dtype switch over `cpu_kernel`/`cpu_kernel_vec` calls of
  the inner loops, registered on the stub;
- CUDA: `UfuncCUDA_<op>.cu` (cuda set): one functor per CUDA ufunc key, the
  kernel's dtype switch (with CPU-scalar specialisations for binary
  operators), and an `impl()` calling the kernel directly.

Which loop serves a dtype: on CPU, for the scalar loop an explicit
`CPUScalar` entry wins over `ScalarOnly`, which wins over `Generic`; for the
vector loop `CPUVector` wins over `Generic`. Dtype cases come in order of first
appearance over that precedence. On CUDA, an explicit `CUDAFunctor*` entry
names a user-written functor; otherwise one is generated from the
`ScalarOnly`/`Generic` loop, whose names must agree. The on-self/on-other
functors exist only for operators with exactly two tensor arguments.

The UfuncCPU and UfuncCUDA files carry copies of the group's `meta()` struct
and native kernel struct, the same text as NativeMetaFunctions.h and
NativeFunctions.h (see `meta_declaration` and `native_declaration`).
"""

from __future__ import annotations

from collections.abc import Sequence

from opgen.api.structured import (
    StructuredImplSignature,
    argument_type,
    impl_arguments,
    meta_arguments,
)
from opgen.api.translate import translate
from opgen.api.types import (
    OPMATH_T,
    SCALAR_T,
    Binding,
    CType,
    Expr,
    NamedCType,
    VectorizedCType,
)
from opgen.api.ufunc import (
    StubSignature,
    UfuncSignature,
    UfunctorSignature,
    is_scalar_binding,
    kernel_name,
    scalar_expr,
)
from opgen.diagnostics import SpecError
from opgen.releases import Release
from opgen.spec.arguments import Argument
from opgen.spec.backend import BackendIndex
from opgen.spec.groups import NativeFunctionsGroup
from opgen.spec.keys import DispatchKey, ScalarType, UfuncKey
from opgen.spec.types import BaseTy, BaseType
from opgen.targets.aten.native_headers import export_macro, kernel_export_macro
from opgen.targets.aten.run import AtenOutputs, AtenRun
from opgen.targets.emitters import Emitted

U = UfuncKey
_VEC_SCALAR_T = VectorizedCType(SCALAR_T)


def emit_ufunc_kernels(run: AtenRun) -> Emitted:
    """Part `AtenPart.sources`: every ufunc kernel file of the run's CPU and CUDA keys."""
    groups = [g for g in run.spec.groups if g.out.ufunc_inner_loop]
    outputs = run.outputs()
    for key in run.options.dispatch_keys:
        if key is DispatchKey.CPU:
            for g in groups:
                _add_cpu(outputs, run, g)
        elif key is DispatchKey.CUDA:
            for g in groups:
                _add_cuda(outputs, run, g)
    return outputs.emitted()


def _add_cpu(outputs: AtenOutputs, run: AtenRun, g: NativeFunctionsGroup) -> None:
    name = str(g.functional.func.name.name)
    index = run.backend_index(DispatchKey.CPU)
    outputs.cpu.add_template(
        f"UfuncCPU_{name}.cpp",
        lambda: {
            "meta_declaration": meta_declaration(g),
            "native_declaration": native_declaration(g, index, run.release),
            "native_definitions": cpu_definitions(g),
        },
        template="UfuncCPU.cpp",
    )
    outputs.cpu_vec.add_template(
        f"UfuncCPUKernel_{name}.cpp",
        lambda: {"name": name, "native_definitions": cpu_kernel_definitions(g)},
        template="UfuncCPUKernel.cpp",
    )


def _add_cuda(outputs: AtenOutputs, run: AtenRun, g: NativeFunctionsGroup) -> None:
    name = str(g.functional.func.name.name)
    index = run.backend_index(DispatchKey.CUDA)
    loops_header = "hip" if run.options.rocm else "cuda"
    outputs.devices["cuda"].add_template(
        f"UfuncCUDA_{name}.cu",
        lambda: {
            "name": name,
            "cuda_headers": f"#include <ATen/native/{loops_header}/Loops.cuh>",
            "meta_declaration": meta_declaration(g),
            "native_declaration": native_declaration(g, index, run.release),
            "native_definitions": cuda_definitions(g),
        },
        template="UfuncCUDA.cu",
    )


# -- the copied declarations ------------------------------------------------------------


def meta_declaration(g: NativeFunctionsGroup) -> str:
    """The `at::meta::structured_<op>` struct, as NativeMetaFunctions.h declares it."""
    meta_name = str(g.functional.func.name).replace(".", "_")
    params = ", ".join(b.decl() for b in meta_arguments(g))
    parent = g.out.structured_inherits or "at::impl::MetaBase"
    precomputed = g.out.precomputed
    if precomputed is None:
        typedef, result, decl = "", "void", ""
    else:
        elements = [e for group in (*precomputed.replace.values(), precomputed.add) for e in group]
        flags = [e.name.upper() for e in elements]
        types = [argument_type(e, binds=e.name).cpp_type(strip_ref=True) for e in elements]
        template = ", ".join(f"bool {flag} = false" for flag in flags)
        setters = "\n".join(
            _precompute_setter(elements, flags, types, i) for i in range(len(elements))
        )
        fields = ";\n".join(f"{t} {e.name}" for t, e in zip(types, elements, strict=True))
        decl = (
            f"\n                template <{template}>\n"
            "                struct TORCH_API precompute_out {\n"
            f"                    {setters}\n"
            f"                    {fields};\n"
            "            };"
        )
        typedef = f"using meta_return_ty = precompute_out <{', '.join(['true'] * len(flags))}>;"
        result = "meta_return_ty"
    return (
        f"struct TORCH_API structured_{meta_name} : public {parent} {{\n"
        f"    {decl}\n"
        f"    {typedef}\n"
        f"    {result} meta({params});\n"
        "};\n"
    )


def _precompute_setter(
    elements: Sequence[Argument], flags: list[str], types: list[str], i: int
) -> str:
    """`precompute_out<..., true, ...> set_<name>(T value)`: sets one element, once."""
    returned = f"precompute_out<{', '.join([*flags[:i], 'true', *flags[i + 1 :]])}>"
    name = elements[i].name
    copies = [
        f"ret.{e.name} = value;" if j == i else f"ret.{e.name} = this->{e.name};"
        for j, e in enumerate(elements)
    ]
    block = "\n".join([f"{returned} ret;", *copies, "return ret;"])
    return (
        f"\n                    {returned} set_{name}({types[i]} value) {{\n"
        f'                        static_assert({flags[i]} == false, "{name} already set");\n'
        f"                        {block}\n"
        "                    }\n"
        "                "
    )


def native_declaration(g: NativeFunctionsGroup, index: BackendIndex, release: Release) -> list[str]:
    """The structured kernel's struct, as NativeFunctions.h declares it."""
    metadata = index.get_kernel(g)
    if metadata is None:
        return []
    assert metadata.structured, "ufunc kernels are generated structured (spec model)"
    key_macro = export_macro(index.dispatch_key, release, structured=True)
    prefix = "" if index.external else kernel_export_macro(key_macro, metadata.kernel) + " "
    meta_name = str(g.functional.func.name).replace(".", "_")
    params = ", ".join(b.decl() for b in impl_arguments(g))
    return [
        f"struct {prefix}structured_{metadata.kernel} : "
        f"public at::meta::structured_{meta_name} {{\n"
        f"void impl({params});\n"
        "};\n"
    ]


# -- CPU --------------------------------------------------------------------------------


def cpu_definitions(g: NativeFunctionsGroup) -> str:
    """The stub's declaration and definition, and the `impl()` that calls it."""
    stub = StubSignature(g)
    impl = StructuredImplSignature(g, kernel_name(g, DispatchKey.CPU))
    return (
        f"\n{stub.type_defn()};\n{stub.dispatch_decl()}\n{stub.dispatch_defn()};\n\n"
        f"{impl.defn()} {{\n  {stub.call(impl.arguments())};\n}}\n"
    )


def _cpu_loops(g: NativeFunctionsGroup) -> dict[ScalarType, dict[UfuncKey, UfuncSignature]]:
    """For each dtype (first appearance first), its scalar and (maybe) vector loop."""
    loops = g.out.ufunc_inner_loop
    by_dtype: dict[ScalarType, dict[UfuncKey, UfuncSignature]] = {}
    for key, compute_t, fallbacks in (
        (U.CPUScalar, SCALAR_T, (U.CPUScalar, U.ScalarOnly, U.Generic)),
        (U.CPUVector, _VEC_SCALAR_T, (U.CPUVector, U.Generic)),
    ):
        for source in fallbacks:
            loop = loops.get(source)
            if loop is None:
                continue
            for dtype in loop.supported_dtypes:
                chosen = by_dtype.setdefault(dtype, {})
                if key not in chosen:
                    chosen[key] = UfuncSignature(g, f"ufunc::{loop.name}", compute_t)
    return by_dtype


def cpu_kernel_definitions(g: NativeFunctionsGroup) -> str:
    """`<op>_kernel`: a dtype switch over the inner loops, registered on the stub."""
    stub = StubSignature(g)
    cases = "\n".join(
        _dispatch_case(dtype, _cpu_dtype_body(g, dtype, loops, stub.arguments()))
        for dtype, loops in _cpu_loops(g).items()
    )
    return (
        "\nnamespace {\n\n"
        f"{stub.kernel_defn()} {{\n"
        f'  AT_DISPATCH_SWITCH(iter.common_dtype(), "{stub.name}",\n'
        f"    {cases}\n"
        "  );\n}\n\n} // anonymous namespace\n\n"
        f"{stub.type_defn()};\n{stub.dispatch_decl()}\n"
        f"REGISTER_DISPATCH({stub.name}, &{stub.kernel_name})\n"
    )


def _dispatch_case(dtype: ScalarType, body: str) -> str:
    return f"\nAT_DISPATCH_CASE(at::ScalarType::{dtype},\n  [&]() {{\n    {body}\n  }}\n)\n"


def _cpu_dtype_body(
    g: NativeFunctionsGroup,
    dtype: ScalarType,
    loops: dict[UfuncKey, UfuncSignature],
    stub_params: Sequence[Binding],
) -> str:
    scalar_loop = loops.get(U.CPUScalar)
    if scalar_loop is None:
        raise SpecError(
            f"ufunc operator {g.out.func.name}: dtype {dtype} has a vector loop but no "
            "scalar loop (give it a CPUScalar, ScalarOnly or Generic loop)",
            g.out.loc,
        )
    vec_loop = loops.get(U.CPUVector)
    scalars = [b for b in stub_params if is_scalar_binding(b)]
    # Scalars are converted once, outside the lambdas (which capture them by value).
    lines = [f"auto _s_{b.name} = {b.name}.to<scalar_t>();" for b in scalars]
    ctx: list[Expr | Binding] = [scalar_expr(b, "_s_", SCALAR_T) for b in scalars]
    if vec_loop is not None:
        lines += [
            f"auto _v_{b.name} = at::vec::Vectorized<scalar_t>(_s_{b.name});" for b in scalars
        ]
        ctx += [scalar_expr(b, "_v_", _VEC_SCALAR_T) for b in scalars]
    tensors = [a for a in g.functional.func.arguments.flat_non_out if a.type.is_tensor_like()]
    for a in tensors:
        if a.type != BaseType(BaseTy.Tensor):
            raise SpecError(
                f"ufunc operator argument '{a.name}' must be a Tensor, not '{a.type}'", g.out.loc
            )

    def lambda_of(loop: UfuncSignature, ctype: CType) -> str:
        params = [Binding(a.name, NamedCType(a.name, ctype), a) for a in tensors]
        decls = ", ".join(b.decl() for b in params)
        return f"[=]({decls}) {{ return {loop.call([*ctx, *params])}; }}"

    body = "\n".join(lines)
    if vec_loop is None:
        return f"\n{body}\ncpu_kernel(iter,\n  {lambda_of(scalar_loop, SCALAR_T)}\n);\n"
    return (
        f"\n{body}\ncpu_kernel_vec(iter,\n  {lambda_of(scalar_loop, SCALAR_T)},\n"
        f"  {lambda_of(vec_loop, _VEC_SCALAR_T)}\n);\n"
    )


# -- CUDA -------------------------------------------------------------------------------

# Which tensor a CUDA functor takes in its constructor (as a CPU scalar).
_SCALAR_TENSOR_IDX = {U.CUDAFunctorOnSelf: 1, U.CUDAFunctorOnOther: 0, U.CUDAFunctor: None}
# The CPU-scalar specialisations: (iterator operand of the scalar, ctor tensor, functor key).
_SPECIALISATIONS = ((1, "self", U.CUDAFunctorOnOther), (2, "other", U.CUDAFunctorOnSelf))


def _is_binary(g: NativeFunctionsGroup) -> bool:
    args = g.functional.func.arguments.flat_non_out
    return sum(1 for a in args if a.type.is_tensor_like()) == 2


def _cuda_functors(
    g: NativeFunctionsGroup,
) -> tuple[dict[ScalarType, dict[UfuncKey, UfunctorSignature]], str]:
    """The functor of each CUDA key by dtype, and the text of the generated ones."""
    loops = g.out.ufunc_inner_loop
    keys = [U.CUDAFunctorOnSelf, U.CUDAFunctorOnOther, U.CUDAFunctor]
    if not _is_binary(g):
        for key in keys[:2]:
            if key in loops:
                raise SpecError(
                    f"ufunc operator {g.out.func.name}: {key} needs exactly two tensor arguments",
                    g.out.loc,
                )
        keys = [U.CUDAFunctor]
    by_dtype: dict[ScalarType, dict[UfuncKey, UfunctorSignature]] = {}
    texts: list[str] = []
    for key in keys:
        explicit = loops.get(key)
        if explicit is not None:  # a functor the user wrote
            functor = UfunctorSignature(g, _SCALAR_TENSOR_IDX[key], explicit.name)
            for dtype in explicit.supported_dtypes:
                by_dtype.setdefault(dtype, {})[key] = functor
            continue
        name, dtypes = _generic_loop(g)
        functor = UfunctorSignature(g, _SCALAR_TENSOR_IDX[key], f"{key}_{name}")
        for dtype in dtypes:
            by_dtype.setdefault(dtype, {})[key] = functor
        texts.append(_functor_text(g, functor, name))
    return by_dtype, "\n".join(texts)


def _generic_loop(g: NativeFunctionsGroup) -> tuple[str, dict[ScalarType, None]]:
    """The one loop name of `ScalarOnly` and `Generic`, and their dtypes together."""
    loops = g.out.ufunc_inner_loop
    present = [loops[k] for k in (U.ScalarOnly, U.Generic) if k in loops]
    if not present:
        raise SpecError(
            f"ufunc operator {g.out.func.name}: a CUDA functor needs a ScalarOnly or Generic loop",
            g.out.loc,
        )
    if len({loop.name for loop in present}) > 1:
        raise SpecError(
            f"ufunc operator {g.out.func.name}: ScalarOnly and Generic loops must have the "
            "same name for CUDA",
            g.out.loc,
        )
    dtypes = {dtype: None for loop in present for dtype in loop.supported_dtypes}
    return present[0].name, dtypes


def _functor_text(g: NativeFunctionsGroup, functor: UfunctorSignature, loop_name: str) -> str:
    loop = UfuncSignature(g, f"ufunc::{loop_name}", OPMATH_T)
    apply_ctx: list[Expr | Binding] = [*functor.fields(), *functor.arguments().apply]
    return (
        "\ntemplate <typename scalar_t>\n"
        f"struct {functor.name} {{\n"
        "  using opmath_t = at::opmath_type<scalar_t>;\n"
        f"  {functor.decl_fields()}\n"
        f"  {functor.inline_defn_ctor()}\n"
        f"  __device__ {functor.decl_apply()} {{\n"
        f"    return {loop.call(apply_ctx)};\n"
        "  }\n};\n"
    )


def _cuda_dtype_body(functors: dict[UfuncKey, UfunctorSignature], parent: Sequence[Binding]) -> str:
    body = "using opmath_t = at::opmath_type<scalar_t>;if (false) {}\n"
    for operand, ctor_tensor, key in _SPECIALISATIONS:
        functor = functors.get(key)
        if functor is None:
            continue
        scalar = Expr(f"iter.scalar_value<opmath_t>({operand})", NamedCType(ctor_tensor, OPMATH_T))
        args = ", ".join(e.expr for e in translate([*parent, scalar], functor.arguments().ctor))
        # The functor reads the scalar from `iter`, so it is built before the operand goes.
        body += (
            f"else if (iter.is_cpu_scalar({operand})) {{\n"
            f"  {functor.name}<scalar_t> ufunctor({args});\n"
            f"  iter.remove_operand({operand});\n"
            "  gpu_kernel(iter, ufunctor);\n}"
        )
    functor = functors[U.CUDAFunctor]
    args = ", ".join(e.expr for e in translate(parent, functor.arguments().ctor))
    return body + f"\nelse {{\n  gpu_kernel(iter, {functor.name}<scalar_t>({args}));\n}}\n    "


def cuda_definitions(g: NativeFunctionsGroup) -> str:
    """The functors, `<op>_kernel` with its dtype switch, and the `impl()` calling it."""
    by_dtype, functors = _cuda_functors(g)
    impl = StructuredImplSignature(g, kernel_name(g, DispatchKey.CUDA))
    parent = impl.arguments()
    for dtype, chosen in by_dtype.items():
        if U.CUDAFunctor not in chosen:
            raise SpecError(
                f"ufunc operator {g.out.func.name}: dtype {dtype} has no CUDAFunctor loop",
                g.out.loc,
            )
    cases = "\n".join(
        _dispatch_case(dtype, _cuda_dtype_body(chosen, parent))
        for dtype, chosen in by_dtype.items()
    )
    stub = StubSignature(g)
    return (
        f"\n{functors}\n\n{stub.type_defn()};\n{stub.dispatch_decl()}\n\n"
        f"{stub.kernel_defn()} {{\n"
        f'  AT_DISPATCH_SWITCH(iter.common_dtype(), "{impl.name}",\n'
        f"    {cases}\n"
        "  );\n}\n"
        f"REGISTER_DISPATCH({stub.name}, &{stub.kernel_name})\n\n"
        f"{impl.defn()} {{\n  {stub.direct_call(parent)};\n}}\n"
    )
