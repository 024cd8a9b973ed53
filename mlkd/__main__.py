"""``python -m mlkd COMMAND ...``: see :mod:`mlkd.cli`."""

from mlkd.cli import main

main()
