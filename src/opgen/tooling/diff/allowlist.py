"""The allowlist of `opgen diff --allow FILE`: known breaks, each with a reason and an end.

    - name: aten::_foo*            # an operator, or an fnmatch pattern
      category: backward-incompatible
      reason: internal operator, no callers outside ATen
      until: 2026-06-30            # the last day the entry allows anything

A pattern with `::` matches `namespace::name.overload`; one without matches
`name.overload` or the operator's base `name` (so `add` allows every overload
of add, `add.Tensor` only that one). An entry allows the findings of its
category that it matches; the first matching entry is the one reported.

PyTorch's own allowlist failed silently for long stretches: entries that no
longer matched anything, and entries kept long after their reason was gone.
So an entry that matches no finding is a warning, and every mistake is a
located error: an unknown key, a missing one, an unknown category, a date that
is not YYYY-MM-DD, and an entry past its `until` date, compared with the day
the run is for (`today`, a parameter: the command passes the real date, or
`--today`).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from fnmatch import fnmatchcase

from opgen.diagnostics import Diagnostic, Location, SpecError
from opgen.frozen import frozen
from opgen.spec.yaml.load import YamlDocument, YamlList, YamlMap, load_yaml
from opgen.tooling.diff.findings import FAILING_CATEGORIES, Finding

KEYS = ("name", "category", "reason", "until")


@frozen
class AllowEntry:
    pattern: str
    category: str
    reason: str
    until: datetime.date
    location: Location  # the entry's `name:` value

    def matches(self, finding: Finding) -> bool:
        if finding.category != self.category:
            return False
        name = finding.name
        if "::" in self.pattern:
            qualified = name if "::" in name else f"aten::{name}"
            return fnmatchcase(qualified, self.pattern)
        plain = name.rpartition("::")[2]
        return fnmatchcase(plain, self.pattern) or fnmatchcase(
            plain.partition(".")[0], self.pattern
        )


@frozen
class Allowlist:
    entries: tuple[AllowEntry, ...]

    def allowing(self, finding: Finding) -> AllowEntry | None:
        """The first entry that allows `finding`, if any."""
        for entry in self.entries:
            if entry.matches(finding):
                return entry
        return None

    def unused(self, findings: Sequence[Finding]) -> list[Diagnostic]:
        """A warning for each entry that allows none of `findings`."""
        used = {id(e) for f in findings if (e := self.allowing(f)) is not None}
        return [
            Diagnostic(
                entry.location,
                f"allowlist entry '{entry.pattern}' matches no {entry.category} finding; remove it",
                "warning",
            )
            for entry in self.entries
            if id(entry) not in used
        ]


NO_ALLOWLIST = Allowlist(())


def load_allowlist(path: str, today: datetime.date) -> Allowlist:
    """Read and check an allowlist; a SpecError with every mistake found."""
    return read_allowlist(load_yaml(path), today)


def read_allowlist(doc: YamlDocument, today: datetime.date) -> Allowlist:
    if doc.root is None:
        return NO_ALLOWLIST
    if not isinstance(doc.root, YamlList):
        raise SpecError(
            "an allowlist is a list of entries ('- name: ...', with category, reason and until)",
            doc.location,
        )
    entries: list[AllowEntry] = []
    errors: list[Diagnostic] = []
    for i, item in enumerate(doc.root):
        if not isinstance(item, YamlMap):
            errors.append(Diagnostic(doc.root.item_locations[i], "an allowlist entry is a mapping"))
            continue
        try:
            entries.append(_read_entry(item, today))
        except SpecError as error:
            errors.extend(error.diagnostics)
    if errors:
        raise SpecError.of(errors)
    return Allowlist(tuple(entries))


def _read_entry(entry: YamlMap, today: datetime.date) -> AllowEntry:
    errors: list[Diagnostic] = []
    for key in entry:
        if key not in KEYS:
            message = f"unknown key '{key}' in an allowlist entry (expected {', '.join(KEYS)})"
            errors.append(Diagnostic(entry.key_location(key), message))
    missing = [key for key in KEYS if key not in entry]
    if missing:
        listed = ", ".join(f"'{key}'" for key in missing)
        errors.append(Diagnostic(entry.location, f"allowlist entry needs {listed}"))
    if errors:
        raise SpecError.of(errors)
    pattern = _text(entry, "name")
    category = _text(entry, "category")
    if category not in FAILING_CATEGORIES:
        raise SpecError(
            f"unknown category '{category}'; expected {' or '.join(FAILING_CATEGORIES)}",
            entry.value_location("category"),
        )
    until = _date(entry)
    if until < today:
        raise SpecError(
            f"allowlist entry '{pattern}' expired on {until} (today is {today}): fix the "
            "break, or renew the entry with a new date and reason",
            entry.value_location("until"),
        )
    return AllowEntry(
        pattern, category, _text(entry, "reason"), until, entry.value_location("name")
    )


def _text(entry: YamlMap, key: str) -> str:
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"'{key}' must be a non-empty string", entry.value_location(key))
    return value


def _date(entry: YamlMap) -> datetime.date:
    value = entry["until"]
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value
    if isinstance(value, str):
        try:
            if len(value) == 10:
                return datetime.date.fromisoformat(value)
        except ValueError:
            pass
    raise SpecError(
        f"'until' must be a date written YYYY-MM-DD, not '{value}'", entry.value_location("until")
    )
