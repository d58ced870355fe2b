"""`opgen autograd`: the files torchgen's autograd generator writes from `derivatives.yaml`.

A drop-in for `python -m torchgen.packaged.autograd.gen_autograd NATIVE TAGS OUT
AUTOGRAD_DIR`: the same inputs (templates, `derivatives.yaml` and
`deprecated.yaml` from AUTOGRAD_DIR) and the same files, byte for byte. One
`AutogradRun` (run.py) holds the spec, the derivatives model matched to every
function (`opgen.autograd.model`) and the output set; each file family is a
module with `emit_<family>(run)`, listed in generate.py in torchgen's order.
"""
