"""cce — a local code context engine for AI coding agents.

The package holds the language-neutral engine; languages and embedders arrive
as plugins (see :mod:`cce_core.hookspecs`).
"""

__version__ = "0.2.1"
