"""Lowering specs: PyTorch's ATen operators on another framework, in opgen's own YAML.

A lowering spec names ATen operators of a torch release's `native_functions.yaml` and says
only what the framework must compute for each: a call, a short body, or a composition of
other lowered operators. Everything the schema says (argument names, types, defaults,
keyword-only markers, overloads, out= and in-place variants) comes from the spec model
of that release, and the operator's tags choose the shared semantics its lowering gets
(`pointwise`: PyTorch's type promotion and broadcasting; `reduction`: dimensions and
dtypes). `opgen aten-mlx` generates MLX functions from one.

model      LoweringSpec, Lowering (one ATen overload and its body), LeftOut, Promotion
reader     `read_lowering(paths, spec, mlx_names)`: the files read against the spec, with
           every mistake a located error
bodies     the bodies checked: names, compositions, arguments no body reads
compose    the composition language: calls of lowered operators, read into a tree
"""
