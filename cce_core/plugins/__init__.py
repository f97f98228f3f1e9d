"""Plugin discovery and the registries built from it.

Finds the `cce` entry points, loads them into one pluggy manager, collects the
packs and embedders they register, and runs the checks that need no chunking
(structure, grammar binding, unknown hook names).
"""
