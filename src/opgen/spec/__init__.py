"""PyTorch's operator spec language, read exactly as torchgen reads it.

load.py     YAML text -> values that remember their source locations
schema.py   function schemas: types, arguments, returns, names
keys.py     dispatch keys, dtypes and other enumerations
entry.py    one YAML entry -> NativeFunction (native.py) + its kernels (backend.py)
autogen.py  derived out= and functional variants
groups.py   operator groups and view groups
model.py    load_spec(): the whole validated Spec
"""

from opgen.spec.model import LoadOptions, Spec, load_spec

__all__ = ["LoadOptions", "Spec", "load_spec"]
