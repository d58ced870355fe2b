"""`opgen diff --allow FILE`: what an entry allows, and every mistake as a located diagnostic."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from opgen.cli import main

OLD = """\
- func: _foo(Tensor self, int a) -> Tensor
- func: _foo.bar(Tensor self) -> Tensor
- func: add(Tensor self, int alpha=1) -> Tensor
- func: keep(Tensor self, int a) -> Tensor
"""
NEW = """\
- func: add(Tensor self, int alpha=2) -> Tensor
- func: keep(Tensor self, int? a) -> Tensor
"""
TODAY = "2025-06-01"


def run(tmp_path: Path, allowlist: str, *extra: str) -> tuple[int, str, str]:
    (tmp_path / "allow.yaml").write_text(textwrap.dedent(allowlist))
    out, err = io.StringIO(), io.StringIO()
    argv = ["diff", "old.yaml", "new.yaml", "--allow", "allow.yaml", "--today", TODAY, *extra]
    status = main(argv, out, err)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(autouse=True)
def specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "old.yaml").write_text(OLD)
    (tmp_path / "new.yaml").write_text(NEW)
    monkeypatch.chdir(tmp_path)


ALL_ALLOWED = """\
- name: aten::_foo*
  category: backward-incompatible
  reason: private operators
  until: 2025-06-01
- name: add
  category: backward-incompatible
  reason: the new default is what everyone passes
  until: 2026-01-31
- name: keep.*
  category: forward-incompatible
  reason: nobody runs new programs on old versions
  until: "2026-01-31"
- name: keep
  category: forward-incompatible
  reason: this one allows it
  until: 2026-01-31
"""


def test_entries_allow_their_category_by_name_or_pattern(tmp_path: Path) -> None:
    status, out, err = run(tmp_path, ALL_ALLOWED)
    assert status == 0
    assert out.splitlines() == [
        "new.yaml:1:26: note: [backward-incompatible/default-changed] add: argument 'alpha' "
        "default changed from 1 to 2 (was old.yaml:3:26) [allowed until 2026-01-31 by "
        "allow.yaml:5:9: the new default is what everyone passes]",
        "old.yaml:1:9: note: [backward-incompatible/operator-removed] _foo: operator removed: "
        "_foo(Tensor self, int a) -> Tensor [allowed until 2025-06-01 by allow.yaml:1:9: "
        "private operators]",
        "old.yaml:2:9: note: [backward-incompatible/operator-removed] _foo.bar: operator "
        "removed: _foo.bar(Tensor self) -> Tensor [allowed until 2025-06-01 by "
        "allow.yaml:1:9: private operators]",
        "new.yaml:2:27: note: [forward-incompatible/argument-type-widened] keep: argument 'a' "
        "type widened from int to int? (was old.yaml:4:27) [allowed until 2026-01-31 by "
        "allow.yaml:13:9: this one allows it]",
        "opgen diff: 4 findings: 3 backward-incompatible, 1 forward-incompatible, "
        "0 informational; 4 allowed, 1 warning",
        "  3 backward-incompatible: 2 operator-removed, 1 default-changed",
        "  1 forward-incompatible: 1 argument-type-widened",
    ]
    assert err == (
        "allow.yaml:9:9: warning: allowlist entry 'keep.*' matches no forward-incompatible "
        "finding; remove it\n"
        "  - name: keep.*\n"
        "          ^~~~~~\n"
    )


def test_an_entry_allows_only_its_category(tmp_path: Path) -> None:
    status, out, _ = run(
        tmp_path,
        """\
        - name: "*"
          category: forward-incompatible
          reason: forward compatibility is not promised
          until: 2030-01-01
        """,
    )
    assert status == 1
    assert [line.split(": ")[1:3] for line in out.splitlines()[:4]] == [
        ["error", "[backward-incompatible/default-changed] add"],
        ["error", "[backward-incompatible/operator-removed] _foo"],
        ["error", "[backward-incompatible/operator-removed] _foo.bar"],
        ["note", "[forward-incompatible/argument-type-widened] keep"],
    ]


def test_breaks_no_entry_allows_come_first(tmp_path: Path) -> None:
    """Backward- before forward-incompatible, each in the findings' order; then the allowed."""
    status, out, _ = run(
        tmp_path,
        """\
        - name: add
          category: backward-incompatible
          reason: r
          until: 2030-01-01
        """,
    )
    assert status == 1
    assert [line.split(": ")[1:3] for line in out.splitlines()[:4]] == [
        ["error", "[backward-incompatible/operator-removed] _foo"],
        ["error", "[backward-incompatible/operator-removed] _foo.bar"],
        ["error", "[forward-incompatible/argument-type-widened] keep"],
        ["note", "[backward-incompatible/default-changed] add"],
    ]


def test_json_names_the_entry(tmp_path: Path) -> None:
    _, out, _ = run(tmp_path, ALL_ALLOWED, "--format", "json")
    assert '"allowed": {"reason": "private operators", "until": "2025-06-01", ' in out
    assert '"entry": "allow.yaml:1:9"}' in out


@pytest.mark.parametrize(
    ("allowlist", "expected"),
    [
        (
            """\
            - name: add
              category: backwards
              reason: r
              until: 2030-01-01
            """,
            "allow.yaml:2:13: error: unknown category 'backwards'; expected "
            "backward-incompatible or forward-incompatible\n"
            "    category: backwards\n"
            "              ^~~~~~~~~\n",
        ),
        (
            """\
            - name: add
              category: backward-incompatible
              reason: r
              until: 2025-05-31
            """,
            "allow.yaml:4:10: error: allowlist entry 'add' expired on 2025-05-31 (today is "
            "2025-06-01): fix the break, or renew the entry with a new date and reason\n"
            "    until: 2025-05-31\n"
            "           ^~~~~~~~~~\n",
        ),
        (
            """\
            - name: add
              category: backward-incompatible
              reason: r
              until: 2025-13-01
            """,
            "allow.yaml:4:10: error: '2025-13-01' is not a valid timestamp: month must be "
            "in 1..12\n"
            "    until: 2025-13-01\n"
            "           ^~~~~~~~~~\n",
        ),
        (
            """\
            - name: add
              category: backward-incompatible
              reason: r
              until: next year
            """,
            "allow.yaml:4:10: error: 'until' must be a date written YYYY-MM-DD, not 'next year'\n"
            "    until: next year\n"
            "           ^~~~~~~~~\n",
        ),
        (
            """\
            - name: add
              category: backward-incompatible
              reason: r
              until: 2030-01-01
              owner: me
            """,
            "allow.yaml:5:3: error: unknown key 'owner' in an allowlist entry (expected name, "
            "category, reason, until)\n"
            "    owner: me\n"
            "    ^~~~~\n",
        ),
        (
            """\
            - name: add
              category: backward-incompatible
            """,
            "allow.yaml:1:3: error: allowlist entry needs 'reason', 'until'\n"
            "  - name: add\n"
            "    ^\n",
        ),
        (
            """\
            - name: ""
              category: backward-incompatible
              reason: r
              until: 2030-01-01
            """,
            "allow.yaml:1:10: error: 'name' must be a non-empty string\n"
            '  - name: ""\n'
            "           ^\n",
        ),
        (
            """\
            name: add
            """,
            "allow.yaml:1:1: error: an allowlist is a list of entries ('- name: ...', with "
            "category, reason and until)\n"
            "  name: add\n"
            "  ^\n",
        ),
    ],
    ids=[
        "unknown-category",
        "expired",
        "bad-date",
        "not-a-date",
        "unknown-key",
        "missing-keys",
        "empty-name",
        "not-a-list",
    ],
)
def test_malformed_allowlist(tmp_path: Path, allowlist: str, expected: str) -> None:
    assert run(tmp_path, allowlist) == (1, "", expected)


def test_every_mistake_is_reported_at_once(tmp_path: Path) -> None:
    status, _, err = run(
        tmp_path,
        """\
        - name: a
          category: nope
          reason: r
          until: 2030-01-01
        - 3
        """,
    )
    assert status == 1
    assert [line for line in err.splitlines() if ": error: " in line] == [
        "allow.yaml:2:13: error: unknown category 'nope'; expected backward-incompatible or "
        "forward-incompatible",
        "allow.yaml:5:3: error: an allowlist entry is a mapping",
    ]


def test_a_bad_today_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, _ = run(tmp_path, ALL_ALLOWED, "--today", "tomorrow")
    assert status == 2
    assert "expected a date YYYY-MM-DD, not 'tomorrow'" in capsys.readouterr().err
