"""CCE Sync for workspaces: push and pull every member, and consumer mode (``pull --all``).

A workspace is one git checkout whose members are subdirectories, so it is
shared as one artifact per member, each cached under its own repo id
``<base>__<member>``. Beside them, ``push --workspace`` publishes the
workspace's own description (``workspace.yml`` and the member graph) under the
base repo id, which makes the cache self-describing: a consumer with no source
checkout still learns the members' real types, packages and the dependency
edges that graph expansion follows — things it could otherwise only derive
from source manifests it does not have.

Consumer mode (``pull --all --into DIR``) turns a whole cache into a
ready-to-search workspace: every repo becomes a member directory under DIR
holding its pulled store, and DIR gets a synthesized manifest. Re-running it
refreshes only what moved and rewrites nothing that did not, so it can run on
a timer.

Everything a pull learns from the cache is untrusted input, including the
member paths of a published manifest. A path that is absolute, climbs out with
``..`` or leads through a symbolic link out of the workspace is refused with a
warning, never followed: a pull writes only under the directory it was given.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PureWindowsPath
from typing import TYPE_CHECKING

from cce_core.foundation.config import config_path
from cce_core.foundation.errors import CceError
from cce_core.indexing.store import STORE_DIR
from cce_core.sync import knowledge_service
from cce_core.sync.identity import (
    CODE_KEY_ROOT,
    CODE_KEYS,
    DEFAULT_REF,
    WORKSPACE_GRAPH_FILE,
    WORKSPACE_MANIFEST_FILE,
    member_repo_id,
    push_branch,
    resolve_repo_id,
    valid_repo_id,
)
from cce_core.sync.remote import GitRemote
from cce_core.sync.service import (
    fetch_and_install,
    guard_overwrite,
    load_marker,
    open_remote,
    publish_artifact,
    pull_target,
    push_sha,
    read_pointer,
    ref_names,
    short_checksum,
)
from cce_core.sync.settings import (
    Retention,
    SyncSettings,
    load_sync_settings,
    parse_sync_settings,
    replace_sync_block,
    save_sync_settings,
)
from cce_core.workspace.manifest import (
    Edge,
    Manifest,
    Member,
    WorkspaceGraph,
    build_graph,
    graph_path,
    load_manifest,
    manifest_path,
    manifest_yaml,
    parse_graph,
    parse_manifest,
    save_graph,
    save_manifest,
)

if TYPE_CHECKING:
    from cce_core.plugins.host import PluginHost

# The type of a member synthesized from a cache entry: there is no source to classify.
STORE_ONLY = "store-only"
NO_REMOTE_FOR_ALL = ("no sync remote configured — run `cce sync init --remote <git-url>` or pass "
                     "`--remote <url>`")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


# --------------------------------------------------------------------------- published metadata


@dataclass
class PublishedWorkspace:
    """A workspace description as ``push --workspace`` published it under a base repo id."""

    manifest: Manifest
    graph: WorkspaceGraph | None


def fetch_published_workspace(remote: GitRemote, base: str) -> PublishedWorkspace | None:
    """The published manifest (and graph, when there is a readable one) under ``base``, else None.

    Best effort on purpose: a cache that never published metadata, or whose
    metadata does not parse, behaves exactly like one without it.
    """
    try:
        manifest = parse_manifest(remote.get(CODE_KEYS.file(base, WORKSPACE_MANIFEST_FILE)).decode("utf-8"))
    except (CceError, UnicodeDecodeError, RecursionError):
        return None
    try:
        graph_text = remote.get(CODE_KEYS.file(base, WORKSPACE_GRAPH_FILE)).decode("utf-8")
        graph: WorkspaceGraph | None = parse_graph(graph_text)
    except (CceError, UnicodeDecodeError, RecursionError):
        graph = None
    return PublishedWorkspace(manifest, graph)


# --------------------------------------------------------------------------- staying inside the workspace


def _inside(path: str, base: str) -> bool:
    return path == base or os.path.commonpath([path, base]) == base


def path_problem(root: Path, rel: str) -> str | None:
    """Why a pull must not write to the member directory ``rel`` under ``root``; None when it may.

    Refused: an empty or absolute path, a ``..`` segment (with either
    separator, so the answer is the same on every platform), and any path
    whose directory, its ``.cce`` store directory, or an entry in that store
    directory is a symbolic link resolving outside ``root``. Links are
    resolved to be judged, never written through.
    """
    if not rel or "\0" in rel:
        return "its path is empty or unreadable"
    if rel.startswith(("/", "\\")) or PureWindowsPath(rel).drive:
        return f"its path `{rel}` is absolute"
    if ".." in re.split(r"[/\\]", rel):
        return f"its path `{rel}` climbs out of the workspace with `..`"
    base = os.path.realpath(root)
    member = root / rel
    store_dir = member / STORE_DIR
    escaping = f"its path `{rel}` leads through a symbolic link out of the workspace"
    if not (_inside(os.path.realpath(member), base) and _inside(os.path.realpath(store_dir), base)):
        return escaping
    try:
        # The files a pull writes are replaced by rename (which never follows a
        # link), but the metrics log is appended to: judge every entry.
        entries = list(os.scandir(store_dir)) if store_dir.is_dir() else []
    except OSError:
        entries = []
    for entry in entries:
        if entry.is_symlink() and not _inside(os.path.realpath(entry.path), base):
            return escaping
    return None


def _refusal(problem: str, root: Path) -> str:
    return f"{problem}; refused, nothing is written outside {root}"


# --------------------------------------------------------------------------- small file helpers


def _write_if_changed(path: Path, data: bytes, save: Callable[[], object]) -> None:
    """Run ``save`` unless ``path`` already holds ``data``: a refresh that changes nothing touches nothing."""
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    save()


def _save_settings_if_changed(root: Path, settings: SyncSettings) -> None:
    path = config_path(root)
    try:
        old = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        old = None  # let save_sync_settings create it, or refuse with its own reason
    if old is not None and replace_sync_block(old, settings, path=path) == old:
        return
    save_sync_settings(root, settings)


def _own_settings(root: Path) -> SyncSettings | None:
    """The ``sync:`` settings of ``root``'s own ``.cce/config`` only; None when absent or unreadable.

    Never the global config: its ``repo_id`` would make every member without a
    config of its own look like the same cache repo.
    """
    try:
        return parse_sync_settings(config_path(root).read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, CceError):
        return None


# --------------------------------------------------------------------------- push --workspace


def _member_repo_ids(base: str, manifest: Manifest) -> list[str]:
    ids = []
    for m in manifest.members:
        repo_id = member_repo_id(base, m.name)
        if not valid_repo_id(repo_id):
            raise CceError(f"invalid repo_id `{repo_id}` for workspace member `{m.name}`: a member name must use "
                           "only [A-Za-z0-9._-] (it becomes a path segment on the cache)")
        ids.append(repo_id)
    return ids


def push_workspace(root: Path, host: PluginHost, *, ref: str | None = None,
                   progress: Callable[[str], None] | None = None) -> str:
    """Publish every member at the root's HEAD, then the workspace's manifest and member graph."""
    root = Path(root)
    settings = load_sync_settings(root)
    remote = open_remote(settings)
    manifest = load_manifest(root, allow_outside_root=False)  # what is published must stay inside
    base = resolve_repo_id(root, settings)
    # The members share the root's checkout: one clean-tree check, one sha, and
    # one branch (a detached HEAD is refused once rather than rewinding `main`
    # for every member).
    sha = push_sha(root, None)
    branch = push_branch(root, settings, ref)
    repo_ids = _member_repo_ids(base, manifest)
    for m in manifest.members:
        if not (root / m.path).is_dir():
            raise CceError(f"member '{m.name}' has no directory at {root / m.path} — fix .cce/workspace.yml "
                           "or run `cce workspace init --force`")
    out = [f"Pushing workspace {manifest.name} @ {sha}\n"]
    for m, repo_id in zip(manifest.members, repo_ids, strict=True):
        pushed = publish_artifact(remote, root / m.path, host, repo_id, sha, branch, progress=progress)
        out.append(f"  {m.name:<16} {pushed.key}  ({short_checksum(pushed.checksum)})\n")
    # The graph is derived afresh from the source manifests, never re-uploaded
    # from a `.cce/workspace-graph.json` that may be stale.
    graph = build_graph(root, manifest)
    remote.put_many([(CODE_KEYS.file(base, WORKSPACE_MANIFEST_FILE), manifest_yaml(manifest).encode("utf-8")),
                     (CODE_KEYS.file(base, WORKSPACE_GRAPH_FILE), graph.to_json().encode("utf-8"))])
    out.append(f"  metadata         workspace.yml + workspace-graph.json under {base} "
               f"({_plural(len(graph.edges), 'edge')})\n")
    return "".join(out)


# --------------------------------------------------------------------------- pull --workspace


def _bootstrap(root: Path, base: str, published: PublishedWorkspace, warnings: list[str]) -> Manifest:
    """The published manifest as this root's layout, minus members a pull may not write to."""
    kept: list[Member] = []
    names: set[str] = set()
    for m in published.manifest.members:
        problem = path_problem(root, m.path)
        if problem is None and not valid_repo_id(member_repo_id(base, m.name)):
            problem = f"its name `{m.name}` cannot name a cache repo"
        if problem is None and m.name in names:
            problem = f"its name `{m.name}` is used by an earlier member"
        if problem is not None:
            warnings.append(f"  warning: skipped member `{m.name}` — {_refusal(problem, root)}\n")
            continue
        names.add(m.name)
        kept.append(replace(m))
    return Manifest(published.manifest.name, kept, published.manifest.version)


def _graph_among(graph: WorkspaceGraph, names: set[str]) -> WorkspaceGraph:
    """``graph`` restricted to the members in ``names`` (the ones a bootstrap kept)."""
    return WorkspaceGraph([n for n in graph.members if n in names],
                          [e for e in graph.edges if e.source in names and e.target in names])


def pull_workspace(root: Path, *, commit: str | None = None, latest: bool = False, ref: str | None = None,
                   force: bool = False) -> str:
    """Pull every member's artifact into its directory, then install the published workspace metadata.

    A root with no manifest of its own takes its layout from the published one
    (a repo-less consumer needs only a config naming the remote and the base
    repo id). A member already pulled at another sha is not replaced without
    ``force``, exactly as for a single-repo pull.
    """
    root = Path(root)
    settings = load_sync_settings(root)
    remote = open_remote(settings)
    base = resolve_repo_id(root, settings)
    published = fetch_published_workspace(remote, base)
    warnings: list[str] = []
    bootstrapped = False
    if os.path.lexists(manifest_path(root)) or published is None:
        # Only a missing manifest is replaced by the published one: a damaged
        # local one is the user's to fix, never silently overwritten.
        manifest = load_manifest(root, allow_outside_root=False)  # a pull never writes outside the root
    else:
        manifest = _bootstrap(root, base, published, warnings)
        save_manifest(manifest, root)
        bootstrapped = True
    repo_ids = _member_repo_ids(base, manifest)
    out = [f"Pulling workspace {manifest.name}\n"]
    if bootstrapped:
        out.append(f"  manifest         installed from the published metadata under {base}\n")
    out.extend(warnings)
    for m, repo_id in zip(manifest.members, repo_ids, strict=True):
        member_dir = root / m.path
        sha, noted = pull_target(member_dir, remote, repo_id, settings, commit=commit, latest=latest, ref=ref)
        if not force:
            guard_overwrite(member_dir, sha, f"workspace member `{m.name}` local cache")
        installed = fetch_and_install(member_dir, remote, repo_id, sha, allow_drift=force)
        artifact = installed.artifact
        note = f"  (ref {noted})" if noted else ""
        if installed.drift is not None and installed.drift.affected:  # installed anyway: --force
            note += f"  (packs differ: {installed.drift.files()})"
        out.append(f"  {m.name:<16} {sha}  chunks {artifact.manifest.chunk_count}  "
                   f"({short_checksum(artifact.manifest.checksum)}){note}\n")
    if published is not None:
        # Members match by name; the local path (the layout on this disk) wins,
        # the published type and package are the truth a consumer cannot re-detect.
        by_name = {p.name: p for p in published.manifest.members}
        for m in manifest.members:
            if m.name in by_name:
                m.type, m.package = by_name[m.name].type, by_name[m.name].package
        _write_if_changed(Path(manifest_path(root)), manifest_yaml(manifest).encode("utf-8"),
                          lambda: save_manifest(manifest, root))
        if published.graph is not None:
            graph = published.graph
            if bootstrapped:
                graph = _graph_among(graph, {m.name for m in manifest.members})
            _write_if_changed(Path(graph_path(root)), graph.to_json().encode("utf-8"),
                              lambda: save_graph(graph, root))
            out.append(f"  metadata         workspace.yml + workspace-graph.json installed "
                       f"({_plural(len(graph.edges), 'cross-member edge')})\n")
        else:
            out.append("  metadata         workspace.yml installed (no published graph)\n")
    return "".join(out)


# --------------------------------------------------------------------------- pull --all (consumer mode)


@dataclass(frozen=True)
class CachedRepo:
    """One repo of the cache as consumer mode sees it."""

    repo_id: str
    latest_sha: str | None
    latest_ref: str | None  # named only when the latest sha comes from a ref other than main
    refs: list[str]


def enumerate_cache(remote: GitRemote) -> tuple[list[CachedRepo], list[str], list[str]]:
    """(pullable repos, workspace bases carrying a published manifest, unusable repo ids), each sorted.

    The latest rule is `sync list`'s: ``refs/main``, else the only other ref.
    A prefix holding only workspace metadata is a base, not a repo. A
    directory name that cannot be a repo id (a hand-made cache) is reported,
    not read: its keys could not be addressed safely.
    """
    repos: list[CachedRepo] = []
    bases: list[str] = []
    unusable: list[str] = []
    for repo_id in remote.list_dirs(CODE_KEY_ROOT):
        if not valid_repo_id(repo_id):
            unusable.append(repo_id)
            continue
        shas = remote.list_shas(CODE_KEYS.prefix(repo_id))
        refs = ref_names(remote, repo_id)
        chosen = DEFAULT_REF if DEFAULT_REF in refs else (refs[0] if len(refs) == 1 else None)
        latest = (read_pointer(remote, repo_id, chosen) or None) if chosen is not None else None
        latest_ref = chosen if latest is not None and chosen != DEFAULT_REF else None
        if remote.has(CODE_KEYS.file(repo_id, WORKSPACE_MANIFEST_FILE)):
            bases.append(repo_id)
            if not shas and latest is None:
                continue  # pure metadata: nothing to pull here
        repos.append(CachedRepo(repo_id, latest, latest_ref, refs))
    return repos, bases, unusable


def short_member_name(repo_id: str) -> str:
    """The last ``__`` segment of a repo id (``github.com__acme__billing`` → ``billing``)."""
    return repo_id.rsplit("__", 1)[-1] or repo_id


def dedup_member_name(name: str, used: set[str]) -> str:
    """``name``, or the first free ``name-2``, ``name-3``… (the first taker keeps the bare name)."""
    if name not in used:
        return name
    n = 2
    while f"{name}-{n}" in used:
        n += 1
    return f"{name}-{n}"


# Names a member directory may not take: they would resolve to DIR itself, its
# parent, or the workspace's own store directory.
_RESERVED_NAMES = frozenset({".", "..", STORE_DIR})


@dataclass
class _Consumer:
    """The workspace being refreshed: its members, and which cache repo each one holds."""

    into: Path
    members: list[Member]
    used_names: set[str]
    by_repo_id: dict[str, int]


def _load_consumer(into: Path, out: list[str]) -> tuple[str, _Consumer]:
    """The existing synthesized workspace at ``into`` (or an empty one) and its name.

    A member whose path a pull may not write to is left out, with a warning.
    """
    # A manifest that does not load is an error rather than silently re-synthesized:
    # its names and paths are how earlier runs laid out this directory.
    # Escaping members are read here only to be left out below (path_problem), never followed.
    existing = load_manifest(into, allow_outside_root=True) if os.path.lexists(manifest_path(into)) else None
    name = existing.name if existing is not None else (Path(os.path.realpath(into)).name or ".")
    consumer = _Consumer(into, [], set(), {})
    for m in existing.members if existing is not None else []:
        problem = path_problem(into, m.path)
        if problem is not None:
            out.append(f"  warning: member `{m.name}` left out of the workspace — {_refusal(problem, into)}\n")
            continue
        consumer.used_names.add(m.name)
        consumer.members.append(m)
        own = _own_settings(into / m.path)
        if own is not None and own.repo_id is not None:
            consumer.by_repo_id[own.repo_id] = len(consumer.members) - 1
    return name, consumer


def _sha_for(remote: GitRemote, repo: CachedRepo, member_ref: str | None) -> tuple[str, str | None] | str:
    """(sha, ref to note) to pull for ``repo``, or the warning line saying why it is skipped."""
    if member_ref is not None:
        try:
            sha = read_pointer(remote, repo.repo_id, member_ref)
        except CceError:
            sha = None  # a ref that cannot even name a key has no pointer
        if not sha:
            return f"  warning: skipped {repo.repo_id} — no pointer on `{member_ref}` (the member's `sync.ref`)\n"
        return sha, (member_ref if member_ref != DEFAULT_REF else None)
    if repo.latest_sha is not None:
        return repo.latest_sha, repo.latest_ref
    if len(repo.refs) > 1:
        return (f"  warning: skipped {repo.repo_id} — no refs/{DEFAULT_REF}; available refs: {', '.join(repo.refs)} "
                "— set `sync.ref` in the member's .cce/config or pull it with `cce sync pull --latest --ref <name>`\n")
    return (f"  warning: skipped {repo.repo_id} — no latest pointer on `{DEFAULT_REF}` (nothing pushed for the ref "
            "yet)\n")


def pull_all(into: Path, *, remote_url: str | None = None, corpus: str | None = None) -> str:
    """Pull every repo of the cache into a member directory under ``into`` and write the workspace there.

    Skips are warnings, not failures. A member already at its latest sha is
    reported up to date and nothing of it is rewritten. The cache's knowledge
    corpus (``corpus``, or its only one) is installed into ``into`` itself.
    """
    into = Path(into)
    try:
        into.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CceError(f"cannot create {into}: {exc.strerror or exc}") from exc
    url = remote_url or load_sync_settings(into).remote
    if not url:
        raise CceError(NO_REMOTE_FOR_ALL)
    # Consumers open the cache with LFS off, so no read ever commits a `.gitattributes` to it.
    remote = open_remote(SyncSettings(remote=url), lfs=False)
    repos, bases, unusable = enumerate_cache(remote)
    corpora = knowledge_service.list_corpora(remote)
    out = [f"remote        : {url}\n"]
    if not repos and not unusable:
        if not corpora:
            out.append("\nThe cache is empty — nothing has been pushed yet.\n")
        else:  # nothing to make members of, but the corpus still installs
            out.append("\nNo code repos cached — the cache carries only knowledge corpora.\n\n")
            out.append(knowledge_service.pull_all_step(into, url, corpora, corpus))
        return "".join(out)
    out.append("\n")
    workspace_name, ws = _load_consumer(into, out)
    pulled = up_to_date = 0
    skipped = len(unusable)
    for repo_id in unusable:
        out.append(f"  warning: skipped {repo_id!r} — not a usable repo_id (it must be one path segment of "
                   "[A-Za-z0-9._-])\n")
    seen: set[str] = set()
    for repo in repos:
        seen.add(repo.repo_id)
        mapped = ws.by_repo_id.get(repo.repo_id)
        own = _own_settings(into / ws.members[mapped].path) if mapped is not None else None
        member_ref = own.ref if own is not None else None
        resolved = _sha_for(remote, repo, member_ref)
        if isinstance(resolved, str):
            out.append(resolved)
            skipped += 1
            continue
        sha, noted = resolved
        note = f"  (ref {noted})" if noted else ""
        short = short_member_name(repo.repo_id)
        if mapped is None:
            # Re-adopt a member whose config went missing (its `.cce` deleted by
            # hand) instead of creating `<name>-2` beside its directory.
            orphan = next((i for i, m in enumerate(ws.members) if m.name == short
                           and (_own_settings(into / m.path) or SyncSettings()).repo_id is None), None)
            if orphan is not None:
                out.append(f"  note: re-adopting existing member `{ws.members[orphan].name}` for {repo.repo_id} "
                           "(its config was missing — rewritten)\n")
                ws.by_repo_id[repo.repo_id] = mapped = orphan
        if mapped is not None:
            name, rel = ws.members[mapped].name, ws.members[mapped].path
        else:
            if short in _RESERVED_NAMES:
                out.append(f"  warning: skipped {repo.repo_id} — its member name `{short}` cannot be a directory "
                           f"under {into}\n")
                skipped += 1
                continue
            name = rel = dedup_member_name(short, ws.used_names)
            problem = path_problem(into, rel)
            if problem is not None:
                out.append(f"  warning: skipped {repo.repo_id} — {_refusal(problem, into)}\n")
                skipped += 1
                continue
        member_dir = into / rel
        # What a later `cce sync pull --latest --dir <member>` needs; a hand-set
        # `sync.ref` survives every refresh, and `lfs: false` keeps consumers read-only.
        member_settings = SyncSettings(remote=url, lfs=False, repo_id=repo.repo_id, ref=member_ref,
                                       auto_pull=False, retention=Retention())
        marker = load_marker(member_dir)
        if marker is not None and marker.sha == sha:
            _save_settings_if_changed(member_dir, member_settings)
            row = f"  {name:<16} up-to-date  {repo.repo_id}@{sha}{note}\n"
            up_to_date += 1
        else:
            try:
                # Consumer mode has no source to rebuild from: a pack difference is reported, not refused.
                installed = fetch_and_install(member_dir, remote, repo.repo_id, sha, allow_drift=True)
                artifact = installed.artifact
            except (CceError, OSError) as exc:
                out.append(f"  warning: skipped {repo.repo_id} — {exc}\n")
                skipped += 1
                continue
            _save_settings_if_changed(member_dir, member_settings)
            row = (f"  {name:<16} pulled      {repo.repo_id}@{sha}  chunks {artifact.manifest.chunk_count}  "
                   f"({short_checksum(artifact.manifest.checksum)}){note}\n")
            if installed.drift is not None and installed.drift.affected:
                row += f"  note: {installed.drift.sets(f'{name} was')} — {installed.drift.files()}\n"
            pulled += 1
        if mapped is None:
            ws.used_names.add(name)
            ws.by_repo_id[repo.repo_id] = len(ws.members)
            ws.members.append(Member(name, rel, STORE_ONLY, name))
        out.append(row)

    # Vanished repos are reported, never deleted: the member may still be wanted.
    for m in ws.members:
        own = _own_settings(into / m.path)
        if own is not None and own.repo_id is not None and own.repo_id not in seen:
            out.append(f"  warning: {m.name} ({own.repo_id}) is no longer in the cache — left in place\n")

    out.append(knowledge_service.pull_all_step(into, url, corpora, corpus))
    applied, edges = _apply_published(remote, bases, ws, out)
    if not ws.members:
        out.append("\nNothing pullable — no workspace written.\n")
        return "".join(out)
    ws.members.sort(key=lambda m: m.path)
    manifest = Manifest(workspace_name, ws.members, 1)
    _write_if_changed(Path(manifest_path(into)), manifest_yaml(manifest).encode("utf-8"),
                      lambda: save_manifest(manifest, into))
    if applied:
        graph = WorkspaceGraph([m.name for m in manifest.members], [Edge(*e) for e in sorted(edges)])
        _write_if_changed(Path(graph_path(into)), graph.to_json().encode("utf-8"), lambda: save_graph(graph, into))
        out.append(f"\nmetadata      : {applied} published workspace manifest{'' if applied == 1 else 's'} applied "
                   f"· {_plural(len(graph.edges), 'cross-member edge')} installed")
    _save_settings_if_changed(into, _root_settings(into, url))
    out.append(f"\nworkspace     : {manifest_path(into)} ({_plural(len(manifest.members), 'member')})\n")
    out.append(f"summary       : {pulled} pulled · {up_to_date} up-to-date · {skipped} skipped\n")
    return "".join(out)


def _apply_published(remote: GitRemote, bases: list[str], ws: _Consumer,
                     out: list[str]) -> tuple[int, set[tuple[str, str, str]]]:
    """Apply each published manifest to its own members; (manifests applied, edges in consumer names).

    Consumer names never change (they are the refresh-stable layout), so a
    published graph's member names are rewritten to them; when two published
    workspaces share a member name, the first in repo_id order kept the bare
    name and the other is warned about.
    """
    applied = 0
    edges: set[tuple[str, str, str]] = set()
    for base in bases:
        published = fetch_published_workspace(remote, base)
        if published is None:
            continue
        applied += 1
        names: dict[str, str] = {}
        for pm in published.manifest.members:
            index = ws.by_repo_id.get(member_repo_id(base, pm.name))
            if index is None:
                continue
            member = ws.members[index]
            member.type, member.package = pm.type, pm.package
            names[pm.name] = member.name
            if member.name != pm.name:
                out.append(f"  warning: workspace {base}: member name `{pm.name}` was taken by an earlier repo — "
                           f"kept as `{member.name}` (first in repo_id order wins)\n")
        for e in published.graph.edges if published.graph is not None else []:
            if e.source in names and e.target in names:
                edges.add((names[e.source], names[e.target], e.via))
    return applied, edges


def _root_settings(into: Path, url: str) -> SyncSettings:
    """The consumer root's settings: what it already says, with the remote this run used."""
    own = _own_settings(into)
    return SyncSettings(remote=url, lfs=False) if own is None else replace(own, remote=url)

