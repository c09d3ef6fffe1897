"""cli: the `annotate` command, one module per command group; parsing and printing only.

The top layer: may import every package; nothing in the library imports it.
"""

from annotate.cli.main import main

__all__ = ["main"]
