"""opgen: a fast, standalone operator code generator for PyTorch's spec language.

opgen reads `native_functions.yaml`, `tags.yaml` and `derivatives.yaml` into an
immutable, validated model, derives every calling convention's signature from it,
and renders targets from those signatures, byte for byte what torchgen writes.
The packages, from the command line down (no import runs back up):

cli                 the `opgen` command line: a thin table of targets and tools
targets             the generators: one package per target, all of one shape (`contract`)
tooling             commands that generate nothing: check, dump, diff, coverage
autograd            what derivatives.yaml means for each function (the autograd model)
python_bindings     which functions torch binds in Python, and how a binding is assembled
api                 the calling conventions (C++, dispatcher, native, Python, ExecuTorch, ...),
                    pure functions
spec                the spec language: YAML readers with locations, schemas, the whole model
pte                 reading ExecuTorch programs (.pte): their operators and kernel calls
building            setup.py's helpers: run opgen with its messages where pip shows them,
                    and build what it wrote (torch's CppExtension, or the project's CMake)

and the small pieces everything uses:

releases            the torch releases opgen reproduces, and each behaviour that changed
diagnostics         locations, `SpecError`, and rendering `file:line:col: error: ...`
counts              counts with their nouns: `1 finding`, `2 findings`
output              `OutputSet`: a root's files by relative path, rendered when written
writer              the one writer: atomic, only changed files, in parallel
template            `$name` templates, rendering exactly as torchgen's `CodeTemplate`
frozen              `@frozen`: frozen dataclasses, cheap to define and to construct
cached              `cached`: attributes of immutable objects computed on first use
forked              independent tasks in forked workers that inherit the built model
jobs                the `-j N` option
installed_torchgen  where the installed torchgen keeps its data, found without importing it
__main__            `python -m opgen` and the `opgen` command
"""

__version__ = "0.1.0"
