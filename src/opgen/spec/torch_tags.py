"""PyTorch's own operator tags (`at::Tag`), release by release.

A library spec may use any tag of the torch it is built against without a tags
file: these are the names each release's `tags.yaml` defines (a fact of
PyTorch, listed here so that opgen needs no torch to read a library). A tags
file given with the library adds to them.
"""

from __future__ import annotations

from opgen.releases import AUTOMATIC_OUT_INPLACE_TAGS, OUT_VARIANT_TAG, Release

# The tags every supported release defines.
_EVERY_RELEASE = (
    "inplace_view", "pt2_compliant_tag", "view_copy", "dynamic_output_shape",
    "data_dependent_output", "generated", "nondeterministic_seeded", "nondeterministic_bitwise",
    "needs_exact_strides", "needs_contiguous_strides", "needs_fixed_stride_order",
    "flexible_layout", "core", "pointwise", "maybe_aliasing_or_mutating", "cudagraph_unsafe",
    "reduction",
)  # fmt: skip


def torch_tags(release: Release) -> frozenset[str]:
    """The tags `release`'s `at::Tag` has."""
    tags = set(_EVERY_RELEASE)
    if release.has(OUT_VARIANT_TAG):
        tags.add("out_variant")
    if release.has(AUTOMATIC_OUT_INPLACE_TAGS):
        tags.update(("inplace", "out"))
    return frozenset(tags)
