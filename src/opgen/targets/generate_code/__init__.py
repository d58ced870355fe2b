"""`opgen generate-code`: what PyTorch's `tools/setup_helpers/generate_code.py` writes.

A drop-in for the script a PyTorch build runs after ATen's codegen. It runs the
autograd, Python-binding and annotated_fn_args generators (`opgen.targets.autograd`,
`opgen.targets.python`), the ViewMeta bindings (`opgen.targets.python.
view_meta_bindings`) and optionally the TorchScript lazy backend
(`opgen.targets.lazy`), each over the same spec and derivatives, read once: each
target's own `read` takes them, and its `emit` makes its files.

command           the flags (generate_code.py's, and opgen's), and `TARGET`
options           GenerateCodeOptions: the flags, and the directories they imply
generate          `read` (one load of the spec, every target's model), and `emit`
"""
