"""Search and statistics across the members of a workspace.

A federated search must rank exactly as one index over the union of the
members would, with every path namespaced ``<member>/<path>``. So the union is
assembled as an ordinary in-memory store (chunks, vectors, BM25 rebuilt over
all of them, each member's own import edges) and ranked by the standard
``Searcher``; the per-file diversity cap then works on (member, file) for
free. The only addition is a last expansion step that follows the declared
dependency edges between members.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import format6, tokenize_bytes
from cce_core.indexing.bm25 import build_bm25
from cce_core.indexing.chunk import Chunk
from cce_core.indexing.store import FileEntry, StoreData, default_store_path, load_store
from cce_core.retrieval.searcher import Cosines, Searcher
from cce_core.workspace.manifest import Manifest, Member, WorkspaceGraph

GRAPH_MAX_BONUS_MEMBERS = 2
GRAPH_BONUS_MEMBER_CHUNKS = 2
EMPTY_SCOPE_MESSAGE = "--package requires at least one member or package name (e.g. --package app,billing)"


@dataclass
class MemberStore:
    member: Member
    store_path: Path
    data: StoreData


@dataclass
class FedResult:
    rank: int
    member: str
    package: str
    file_path: str  # relative to the member
    chunk: Chunk  # its file_path namespaced by the member
    score: float

    def as_json(self) -> dict[str, object]:
        c = self.chunk
        return {
            "chunk_id": c.chunk_id, "chunk_type": c.chunk_type, "end_line": c.end_line,
            "file_path": self.file_path, "kind": c.kind, "package": self.package, "rank": self.rank,
            "score": format6(self.score), "start_line": c.start_line,
        }

    def human_line(self) -> str:
        c = self.chunk
        return (f"{self.rank:>2}. [{format6(self.score)}] {self.package} · {self.file_path}:"
                f"{c.start_line}-{c.end_line} ({c.chunk_type}/{c.kind})")


def parse_scope(value: str | None) -> list[str] | None:
    """``--package a,b`` → tokens; absent means the whole workspace, empty is an error."""
    if value is None:
        return None
    tokens = [t.strip() for t in value.split(",")]
    tokens = [t for t in tokens if t]
    if not tokens:
        raise CceError(EMPTY_SCOPE_MESSAGE)
    return tokens


def _resolve(manifest: Manifest, token: str) -> Member:
    for m in manifest.members:
        if m.name == token:
            return m
    for m in manifest.members:
        if m.package == token:
            return m
    available = ", ".join(m.name if m.package == m.name else f"{m.name} (package {m.package})"
                          for m in manifest.members)
    raise CceError(f"unknown member/package '{token}' — available: {available}. Scope by a member name or its "
                   "workspace.yml `package:` field.")


def select_members(manifest: Manifest, scope: list[str] | None) -> list[Member]:
    if scope is None:
        return list(manifest.members)
    return [_resolve(manifest, token) for token in scope]


def load_member_stores(root: Path, manifest: Manifest, scope: list[str] | None) -> list[MemberStore]:
    out = []
    for m in select_members(manifest, scope):
        store_path = default_store_path(root / m.path)
        try:
            data = load_store(store_path)
        except CceError:
            raise CceError(f"member '{m.name}' is not indexed ({store_path} missing) — run "
                           "`cce index --workspace` first") from None
        out.append(MemberStore(m, store_path, data))
    return out


def _namespaced(member: str, path: str) -> str:
    return f"{member}/{path}"


def combined_store(members: list[MemberStore]) -> StoreData:
    """One in-memory store over every member, paths namespaced, BM25 over the union."""
    chunks: list[Chunk] = []
    files: list[FileEntry] = []
    edges: list[tuple[str, str]] = []
    blocks = []
    for ms in members:
        name = ms.member.name
        offset = len(chunks)
        chunks.extend(dataclasses.replace(c, file_path=_namespaced(name, c.file_path)) for c in ms.data.chunks)
        files.extend(FileEntry(_namespaced(name, f.path), f.sha256, f.tokens, f.first_chunk + offset, f.chunk_count,
                               list(f.imports)) for f in ms.data.files)
        edges.extend((_namespaced(name, a), _namespaced(name, b)) for a, b in ms.data.edges)
        blocks.append(ms.data.embeddings)
    dims = {b.shape[1] for b in blocks if b.shape[0]}
    if len(dims) > 1:
        raise CceError("the workspace members were indexed with embedders of different dimensions — "
                       "re-index them together with `cce index --workspace`")
    dim = dims.pop() if dims else 0
    rows = [b for b in blocks if b.shape[0]]
    embeddings = np.vstack(rows) if rows else np.zeros((0, dim), dtype=np.float64)
    bm25 = build_bm25([tokenize_bytes(c.content.encode("utf-8")) for c in chunks])
    meta = dict(members[0].data.meta) if members else {"embedder": "hash"}
    return StoreData(meta, chunks, embeddings, files, sorted(set(edges)), bm25)


def check_same_embedder(members: list[MemberStore]) -> None:
    """Cosines across members only mean something in one embedding space."""
    seen = {(ms.data.embedder, str(ms.data.meta.get("embed_model", "") or "")) for ms in members}
    if len(seen) > 1:
        listed = ", ".join(f"{ms.member.name}: {ms.data.embedder or 'hash'}" for ms in members)
        raise CceError(f"the workspace members were indexed with different embedders ({listed}) — re-index "
                       "them together with `cce index --workspace`")


def _member_of(path: str) -> str:
    return path.split("/", 1)[0]


class FederatedSearcher(Searcher):
    """The standard ranking over a union store, plus expansion along member dependency edges."""

    def __init__(self, store: StoreData, embedder, graph: WorkspaceGraph, profile: str = "family",
                 disabled_stages: frozenset[str] = frozenset()) -> None:
        super().__init__(store, embedder, profile=profile, disabled_stages=disabled_stages)
        self.graph = graph
        self._by_member: dict[str, list[int]] = {}
        for i, c in enumerate(store.chunks):
            self._by_member.setdefault(_member_of(c.file_path), []).append(i)

    def expand(self, ranked: list[tuple[int, float]], cosines: Cosines) -> list[tuple[int, float]]:
        if not ranked:
            return ranked
        chunks = self.store.chunks
        sources = list(dict.fromkeys(_member_of(chunks[idx].file_path) for idx, _ in ranked[:3]))
        out = super().expand(ranked, cosines)  # each member's own import graph
        represented = {_member_of(chunks[idx].file_path) for idx, _ in out}
        existing = {(chunks[idx].file_path, chunks[idx].start_line, chunks[idx].end_line) for idx, _ in out}
        targets: list[str] = []
        for src in sources:
            for target in self.graph.targets_from(src):
                if target in represented or target in targets:
                    continue
                targets.append(target)
                if len(targets) >= GRAPH_MAX_BONUS_MEMBERS:
                    break
            if len(targets) >= GRAPH_MAX_BONUS_MEMBERS:
                break
        for target in targets:
            self.append_bonus(out, existing, self._by_member.get(target, []), GRAPH_BONUS_MEMBER_CHUNKS, cosines)
            represented.add(target)
        return out


def federated_search(searcher: FederatedSearcher, members: list[MemberStore], query: str, top_k: int,
                     graph: bool) -> list[FedResult]:
    package_of = {ms.member.name: ms.member.package for ms in members}
    out = []
    for r in searcher.search(query, top_k=top_k, graph=graph):
        member, _, rel = r.chunk.file_path.partition("/")
        out.append(FedResult(r.rank, member, package_of.get(member, member), rel, r.chunk, r.score))
    return out


@dataclass
class MemberStats:
    name: str
    package: str
    files: int
    chunks: int
    by_kind: dict[str, int]


def workspace_stats(members: list[MemberStore]) -> list[MemberStats]:
    out = []
    for ms in members:
        by_kind: dict[str, int] = {}
        for c in ms.data.chunks:
            by_kind[c.kind] = by_kind.get(c.kind, 0) + 1
        files = len({c.file_path for c in ms.data.chunks})
        out.append(MemberStats(ms.member.name, ms.member.package, files, len(ms.data.chunks),
                               dict(sorted(by_kind.items()))))
    return out
