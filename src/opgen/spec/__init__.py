"""PyTorch's operator spec language, read exactly as torchgen reads it.

Reading (errors are `SpecError`s at a file, line and column):

yaml              the YAML readers: values with source locations (subset reader, PyYAML)
syntax            pieces of the schema syntax shared by types, arguments and schemas
types             schema types and alias annotations: `Tensor(a!)?`, `int[2]`, `SymInt[]`
arguments         arguments and returns: `Tensor(a!) self`, `Scalar alpha=1`
schema            function schemas: `ns::name.overload(...) -> ...`, parse() and str() round-trip
keys              dispatch keys, dtypes, ufunc keys, schema kinds
tags              tags.yaml
precompute        the `precomputed:` and `ufunc_inner_loop:` sub-languages
entry             one native_functions.yaml entry to a NativeFunction and its kernels
entry_fields      typed access to an entry's keys, with errors at the key or value at fault
dispatch_table    an entry's `dispatch:` table: the kernel of each key, and its rules
native            NativeFunction, one operator, and its invariants
backend           BackendIndex / BackendMetadata: which kernel implements an operator for a key
autogen           the derived out= and functional variants `autogen:` asks for
groups            functional/inplace/out/mutable groups, and view groups
model             load_spec(): the whole validated Spec, with cross-entry checks and warnings
partial           reading only the entries some operators need

Other files read against a spec, and other dialects of the language:

derivatives       derivatives.yaml, in the custom-op library and PyTorch dialects
deprecated        deprecated.yaml: old Python argument orders
external_backend  an out-of-tree backend's YAML
executorch        ExecuTorch's kernel YAMLs (`op:`/`func:` entries, kernel keys)
selection         operator selection for selective builds
library           the custom-op library dialect (`opgen torch-library`)
torch_tags        PyTorch's own tags (at::Tag) by release, which library specs know
mlx               MLX extension specs, in two dialects
lowering          lowering specs: ATen operators computed by another framework (`opgen aten-mlx`)
compat            schema compatibility as PyTorch decides it (`opgen diff`)
"""

# The YAML reader first: its patterns compile when it is imported, and CPython 3.11 runs
# them up to 3x slower at some depths of the call stack (where its frame chunks are
# allocated and freed on every call), which the imports below would reach.
import opgen.spec.yaml.load  # noqa: F401
from opgen.spec.model import LoadOptions, Spec, load_spec

__all__ = ["LoadOptions", "Spec", "load_spec"]
