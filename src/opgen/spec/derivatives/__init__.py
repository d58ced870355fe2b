"""`derivatives.yaml`: gradient formulas per operator, in two dialects.

An entry names an operator by its schema and gives formulas, in PyTorch's
derivatives.yaml syntax:

    - name: mul.Tensor(Tensor self, Tensor other) -> Tensor
      self: mul_tensor_backward(grad, other, self.scalar_type())
      other: mul_tensor_backward(grad, self, other.scalar_type())
      result: other_t * self_p + self_t * other_p

A key lists the inputs its backward formula computes the gradients of (one, or
several separated by commas, for a formula that returns a tuple), or the
outputs a forward formula computes the tangents of (`result`, `result0`, ...
or the outputs' names). The three dialects (`Dialect`) share this reader:

- `Dialect.LIBRARY`, the custom-op libraries of `opgen torch-library`: names
  may carry the namespace and are matched by operator name, and only backward
  formulas of tensor inputs are allowed; the target decides the formulas'
  language (C++ or Python). An entry `- include: mylib/helpers.h` names a
  header the C++ formulas need (`FormulaHeader`).
- `Dialect.MLX`, the extensions of `opgen mlx`: the library's format, where a
  key names one array input and an entry may name its operator without the
  schema (`- name: add`); no `include:` (formulas call `mlx::core`). An MLX
  spec's inline `grad:` mappings are read by the same rules (`mlx_formulas`).
- `Dialect.TORCH`, PyTorch's own file (`opgen autograd`): exact schemas,
  forward formulas (`auto_element_wise`, `auto_linear`), `non_differentiable`
  inputs, `output_differentiability` conditions and `dispatch:` tables of
  formulas per autograd key. What the C++ formulas mean (saved values, the
  backward nodes) is the API layer's business: `opgen.autograd.load_derivatives`.

The reader checks the structure and the names; every mistake is a located
`SpecError`. An entry's operator is whatever the caller's operators are
(`Differentiable`: a namespace and a schema; a `NativeFunction`, an MLX operator).
Modules: `entry` (the model), `reader` (YAML to entries),
`operators` (which operator an entry names), and the rules of each dialect's
formula keys (`library_rules`, `torch_rules`).
"""

from opgen.spec.derivatives.entry import (
    DEFAULT_KEY,
    DerivativesEntry,
    DerivativesFile,
    Dialect,
    Differentiable,
    Formula,
    FormulaHeader,
    differentiable_inputs,
    output_names,
    uses,
)
from opgen.spec.derivatives.reader import (
    AUTOGRAD_KEYS,
    load_library_derivatives,
    mlx_formulas,
    read_derivatives,
)

__all__ = [
    "AUTOGRAD_KEYS",
    "DEFAULT_KEY",
    "DerivativesEntry",
    "DerivativesFile",
    "Dialect",
    "Differentiable",
    "Formula",
    "FormulaHeader",
    "differentiable_inputs",
    "load_library_derivatives",
    "mlx_formulas",
    "output_names",
    "read_derivatives",
    "uses",
]
