"""Create a workspace's manifest, or read it back with its member dependency graph.

``cce workspace init`` detects the members under a root and writes
``.cce/workspace.yml`` (never over an existing one without ``force``);
``cce workspace list`` shows the members and the edges between them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.foundation.errors import CceError


@dataclass(frozen=True)
class WrittenManifest:
    path: str  # as the manifest module spells it (``./.cce/workspace.yml`` stays so)
    manifest: Any  # workspace.manifest.Manifest


@dataclass(frozen=True)
class WorkspaceLayout:
    manifest: Any
    graph: Any  # workspace.manifest member graph, built afresh


def create_manifest(root: Path, *, force: bool) -> WrittenManifest:
    from cce_core.workspace.manifest import build_manifest, manifest_path, save_manifest

    if not root.is_dir():
        raise CceError(f"not a directory: {root}")
    path = manifest_path(root)
    if Path(path).exists() and not force:
        raise CceError(f"{path} already exists — pass --force to overwrite")
    manifest = build_manifest(root)
    if not manifest.members:
        raise CceError("no workspace members detected under this root")
    save_manifest(manifest, root)
    return WrittenManifest(path, manifest)


def workspace_layout(root: Path) -> WorkspaceLayout:
    from cce_core.workspace.manifest import build_graph, load_manifest

    manifest = load_manifest(root)
    return WorkspaceLayout(manifest, build_graph(root, manifest))
