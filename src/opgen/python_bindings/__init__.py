"""The Python-binding policy: which functions torch binds, under which names, called how.

The calling convention itself (how a Python signature is parsed and typed) is
`opgen.api.python`; this package decides what is bound and how a binding is assembled,
as torchgen's `gen_python_functions.py` does. `opgen python` and `opgen pyi` share it.

bound      which functions get Python bindings, and in which module (`torch`, `Tensor`,
           `torch._C._nn`, ...): should_generate_py_binding and the namespace predicates
overloads  the overloads one Python name parses: deprecated signatures bound, out= forms
           grouped, sorted in the order the argument parser tries them
dispatch   the dispatch lambda of a binding and the parser's output expressions
"""
