"""Plugins the core ships, registered by module path like llm's and datasette's defaults.

The deterministic hash embedder lives here so that `cce-core` alone can index
and search. The plugin host loads every module named in
:data:`BUILTIN_PLUGINS` itself, before any entry point, so a source tree that
pip never installed (and so advertises no entry points) still has them.
`cce-core` also advertises them as entry points, which keeps them visible to
tools that read package metadata; the host recognises that entry point as the
module it already registered and does not register it twice.
"""

# Plugin name (as `cce packs` lists it) -> the module carrying its hooks.
BUILTIN_PLUGINS: dict[str, str] = {
    "hash": "cce_core.default_plugins.hash_embedder",
}

# The distribution the built-ins belong to: the core itself.
BUILTIN_DISTRIBUTION = "cce-core"
