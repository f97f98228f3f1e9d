"""Plugins the core ships and registers through its own entry points, like any other distribution's.

The deterministic hash embedder lives here so that `cce-core` alone can index and search.
"""
