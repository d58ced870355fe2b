"""Which torch release a run is for: `--torch-version`, else the tree, else the installed torch.

Each way of finding the release gets a tree laid out as PyTorch lays it out: a
checkout (`version.txt` beside `aten/`), an unzipped wheel (`torch/version.py` beside
`torchgen/`), an installed one (`torch-X.dist-info` beside `torchgen/`).
"""

from __future__ import annotations

import io
import json
from importlib import metadata
from pathlib import Path

import pytest

from opgen.cli import main
from opgen.releases import (
    CHANGES,
    NEWEST,
    NODE_CREATION_HOOKS,
    OLDEST,
    SUPPORTED,
    Release,
    parse_release,
)
from opgen.targets.contract import UsageError
from opgen.targets.torch_version import choose_release, tree_version


def spec_in(root: Path, *parts: str) -> Path:
    native = root.joinpath(*parts, "native_functions.yaml")
    native.parent.mkdir(parents=True)
    native.write_text("- func: foo(Tensor self) -> Tensor\n")
    (native.parent / "tags.yaml").write_text("- tag: core\n  desc: core\n")
    return native


@pytest.mark.parametrize(
    ("text", "release"),
    [
        ("2.14", Release(2, 14)),
        ("2.14.1", Release(2, 14)),
        ("2.16.0a0+git3f2e1b", Release(2, 16)),
        ("2.13.0+cpu", Release(2, 13)),
        ("main", None),
    ],
)
def test_versions_name_minor_releases(text: str, release: Release | None) -> None:
    assert parse_release(text) == release


def test_a_change_belongs_to_the_releases_from_its_own_until_the_one_that_drops_it() -> None:
    assert not Release(2, 13).has(NODE_CREATION_HOOKS)
    assert Release(2, 14).has(NODE_CREATION_HOOKS)
    assert Release(2, 15).has(NODE_CREATION_HOOKS)
    for change in CHANGES:
        assert change.until is None or change.since.key < change.until.key, change.name


def test_the_flag_wins_over_the_tree(tmp_path: Path) -> None:
    (tmp_path / "version.txt").write_text("2.12.0a0\n")
    native = spec_in(tmp_path, "aten", "src", "ATen", "native")
    assert choose_release("2.14.1", [str(native)]).release == Release(2, 14)


def test_a_checkout_says_its_release_in_version_txt(tmp_path: Path) -> None:
    (tmp_path / "version.txt").write_text("2.14.0a0\n")
    native = spec_in(tmp_path, "aten", "src", "ATen", "native")
    assert tree_version(str(native)) == ("2.14.0a0", str(tmp_path / "version.txt"))
    assert choose_release(None, [str(native)]) == choose_release("2.14", [])


def test_an_unzipped_wheel_says_it_in_torch_version_py(tmp_path: Path) -> None:
    native = spec_in(tmp_path, "torchgen", "packaged", "ATen", "native")
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "version.py").write_text("__version__ = '2.15.0'\ngit_version = 'x'\n")
    assert choose_release(None, [None, str(native)]).release == Release(2, 15)


def test_an_installed_wheel_says_it_in_its_dist_info(tmp_path: Path) -> None:
    native = spec_in(tmp_path, "torchgen", "packaged", "ATen", "native")
    (tmp_path / "torch-2.13.0.dist-info").mkdir()
    assert choose_release(None, [str(native)]).release == Release(2, 13)


def test_elsewhere_the_installed_torch_says_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    native = spec_in(tmp_path, "spec")
    monkeypatch.setattr(metadata, "version", lambda name: "2.14.1+cpu")
    assert choose_release(None, [str(native)]).release == Release(2, 14)


def test_without_any_the_newest_with_a_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    native = spec_in(tmp_path, "spec")
    monkeypatch.setattr(metadata, "version", not_installed)
    choice = choose_release(None, [str(native)])
    assert choice.release == NEWEST
    assert choice.notice == (
        "opgen: note: no torch release found (no --torch-version, no version.txt or torch "
        f"wheel around the inputs, no installed torch); generating for torch {NEWEST}, "
        "the newest supported"
    )


def test_a_newer_release_generates_as_the_newest_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "version.txt").write_text("2.16.0a0\n")
    native = spec_in(tmp_path, "aten", "src", "ATen", "native")
    choice = choose_release(None, [str(native)])
    assert choice.release == NEWEST
    assert choice.notice == (
        f"opgen: warning: torch 2.16.0a0 (from {tmp_path / 'version.txt'}) is newer than the "
        f"newest release opgen knows, {NEWEST}; generating as {NEWEST}"
    )


def test_an_older_release_is_a_usage_error_naming_the_range() -> None:
    with pytest.raises(UsageError) as error:
        choose_release("2.9.1", [])
    supported = ", ".join(map(str, SUPPORTED))
    assert error.value.problems == (
        f"torch 2.9.1 (from --torch-version) is older than the releases opgen supports: "
        f"{supported}",
    )
    assert str(SUPPORTED[0]) == str(OLDEST)


def test_a_flag_that_is_no_release_is_a_usage_error() -> None:
    with pytest.raises(UsageError) as error:
        choose_release("latest", [])
    assert error.value.problems == ("--torch-version: 'latest' is not a release (X.Y or X.Y.Z)",)


@pytest.mark.parametrize(
    "command",
    [
        ["aten", "-s", "ATEN"],
        ["autograd", "NATIVE", "TAGS", "OUT", "AUTOGRAD"],
        ["python", "NATIVE", "TAGS", "OUT", "AUTOGRAD"],
        ["annotated-fn-args", "NATIVE", "TAGS", "OUT", "AUTOGRAD"],
        ["pyi", "NATIVE", "TAGS", "OUT"],
        ["backend", "-s", "X.yaml", "-o", "OUT"],
        ["lazy", "-s", "X.yaml", "-o", "OUT"],
        ["check", "NATIVE"],
        ["dump", "NATIVE"],
    ],
)
def test_every_drop_in_and_check_refuse_a_release_too_old(command: list[str]) -> None:
    err = io.StringIO()
    assert main([*command, "--torch-version", "2.8"], io.StringIO(), err) == 2
    assert "torch 2.8 (from --torch-version) is older than the releases opgen supports" in (
        err.getvalue()
    )


def test_check_reads_a_spec_by_its_releases_rules(tmp_path: Path) -> None:
    native = tmp_path / "native_functions.yaml"
    native.write_text("- func: _philox_rand(Tensor self) -> Tensor\n")
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(native), "--torch-version", "2.14"], out, err) == 1
    assert "looks random" in err.getvalue()
    assert main(["check", str(native), "--torch-version", "2.15"], out, io.StringIO()) == 0


def test_dump_hints_python_signatures_as_the_release_does(tmp_path: Path) -> None:
    native = tmp_path / "native_functions.yaml"
    native.write_text("- func: scale(Tensor self, Scalar s) -> Tensor\n  variants: function\n")

    def pyi(version: str) -> str:
        out = io.StringIO()
        command = ["dump", "--signatures", str(native), "--torch-version", version]
        assert main(command, out, io.StringIO()) == 0
        return str(json.loads(out.getvalue())["python_pyi"])

    assert pyi("2.13") == "def scale(input: Tensor, s: Number | _complex) -> Tensor: ..."
    assert pyi("2.14") == (
        "def scale(input: Tensor, s: Number | _complex | PySymType) -> Tensor: ..."
    )


def test_every_change_is_listed_once_in_release_order() -> None:
    import opgen.releases as releases

    defined = [v for v in vars(releases).values() if isinstance(v, releases.Change)]
    assert sorted(c.name for c in defined) == sorted(c.name for c in CHANGES)
    assert len(set(CHANGES)) == len(CHANGES)
    assert [c.since.key for c in CHANGES] == sorted(c.since.key for c in CHANGES)
