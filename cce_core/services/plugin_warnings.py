"""The hook problems of a plugin host, said once per host and process on the caller's warning sink.

A front-end opens a host for nearly every action; an installed plugin that
implements a hook nobody calls should be mentioned once, not once per store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cce_core.plugins.host import PluginHost

Warn = Callable[[str], None]
"""Where a use case sends a warning line (the CLI: stderr)."""

_warned_hosts: set[int] = set()


def warn_once_about_hooks(host: PluginHost, warn: Warn) -> None:
    """Send each hook problem of ``host`` to ``warn`` the first time this host is seen."""
    if id(host) in _warned_hosts:
        return
    _warned_hosts.add(id(host))
    for problem in host.hook_problems:
        warn(f"warning: {problem} (run `cce packs --validate`)")


def healthy_host(warn: Warn) -> PluginHost:
    """Every installed plugin, refused when one failed to load or two packs clash; its hook problems warned."""
    from cce_core.plugins.host import default_host

    host = default_host()
    host.require_healthy()
    warn_once_about_hooks(host, warn)
    return host
