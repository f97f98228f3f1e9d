"""Pack-set drift: which files of a store this installation's language packs would chunk differently.

A store records the ``pack_set_id`` it was built with. Installing or
removing a pack changes the id, but only the files that pack claims are cut
differently: a file a new pack claims was a single module chunk before, and
a file a removed pack chunked would become one now. A store with none of
those files is exactly what this installation would build, so a different
id alone is only worth a note; a store with some has chunk ids that a
rebuild here would not reproduce, which ``cce doctor`` fails, ``cce sync
pull`` refuses without ``--force`` and ``cce search`` names once.

Knowing the installed packs means loading every plugin, which a search
otherwise avoids. :func:`search_warning` first compares the plugin
distributions the store recorded with the installed ones (a cached listing):
unchanged, the pack set cannot have drifted, and nothing is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cce_core.indexing.store import StoreData
    from cce_core.plugins.host import PackRegistry

# Store meta: the plugin distributions installed when a pull found the artifact's pack set equal to
# this installation's (a local build records them as ``plugins``).
PULL_PLUGINS_KEY = "installed_plugins"
_FILES_NAMED = 3


@dataclass(frozen=True)
class PackDrift:
    """A store's pack set against the installed one, and the store's files the difference re-chunks."""

    built: str
    installed: str
    affected: list[str]

    def sets(self, subject: str) -> str:
        """``<subject> built with packs `A`, this installation has `B```."""
        return f"{subject} built with packs `{self.built}`, this installation has `{self.installed}`"

    def files(self) -> str:
        """``1 file is chunked differently (a.go)``; a longer list is cut after a few names."""
        n = len(self.affected)
        named = ", ".join(self.affected[:_FILES_NAMED])
        more = f" and {n - _FILES_NAMED} more" if n > _FILES_NAMED else ""
        verb = "file is" if n == 1 else "files are"
        return f"{n} {verb} chunked differently ({named}{more})"


def pack_drift(built: str, packs: PackRegistry, data: StoreData) -> PackDrift | None:
    """None when ``built`` is the installed pack set; else the drift, with the files of ``data`` it re-chunks."""
    installed = packs.pack_set_id
    if built == installed:
        return None
    built_names = set(built.split(",")) if built else set()
    added = set(packs.names()) - built_names  # claims files that were module chunks
    gone = built_names - set(packs.names())  # chunked files this installation would not
    affected: set[str] = set()
    if added:
        for entry in data.files:
            pack = packs.pack_for(entry.path)
            if pack is not None and pack.name in added:
                affected.add(entry.path)
    if gone:
        affected.update(c.file_path for c in data.chunks if c.language in gone)
    return PackDrift(built, installed, sorted(affected))


def installed_plugins() -> dict[str, str]:
    """The installed plugin distributions and versions, from the cached entry-point listing (no plugin loaded)."""
    from cce_core.plugins.entry_points import entry_points

    return {r.distribution: r.version for r in entry_points("cce") if r.distribution != "?"}


def _recorded_plugins(meta: Mapping[str, Any]) -> Any:
    return meta.get("plugins", meta.get(PULL_PLUGINS_KEY))


def search_warning(data: StoreData) -> str | None:
    """The one ``warning:`` line a search prints when the installed packs re-chunk files of ``data``."""
    built = data.meta.get("pack_set")
    if not isinstance(built, str):
        return None
    recorded = _recorded_plugins(data.meta)
    if isinstance(recorded, dict) and recorded == installed_plugins():
        return None  # the same plugins as when the pack sets were last found equal
    from cce_core.plugins.host import default_host

    drift = pack_drift(built, default_host().packs, data)
    if drift is None or not drift.affected:
        return None
    return (f"warning: {drift.sets('the index was')} — {drift.files()}; re-index with `cce index` "
            "(or pull with the same packs)")
