"""opgen: a fast, standalone operator code generator for PyTorch's spec language.

opgen reads `native_functions.yaml` and `tags.yaml` into an immutable,
validated model (`opgen.spec`), derives every calling convention's signature
from it (`opgen.api`), and renders targets from those signatures. Bad input is
reported as located diagnostics (`opgen.diagnostics`); `opgen.cli` is the
command line.
"""

__version__ = "0.1.0"
