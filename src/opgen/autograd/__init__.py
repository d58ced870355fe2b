"""The autograd model: what `derivatives.yaml` means for each function of the spec.

`opgen.spec.derivatives` reads the file's structure and names; this package gives the
formulas their meaning in the C++ API's terms, once per run, for the targets that
generate autograd code (`opgen autograd`, `opgen python`). Names follow torchgen's
(`DifferentiabilityInfo`, `load_derivatives`, `match_differentiability_info`), so a
reader of torchgen finds each piece where the name says.

model                the classes: DifferentiabilityInfo, Derivative, ForwardDerivative,
                     SavedAttribute, NativeFunctionWithDifferentiabilityInfo, DerivativeInfos
load_derivatives     derivatives.yaml entries to DifferentiabilityInfos (torchgen's
                     load_derivatives.py): formulas, saved values, forward formulas
saved_values         what a backward node saves, inferred from a formula's text
forward_derivatives  `auto_element_wise` / `auto_linear` expanded, and what forward formulas use
foreach_derivatives  the infos of foreach functions, derived from the operator each loops over
match                every function paired with the infos it uses (match_differentiability_info)
backward_nodes       what each backward node holds (Functions.h/.cpp, python_functions.cpp)
views                which operators return views, autograd's hand-kept tables
tracing              which operator calls a JIT trace records
"""
