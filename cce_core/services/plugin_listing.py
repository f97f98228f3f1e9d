"""``cce packs``' listing: every installed plugin, with the install command that fits this installation.

The listing itself is :mod:`cce_core.plugins.inventory` (it never fails: a
broken plugin is a problem line). What a front-end adds is the hint for an
empty section, ``pip install cce-pack-...`` or, from a source checkout,
``pip install -e packs/cce-pack-...``; it is worked out here so every
front-end says the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cce_core.plugins.inventory import Inventory


@dataclass(frozen=True)
class PluginListing:
    """The inventory, and the install commands shown when no language pack or document chunker is installed."""

    inventory: Inventory
    pack_install_hint: str
    document_chunker_install_hint: str
    # Language pack name -> where its symbols come from (``tags.scm``, ``tags.scm + pack``, ``pack``, ``none``).
    symbols: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The inventory's JSON, each language pack with its ``symbols`` source."""
        out = self.inventory.as_json()
        for pack in out.get("packs", []):
            pack["symbols"] = self.symbols.get(pack["name"], "none")
        return out


def list_plugins() -> PluginListing:
    """Every installed plugin (discovered now), with the hints for the empty sections."""
    from cce_core.plugins.host import default_host
    from cce_core.plugins.install_hint import install_command
    from cce_core.plugins.inventory import take_inventory

    host = default_host()
    inventory = take_inventory(host)
    return PluginListing(inventory, install_command("cce-pack-<language>"), install_command("cce-pack-<format>"),
                         _symbol_sources(host, inventory))


def _symbol_sources(host: Any, inventory: Inventory) -> dict[str, str]:
    """Each language pack's symbols source; a pack whose query cannot be read shows ``none``."""
    from cce_core.symbols.checks import NONE, tags_source

    sources: dict[str, str] = {}
    for entry in inventory.packs:
        try:
            sources[entry.pack.name] = tags_source(host, entry.pack)
        except Exception:  # the listing never fails; --validate reports the cause
            sources[entry.pack.name] = NONE
    return sources
