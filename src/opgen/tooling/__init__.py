"""Tools over specs that generate no code: `opgen diff` and `opgen coverage`.

They sit where targets sit (they use `spec/` and never a target's internals):
`diff/` compares two specs operator by operator and judges every schema change
by PyTorch's compatibility rules (`opgen.spec.compat`); `coverage/` measures
how much of one operator set another implements, by tag and by tier.
"""
