"""Workspaces: several codebases under one root, each indexed on its own.

A workspace is described by ``<root>/.cce/workspace.yml`` (members: name, path,
type, package). This module finds members by their project manifests, writes
that file in the family's canonical byte form, reads it back, and derives the
dependency edges between members (``<root>/.cce/workspace-graph.json``).
Everything here is about project layout; searching across members lives in
``federation``.

Member types are labels of the family's ``workspace.yml`` format (the layout a
directory was recognised by), not language support: nothing here parses code.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE

MANIFEST_FILE = "workspace.yml"
GRAPH_FILE = "workspace-graph.json"
WORKSPACE_DIR = ".cce"

# The six member types of the format, in the family's order. They are layout
# labels, not language support, so they are kept as one string rather than as
# quoted names that tests/test_core_is_language_neutral.py would read as such.
MEMBER_TYPES = tuple("rails-app ruby-engine ruby-gem typescript javascript store-only".split())  # noqa: SIM905
_RAILS_APP, _ENGINE, _GEM, _TYPED, _UNTYPED, _STORE_ONLY = MEMBER_TYPES

_PRUNED_DIRS = frozenset({".git", ".cce", "node_modules", ".venv", "venv", "__pycache__", "dist", "build"})
_GEMSPEC_KEYWORDS = ("add_runtime_dependency", "add_development_dependency", "add_dependency")
_PACKAGE_SECTIONS = ("dependencies", "devDependencies", "peerDependencies")


@dataclass
class Member:
    name: str
    path: str  # relative to the root, '/'-separated; "." for the root itself
    type: str
    package: str


@dataclass
class Manifest:
    name: str
    members: list[Member] = field(default_factory=list)
    version: int = 1

    def member_names(self) -> list[str]:
        return [m.name for m in self.members]


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    via: str


@dataclass
class WorkspaceGraph:
    members: list[str]
    edges: list[Edge]

    def targets_from(self, member: str) -> list[str]:
        return sorted({e.target for e in self.edges if e.source == member})

    def to_json(self) -> str:
        body = {"members": self.members,
                "edges": [{"from": e.source, "to": e.target, "via": e.via} for e in self.edges]}
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def manifest_path(root: Path | str) -> str:
    return os.path.join(str(root), WORKSPACE_DIR, MANIFEST_FILE)


def graph_path(root: Path | str) -> str:
    return os.path.join(str(root), WORKSPACE_DIR, GRAPH_FILE)


def _lines(text: str) -> list[str]:
    return [line.strip(UNICODE_WHITESPACE) for line in text.split("\n")]


def _read_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


# -- detection -------------------------------------------------------------


def _has_extension(name: str, ext: str) -> bool:
    """The reference's notion of an extension: text after the last dot, not for a leading dot."""
    dot = name.rfind(".")
    return dot > 0 and name[dot + 1 :] == ext


def _child_dirs(directory: Path) -> list[tuple[Path, bool]]:
    """The subdirectories worth visiting, sorted by name, each with whether it is a symbolic link."""
    from cce_core.indexing.walker import nameable

    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    out = []
    for entry in entries:
        # A name that is not UTF-8 could not be written into the manifest.
        if entry.name in _PRUNED_DIRS or entry.name.startswith(".") or not nameable(entry.name):
            continue
        try:
            if entry.is_dir():  # follows symbolic links, as the reference does
                out.append((entry.name, entry.is_symlink()))
        except OSError:
            continue
    return [(directory / name, link) for name, link in sorted(out)]


def find_gemspec(directory: Path) -> Path | None:
    try:
        names = [e.name for e in os.scandir(directory) if _has_extension(e.name, "gemspec")]
    except OSError:
        return None
    for name in sorted(names):
        if (directory / name).is_file():
            return directory / name
    return None


def _has_engine_file(directory: Path) -> bool:
    lib = directory / "lib"
    if not lib.is_dir():
        return False
    for _dirpath, _dirnames, filenames in os.walk(lib):  # symbolic links are not followed
        if "engine.rb" in filenames and os.path.isfile(os.path.join(_dirpath, "engine.rb")) \
                and not os.path.islink(os.path.join(_dirpath, "engine.rb")):
            return True
    return False


def first_string_literal(text: str) -> str | None:
    """The first "..." or '...' in ``text``; an unclosed quote runs to the end."""
    for i, ch in enumerate(text):
        if ch in "\"'":
            end = text.find(ch, i + 1)
            return text[i + 1 :] if end < 0 else text[i + 1 : end]
    return None


def gem_name(text: str) -> str | None:
    for line in _lines(text):
        at = line.find(".name")
        if at < 0:
            continue
        rhs = line[at + len(".name") :].lstrip(UNICODE_WHITESPACE)
        if rhs.startswith("="):
            name = first_string_literal(rhs[1:])
            if name is not None:
                return name
    return None


def _package_json_name(path: Path) -> str | None:
    text = _read_text(path)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    name = value.get("name") if isinstance(value, dict) else None
    return name if isinstance(name, str) else None


def classify(directory: Path) -> tuple[str, str] | None:
    """(type, package) when ``directory`` is a member, first matching rule wins."""
    basename = directory.name
    gemspec = find_gemspec(directory)
    if gemspec is not None:
        engine = ((directory / "app").is_dir() or (directory / "config" / "routes.rb").is_file()
                  or _has_engine_file(directory))
        text = _read_text(gemspec)
        package = gem_name(text) if text is not None else None
        if package is None:
            package = gemspec.name[: gemspec.name.rfind(".")]
        return (_ENGINE if engine else _GEM), package
    if (directory / "Gemfile").is_file() and (directory / "config" / "application.rb").is_file():
        return _RAILS_APP, basename
    package_json = directory / "package.json"
    if package_json.is_file():
        kind = _TYPED if (directory / "tsconfig.json").is_file() else _UNTYPED
        return kind, _package_json_name(package_json) or basename
    return None


def detect_members(root: Path) -> list[Member]:
    found: list[tuple[str, str, str, str]] = []  # path, type, package, basename
    base = os.path.realpath(root)
    # Real paths of the directories being descended: a symbolic link back to one
    # of them would otherwise be walked forever. The descent keeps its own stack
    # (a tree thousands of levels deep must not reach the recursion limit): a
    # ("leave", real path) entry is popped once that directory's subtree is done.
    ancestors = {base}
    stack: list[tuple[str, Path, str]] = []  # (action, directory, its real path)

    def push_children(directory: Path, real: str) -> None:
        # A real path is resolved only through a link: elsewhere it extends the parent's, so a
        # deep tree costs no more than its size.
        for child, link in reversed(_child_dirs(directory)):
            stack.append(("visit", child, os.path.realpath(child) if link else os.path.join(real, child.name)))

    push_children(root, base)
    while stack:
        action, directory, real = stack.pop()
        if action == "leave":
            ancestors.discard(real)
            continue
        if real in ancestors or not _inside(real, base):
            continue  # a loop, or a link out of the workspace (whose members stay inside)
        try:
            hit = classify(directory)
        except OSError:  # a path longer than the system allows, a directory gone meanwhile
            continue
        if hit is not None:
            rel = directory.relative_to(root).as_posix()
            found.append((rel, hit[0], hit[1], directory.name))
            continue  # members do not nest
        ancestors.add(real)
        stack.append(("leave", directory, real))
        push_children(directory, real)
    if not found:
        hit = classify(root)
        if hit is not None:
            found.append((".", hit[0], hit[1], root.name))
    found.sort(key=lambda d: d[0])
    return [Member(name, rel, kind, package)
            for name, (rel, kind, package, _basename) in zip(_unique_names([d[3] for d in found]), found,
                                                             strict=True)]


def _unique_names(basenames: list[str]) -> list[str]:
    """One distinct member name per basename, in order: repeats get the smallest free ``-N`` (N >= 2).

    A minted name never equals another member's own basename, so ``a/widget``,
    ``b/widget`` and a directory really named ``widget-2`` give ``widget``,
    ``widget-3`` and ``widget-2``.
    """
    reserved = set(basenames)
    used: set[str] = set()
    names = []
    for basename in basenames:
        name = basename
        if name in used:
            n = 2
            while f"{basename}-{n}" in used or f"{basename}-{n}" in reserved:
                n += 1
            name = f"{basename}-{n}"
        used.add(name)
        names.append(name)
    return names


def _inside(path: str, base: str) -> bool:
    return path == base or os.path.commonpath([path, base]) == base


def build_manifest(root: Path) -> Manifest:
    try:
        name = Path(os.path.realpath(root)).name or root.name or "."
    except OSError:
        name = root.name or "."
    return Manifest(name, detect_members(root))


# -- the manifest file -----------------------------------------------------


def yaml_scalar(text: str) -> str:
    bare = (bool(text) and all((c.isascii() and c.isalnum()) or c in "-_/." for c in text)
            and not text.startswith(("-", ".")))
    if bare:
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def manifest_yaml(manifest: Manifest) -> str:
    """The canonical bytes every engine writes for a manifest."""
    out = ["version: 1\n", f"name: {yaml_scalar(manifest.name)}\n", "members:\n"]
    for m in manifest.members:
        out.append(f"  - name: {yaml_scalar(m.name)}\n")
        out.append(f"    path: {yaml_scalar(m.path)}\n")
        out.append(f"    type: {m.type}\n")
        out.append(f"    package: {yaml_scalar(m.package)}\n")
    return "".join(out)


def _invalid(detail: str) -> CceError:
    return CceError(f"invalid workspace.yml: {detail}")


def parse_manifest(text: str) -> Manifest:
    """Read a manifest. Every scalar stays a string (``yes``, ``on`` and ``010`` are text)."""
    import yaml

    from cce_core.foundation.nesting import MAX_YAML_DEPTH, yaml_too_deep

    if yaml_too_deep(text):
        raise _invalid(f"nested more than {MAX_YAML_DEPTH} levels deep — refusing to read it")
    try:
        raw = yaml.load(text, Loader=yaml.BaseLoader)
    except yaml.MarkedYAMLError as exc:
        where = exc.problem_mark or exc.context_mark
        detail = " ".join(p for p in (exc.context, exc.problem) if p) or "malformed YAML"
        if where is not None:
            detail += f" at line {where.line + 1} column {where.column + 1}"
        raise _invalid(detail) from exc
    except yaml.YAMLError as exc:
        raise _invalid(" ".join(str(exc).split())) from exc
    except RecursionError:  # the pre-scan makes this unreachable; kept as a last guard
        raise _invalid("nested too deeply to read") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise _invalid("expected a mapping with version, name and members")
    version_text = raw.get("version", "1")
    if not isinstance(version_text, str) or not version_text.isascii() or not version_text.isdigit() \
            or int(version_text) > 0xFFFFFFFF:
        raise _invalid(f"version: expected a non-negative integer, got {version_text!r}")
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise _invalid("name: expected a string")
    raw_members = raw.get("members", [])
    if not isinstance(raw_members, list):
        raise _invalid("members: expected a list")
    members = []
    for i, item in enumerate(raw_members):
        if not isinstance(item, dict):
            raise _invalid(f"members[{i}]: expected a mapping")
        values = []
        for key in ("name", "path", "type", "package"):
            if key not in item:
                raise _invalid(f"members[{i}]: missing field `{key}`")
            if not isinstance(item[key], str):
                raise _invalid(f"members[{i}].{key}: expected a string")
            values.append(item[key])
        if values[2] not in MEMBER_TYPES:
            raise CceError(f"unknown member type: {values[2]}")
        members.append(Member(*values))
    members.sort(key=lambda m: m.path)
    return Manifest(name, members, int(version_text))


ALLOW_OUTSIDE_ENV = "CCE_ALLOW_OUTSIDE_ROOT"
"""Set to ``1`` to let a LOCAL manifest name members outside its root (``cce index --allow-outside-root``)."""


def outside_root_allowed() -> bool:
    """Whether the user opted in to members outside the root for this process."""
    return os.environ.get(ALLOW_OUTSIDE_ENV, "").strip() == "1"


def member_path_problem(root: Path, rel: str) -> str | None:
    """Why the member path ``rel`` is not a directory inside ``root``; None when it is.

    Refused: an empty path, an absolute one, a ``..`` segment (either
    separator), and a path whose directory or ``.cce`` store directory resolves
    (after symbolic links) outside the root.
    """
    if not rel or "\0" in rel:
        return "has an empty or unreadable path"
    if rel.startswith(("/", "\\")) or PureWindowsPath(rel).drive or os.path.isabs(rel):
        return f"has an absolute path `{rel}`"
    if ".." in rel.replace("\\", "/").split("/"):
        return f"has a path `{rel}` that climbs out of the workspace with `..`"
    base = os.path.realpath(root)
    member = os.path.join(base, rel)
    for target in (member, os.path.join(member, WORKSPACE_DIR)):
        if not _inside(os.path.realpath(target), base):
            return f"has a path `{rel}` that leads through a symbolic link out of the workspace"
    return None


def check_member_paths(root: Path, manifest: Manifest, allow_outside_root: bool = False) -> None:
    """Raise :class:`CceError` for the first member whose path leaves ``root`` (unless allowed)."""
    if allow_outside_root:
        return
    for m in manifest.members:
        problem = member_path_problem(root, m.path)
        if problem is not None:
            raise CceError(f"workspace member '{m.name}' {problem}; refused, nothing is read or written outside "
                           f"{root} (for a local manifest that means it: --allow-outside-root or "
                           f"{ALLOW_OUTSIDE_ENV}=1)")


def load_manifest(root: Path, *, allow_outside_root: bool | None = None) -> Manifest:
    """The manifest at ``root``, every member inside the root.

    ``allow_outside_root`` None follows :func:`outside_root_allowed`; Sync
    passes False, since a manifest it installed came from someone else.
    """
    path = manifest_path(root)
    text = _read_text(Path(path))
    if text is None:
        raise CceError(f"no workspace manifest at {path} — run `cce workspace init` first")
    manifest = parse_manifest(text)
    allowed = outside_root_allowed() if allow_outside_root is None else allow_outside_root
    check_member_paths(root, manifest, allowed)
    return manifest


def save_manifest(manifest: Manifest, root: Path) -> str:
    from cce_core.indexing.store import atomic_write

    path = manifest_path(root)
    try:
        atomic_write(Path(path), manifest_yaml(manifest).encode("utf-8"))
    except OSError as exc:
        raise CceError(f"could not write manifest: {exc.strerror or exc}") from exc
    return path


# -- edges between members -------------------------------------------------


def deps_from_gemspec(text: str) -> list[str]:
    out = []
    for line in _lines(text):
        for keyword in _GEMSPEC_KEYWORDS:
            at = line.find(keyword)
            if at >= 0:
                name = first_string_literal(line[at + len(keyword) :])
                if name is not None:
                    out.append(name)
                break
    return out


def deps_from_gemfile(text: str) -> list[str]:
    out = []
    for line in _lines(text):
        if line.startswith("gem") and line[3:4] in (" ", "(", "\t", '"'):
            name = first_string_literal(line[3:])
            if name is not None:
                out.append(name)
    return out


def deps_from_package_json(text: str) -> list[str]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return []
    if not isinstance(value, dict):
        return []
    out: list[str] = []
    for section in _PACKAGE_SECTIONS:
        deps = value.get(section)
        if isinstance(deps, dict):
            out.extend(sorted(deps))  # the reference reads JSON objects into sorted maps
    return out


def declared_deps(root: Path, member: Member) -> list[tuple[str, str]]:
    """(dependency name, via) pairs from the manifests at the top of a member."""
    directory = root / member.path
    out: list[tuple[str, str]] = []
    gemspec = find_gemspec(directory)
    if gemspec is not None and (text := _read_text(gemspec)) is not None:
        out.extend((name, "gemspec") for name in deps_from_gemspec(text))
    gemfile = directory / "Gemfile"
    if gemfile.is_file() and (text := _read_text(gemfile)) is not None:
        out.extend((name, "gemfile") for name in deps_from_gemfile(text))
    package_json = directory / "package.json"
    if package_json.is_file() and (text := _read_text(package_json)) is not None:
        out.extend((name, "package.json") for name in deps_from_package_json(text))
    return out


def build_graph(root: Path, manifest: Manifest) -> WorkspaceGraph:
    def resolve(dep: str) -> str | None:
        return next((m.name for m in manifest.members if m.package == dep or m.name == dep), None)

    edges: set[tuple[str, str, str]] = set()
    for member in manifest.members:
        for dep, via in declared_deps(root, member):
            target = resolve(dep)
            if target is not None and target != member.name:
                edges.add((member.name, target, via))
    return WorkspaceGraph(manifest.member_names(), [Edge(*e) for e in sorted(edges)])


def parse_graph(text: str) -> WorkspaceGraph:
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError("expected an object")
        members = raw.get("members", [])
        edges_raw = raw.get("edges", [])
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            raise ValueError("members: expected a list of strings")
        if not isinstance(edges_raw, list):
            raise ValueError("edges: expected a list")
        edges = []
        for e in edges_raw:
            if not isinstance(e, dict) or not all(isinstance(e.get(k), str) for k in ("from", "to", "via")):
                raise ValueError("each edge needs string from, to and via")
            edges.append(Edge(e["from"], e["to"], e["via"]))
    except RecursionError:
        raise CceError("invalid workspace-graph.json: nested too deeply to read") from None
    except ValueError as exc:
        raise CceError(f"invalid workspace-graph.json: {exc}") from exc
    return WorkspaceGraph(members, edges)


def save_graph(graph: WorkspaceGraph, root: Path) -> str:
    from cce_core.indexing.store import atomic_write

    path = graph_path(root)
    try:
        atomic_write(Path(path), graph.to_json().encode("utf-8"))
    except OSError as exc:
        raise CceError(f"could not write workspace graph: {exc.strerror or exc}") from exc
    return path


def load_graph_or_empty(root: Path, manifest: Manifest) -> WorkspaceGraph:
    """The saved graph, or no edges when it is missing or unreadable."""
    text = _read_text(Path(graph_path(root)))
    if text is not None:
        try:
            graph = parse_graph(text)
        except CceError:
            graph = None
        if graph is not None:
            if not graph.members:
                graph.members = manifest.member_names()
            return graph
    return WorkspaceGraph(manifest.member_names(), [])


def member_line(m: Member) -> str:
    return f"  {m.name:<16} {m.type:<12} {m.path} · package {m.package}"


def edge_line(e: Edge) -> str:
    return f"  {e.source} -> {e.target}  (via {e.via})"
