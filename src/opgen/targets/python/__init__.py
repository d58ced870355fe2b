"""`opgen python`: the Python bindings torchgen's `gen_autograd_python` writes.

A drop-in for `torchgen.packaged.autograd.gen_autograd.gen_autograd_python(NATIVE,
TAGS, OUT, AUTOGRAD_DIR)`, which upstream has no command line for: the same
inputs (templates, `derivatives.yaml` and `deprecated.yaml` from AUTOGRAD_DIR)
and the same files, byte for byte. One `PythonRun` (run.py) holds the spec,
the derivatives model and the output set; each file family is a module with
`emit_<family>(run)`, listed in generate.py in torchgen's order.
"""
