"""`opgen pyi`: the `.pyi` stubs of torch's generated Python bindings.

torch ships type stubs for the bindings generated from the spec; PyTorch's
`tools/pyi/gen_pyi.py` writes them. This target writes the same declarations:

- `hints` derives the stubs the spec gives (torch functions, Tensor methods,
  structseq classes) from the API layers (`api/python.py`, `api/pyi.py`,
  `python_bindings/overloads.py`, `python_bindings/bound.py`);
- `torch_functions`, `tensor_methods`, `nn_functions` and `return_types` hold
  what upstream writes by hand, as data: declarations, the names whose
  derived stubs are left out, each file's imports;
- `docs` reads the docstrings from torch's docs modules with `ast`;
- `stubs` renders declarations, overload sets and docstrings; `generate`
  reads the inputs (`read`) and lays out the files with opgen's own templates
  (`templates/`), an emitter per file family (`emit`); `options`
  holds the flags (PyiOptions); `command` is the command line and its `TARGET`.
"""
