"""`python -m opgen`."""

from opgen.cli import entry

entry()
