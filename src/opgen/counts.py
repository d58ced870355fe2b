"""Counts with their nouns, as the tools' summaries print them: `1 finding`, `2 findings`."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, plural unless `count` is 1: `plural`, else the noun with `s`
    (`ies` for a consonant and `y`: `entry`, `entries`). A noun of several words takes
    the plural on its last (`view group`, `view groups`)."""
    if count == 1:
        return f"1 {noun}"
    if plural is None:
        consonant_y = noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u")
        plural = noun[:-1] + "ies" if consonant_y else noun + "s"
    return f"{count} {plural}"


def warnings_counted(count: int) -> str:
    """`, 2 warnings` for a summary line's end; nothing for none, as a clean run has."""
    return f", {counted(count, 'warning')}" if count else ""
