"""What is installed: every plugin with its distribution, version and hooks, its packs, embedders and document chunkers.

`cce packs` prints this (or its JSON). Reading it never fails: a plugin that
did not load, or an embedder that cannot be built, shows up as a problem
instead of stopping the listing, because the listing is how a user finds out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cce_core.hookspecs import DocumentChunker, LanguagePack
from cce_core.plugins.host import PluginHost


@dataclass(frozen=True)
class PackEntry:
    pack: LanguagePack
    version: str  # of the distribution that registered it
    grammar_version: str
    node_kinds: int | None  # None when the grammar does not load

    def as_json(self) -> dict[str, Any]:
        p = self.pack
        return {
            "name": p.name,
            "extensions": list(p.extensions),
            "function_types": list(p.function_types),
            "class_types": list(p.class_types),
            "import_node_types": list(p.import_node_types),
            "grammar": {"distribution": p.grammar_distribution or None, "version": self.grammar_version,
                        "node_kinds": self.node_kinds},
            "distribution": p.distribution or None,
            "version": self.version,
        }


@dataclass(frozen=True)
class EmbedderEntry:
    name: str
    distribution: str
    version: str
    model: str
    dim: int | None
    problem: str | None  # why it could not be built for inspection
    size_bytes: int | None = None  # the model files on disk, when the embedder says

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "dim": self.dim, "distribution": self.distribution or None,
                "version": self.version, "problem": self.problem, "size_bytes": self.size_bytes}


@dataclass(frozen=True)
class DocumentChunkerEntry:
    chunker: DocumentChunker
    version: str  # of the distribution that registered it

    def as_json(self) -> dict[str, Any]:
        c = self.chunker
        return {"name": c.name, "formats": list(c.formats), "extensions": list(c.extensions),
                "distribution": c.distribution or None, "version": self.version}


@dataclass(frozen=True)
class PluginEntry:
    name: str  # the entry-point name (or the object's name for plugins handed in directly)
    distribution: str
    version: str
    hooks: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "distribution": self.distribution or None, "version": self.version,
                "hooks": list(self.hooks)}


@dataclass(frozen=True)
class Inventory:
    packs: list[PackEntry]
    embedders: list[EmbedderEntry]
    plugins: list[PluginEntry]
    pack_set_id: str
    problems: list[str]
    document_chunkers: list[DocumentChunkerEntry]

    def as_json(self) -> dict[str, Any]:
        return {
            "pack_set_id": self.pack_set_id,
            "packs": [p.as_json() for p in self.packs],
            "embedders": [e.as_json() for e in self.embedders],
            "document_chunkers": [d.as_json() for d in self.document_chunkers],
            "plugins": [p.as_json() for p in self.plugins],
            "problems": list(self.problems),
        }


def take_inventory(host: PluginHost) -> Inventory:
    packs = [_pack_entry(host, p) for p in host.packs.packs]
    embedders = [_embedder_entry(host, name) for name in sorted(host.embedders)]
    plugins: list[PluginEntry] = []
    for name, plugin in sorted(host.pm.list_name_plugin(), key=lambda item: str(item[0])):
        if plugin is None:
            continue
        dist = host.distribution_of(plugin)
        hooks = tuple(sorted(caller.name for caller in host.pm.get_hookcallers(plugin) or ()))
        plugins.append(PluginEntry(str(name), dist, _version(host, dist), hooks))
    documents = [DocumentChunkerEntry(c, _version(host, c.distribution)) for c in host.document_chunkers.chunkers]
    return Inventory(packs, embedders, plugins, host.packs.pack_set_id,
                     host.startup_problems() + host.advisory_problems(), documents)


def _version(host: PluginHost, dist: str) -> str:
    return host.distribution_version(dist) if dist and dist != "?" else "?"


def _pack_entry(host: PluginHost, pack: LanguagePack) -> PackEntry:
    try:
        kinds: int | None = pack.grammar().node_kind_count
    except Exception:  # a broken grammar is reported by --validate; the listing still shows the pack
        kinds = None
    grammar_version = _version(host, pack.grammar_distribution) if pack.grammar_distribution else "?"
    return PackEntry(pack, _version(host, pack.distribution), grammar_version, kinds)


def _embedder_entry(host: PluginHost, name: str) -> EmbedderEntry:
    dist = host.embedder_distributions.get(name, "")
    try:
        made = host.embedder(name)
        model, dim, problem = str(made.model or ""), made.dim, None
        size = getattr(made, "size_bytes", None)
    except Exception as exc:  # third-party constructors may fail; the listing must not
        model, dim, problem, size = "", None, f"{type(exc).__name__}: {exc}", None
    return EmbedderEntry(name, dist, _version(host, dist), model, dim, problem,
                         size if isinstance(size, int) and not isinstance(size, bool) else None)
