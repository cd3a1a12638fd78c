"""``python -m mna`` is the ``mna`` command."""

from mna.cli import command

command()
