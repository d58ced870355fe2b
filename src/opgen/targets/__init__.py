"""The targets: each turns a spec into files, and all have one shape.

contract               the shape of every command: `Target` (name, flags, options,
                       `read(options)`, `emit(model, options)`) and `Tool`, `RunOptions`
                       (where and how a run delivers), `Generated` (what it made), and
                       `deliver`, which writes or lists it
emitters               `Emitted`, and `run_emitters`, the one runner of emitter tables
registry               opgen's commands by name, and other packages' (`opgen.targets` entry
                       points)

One package per target; each has `command` (its flags and its `TARGET`), `generate`
(`read` and `emit`; `opgen.targets.contract.generate(target, options)` is the Python
API) and the modules of its files:

aten                   `opgen aten`: the files `python -m torchgen.gen` writes
autograd               `opgen autograd` and `opgen annotated-fn-args`: torchgen's gen_autograd
python                 `opgen python`: torchgen's gen_autograd_python (the Python bindings)
pyi                    `opgen pyi`: the .pyi stubs torch ships for its generated bindings
backend                `opgen backend`: torchgen's gen_backend_stubs
lazy                   `opgen lazy`: torchgen's gen_lazy_tensor
generate_code          `opgen generate-code`: PyTorch's generate_code.py, the four above that it
                       runs (and the ViewMeta bindings) from one load of the spec
torch_library          `opgen torch-library`: a PyTorch custom-op library
mlx                    `opgen mlx`: an MLX extension module
aten_mlx               `opgen aten-mlx`: PyTorch's ATen operators on MLX, from a lowering spec
executorch             `opgen executorch`: ExecuTorch's codegen.gen (kernel registrations, headers)
executorch_oplist      `opgen executorch-oplist` and `executorch-op-variants`: ExecuTorch's
                       gen_oplist and gen_selected_op_variants (operator selection)

and what several targets share:

autograd_dir           the inputs and options of the generators of torchgen's autograd directory
dispatch_registration  what every `Register<Key>.cpp` shares, in-tree or not
extension_flags        the flags of the extension targets (`--list-files`, `--list-sources`, ...)
line_directives        the `#line` directives around the extension targets' gradient formulas
torch_version          `--torch-version`, and finding the release from the tree without it

A target fills `opgen.output.OutputSet`s and never touches the file system.
"""
