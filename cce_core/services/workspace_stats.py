"""What a workspace holds: per-member file, chunk and kind counts, and the member dependency edges.

``cce stats --workspace`` and the MCP ``index_status`` tool (in workspace
mode) report the same figures; the MCP server passes the manifest and the
member stores it already holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class WorkspaceStatistics:
    name: str
    members: list[Any]  # workspace.federation.MemberStats, in manifest order
    edges: list[Any]  # workspace.manifest edges, as the member graph stores them

    @property
    def total_files(self) -> int:
        return sum(m.files for m in self.members)

    @property
    def total_chunks(self) -> int:
        return sum(m.chunks for m in self.members)


def workspace_statistics(root: Path, manifest: Any = None, members: list[Any] | None = None) -> WorkspaceStatistics:
    """The statistics of the workspace at ``root``; its manifest and every member store read unless given."""
    from cce_core.workspace.federation import load_member_stores, workspace_stats
    from cce_core.workspace.manifest import load_graph_or_empty, load_manifest

    if manifest is None:
        manifest = load_manifest(root)
    if members is None:
        members = load_member_stores(root, manifest, None)
    graph = load_graph_or_empty(root, manifest)
    return WorkspaceStatistics(manifest.name, workspace_stats(members), list(graph.edges))
