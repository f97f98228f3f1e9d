"""The bottom layer: byte-level text rules, errors, atomic writes and `.cce/config` reading.

Everything else builds on these; they import nothing else of cce_core.
"""
