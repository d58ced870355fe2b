"""Spec rules that depend on the torch release the spec is read for (`opgen.releases`).

Each case is a small spec written beside its check. Under a release whose rules
reject it, the exact diagnostics of `opgen check --torch-version X.Y` are given
inline, as in the malformed-spec corpus (`tests/malformed/`, with the spec's
directory written `$DIR`); under a release whose rules accept it, `load_spec`
with that release reads it.

- `PHILOX_NOT_RANDOM` (2.15): an operator whose name has 'rand' in it is not
  random by its name alone when the name also has '_philox_'; a Generator
  argument or a dropout argument still calls for `nondeterministic_seeded`.
- `AUTOCAST_XPU_KEY` (2.13): before it, AutocastXPU is no dispatch key at all.
- `AUTOMATIC_OUT_INPLACE_TAGS` (2.13): from it on, out= and inplace operators,
  written or derived, are tagged `out` and `inplace`; before it, only as written.
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.diagnostics import SpecError
from opgen.releases import Release
from opgen.spec import LoadOptions, load_spec

TAGS = Path(__file__).parents[1] / "malformed" / "tags.yaml"
RELEASE_2_12 = Release(2, 12)
RELEASE_2_13 = Release(2, 13)
RELEASE_2_14 = Release(2, 14)
RELEASE_2_15 = Release(2, 15)

PHILOX_RAND = """\
- func: _philox_rand(Tensor key, SymInt[] size) -> Tensor
  dispatch:
    CPU: _philox_rand
"""

PHILOX_RAND_WITH_GENERATOR = """\
- func: _philox_rand.generator(Tensor key, SymInt[] size, *, Generator? generator) -> Tensor
  dispatch:
    CPU: _philox_rand_generator
"""

PHILOX_WITH_DROPOUT = """\
- func: _philox_mask(Tensor key, float dropout_p) -> Tensor
  dispatch:
    CPU: _philox_mask
"""


def write_spec(directory: Path, text: str) -> Path:
    path = directory / "native_functions.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def check(spec: Path, release: Release) -> tuple[int, str]:
    """`opgen check` of the spec under `release`: the status and stderr (`$DIR` for its
    directory)."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["check", str(spec), "--tags", str(TAGS), "--torch-version", str(release)]
    status = main(argv, out, err)
    return status, err.getvalue().replace(str(spec.parent), "$DIR")


def load(spec: Path, release: Release) -> None:
    load_spec(str(spec), str(TAGS), LoadOptions(release=release))


def test_philox_rand_without_the_tag_is_rejected_by_2_14(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, PHILOX_RAND)
    assert check(spec, RELEASE_2_14) == (
        1,
        "$DIR/native_functions.yaml:1:9: error: '_philox_rand' looks random (its name, a "
        "dropout argument or a Generator argument says so) but is not tagged "
        "'nondeterministic_seeded'\n"
        "  - func: _philox_rand(Tensor key, SymInt[] size) -> Tensor\n"
        "          ^~~~~~~~~~~~\n",
    )
    with pytest.raises(SpecError) as raised:
        load(spec, RELEASE_2_14)
    assert raised.value.location is not None
    assert (raised.value.location.line, raised.value.location.col) == (1, 9)


def test_philox_rand_without_the_tag_is_accepted_by_2_15(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, PHILOX_RAND)
    load(spec, RELEASE_2_15)
    assert check(spec, RELEASE_2_15) == (0, "")


def test_a_philox_operator_with_a_generator_still_needs_the_tag_in_2_15(
    tmp_path: Path,
) -> None:
    spec = write_spec(tmp_path, PHILOX_RAND_WITH_GENERATOR)
    assert check(spec, RELEASE_2_15) == (
        1,
        "$DIR/native_functions.yaml:1:9: error: '_philox_rand.generator' looks random (its "
        "name, a dropout argument or a Generator argument says so) but is not tagged "
        "'nondeterministic_seeded'\n"
        "  - func: _philox_rand.generator(Tensor key, SymInt[] size, *, Generator? generator) "
        "-> Tensor\n"
        "          ^~~~~~~~~~~~~~~~~~~~~~\n",
    )


def test_a_philox_operator_with_a_dropout_argument_still_needs_the_tag_in_2_15(
    tmp_path: Path,
) -> None:
    spec = write_spec(tmp_path, PHILOX_WITH_DROPOUT)
    assert check(spec, RELEASE_2_15) == (
        1,
        "$DIR/native_functions.yaml:1:9: error: '_philox_mask' looks random (its name, a "
        "dropout argument or a Generator argument says so) but is not tagged "
        "'nondeterministic_seeded'\n"
        "  - func: _philox_mask(Tensor key, float dropout_p) -> Tensor\n"
        "          ^~~~~~~~~~~~\n",
    )


AUTOCAST_XPU = """\
- func: foo(Tensor self) -> Tensor
  dispatch:
    CPU, AutocastXPU: foo
"""


def test_autocast_xpu_is_an_unknown_key_to_2_12(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, AUTOCAST_XPU)
    assert check(spec, RELEASE_2_12) == (
        1,
        "$DIR/native_functions.yaml:3:10: error: unknown dispatch key 'AutocastXPU'\n"
        "      CPU, AutocastXPU: foo\n"
        "           ^~~~~~~~~~~\n",
    )


def test_autocast_xpu_is_a_key_without_kernels_to_2_13(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, AUTOCAST_XPU)
    assert check(spec, RELEASE_2_13) == (
        1,
        "$DIR/native_functions.yaml:3:10: error: dispatch key 'AutocastXPU' cannot have "
        "kernels in native_functions.yaml\n"
        "      CPU, AutocastXPU: foo\n"
        "           ^~~~~~~~~~~\n",
    )


SCALE = """\
- func: scale_(Tensor(a!) self, float s) -> Tensor(a!)
  dispatch:
    CPU: scale_
  autogen: scale, scale.out
"""


def tags_by_name(spec: Path, release: Release) -> dict[str, list[str]]:
    loaded = load_spec(str(spec), str(TAGS), LoadOptions(release=release))
    return {str(f.func.name): sorted(f.tags) for f in loaded.functions}


def test_out_and_inplace_operators_are_tagged_so_from_2_13(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, SCALE)
    assert tags_by_name(spec, RELEASE_2_13) == {
        "scale_": ["inplace"],
        "scale.out": ["generated", "out"],
        "scale": ["generated"],
    }


def test_before_2_13_only_their_own_tags(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, SCALE)
    assert tags_by_name(spec, RELEASE_2_12) == {
        "scale_": [],
        "scale.out": ["generated"],
        "scale": ["generated"],
    }
