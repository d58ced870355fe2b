"""`python -m opgen`, and the `opgen` command (`main`)."""

from __future__ import annotations

import gc


def main() -> None:
    """The process: the cyclic collector is turned off before opgen is even imported
    (`opgen.cli.entry` says why), as the imports alone would run about ten collections,
    1.4 ms of every run."""
    gc.disable()
    from opgen.cli import entry

    entry()


if __name__ == "__main__":
    main()
