"""Symbol navigation, one function per question an agent asks: where is X, who uses it, what breaks.

The CLI (``cce symbols|refs|callers|callees|impact|map``) and the MCP tools
(``find_symbol``, ``find_references``, ``call_graph``, ``change_impact``,
``repo_map``) call these and render what comes back, so both front-ends
answer the same rows. The symbol graph itself (definitions, references, name
resolution, call edges) is :mod:`cce_core.symbols.index`; what is decided
here is what the user sees: compact rows (signature and location, never a
body — ``expand_chunk`` gives that), a cap on every answer with the total it
cut from, the diff → touched symbols → callers → tests walk of
``change_impact``, and the PageRank of ``repo_map``.

Every row has ``file_path``, ``line``, ``name`` and ``kind``; a reference
row's ``line`` is the line of the use (an import statement included). Names
and signatures come from the store, which holds redacted text, so nothing a
secrets profile removed comes back here.
"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cce_core.foundation.errors import CceError

if TYPE_CHECKING:
    from cce_core.symbols.index import SymbolIndex
    from cce_core.symbols.model import CallEdge, Definition, Reference

# Rows an answer holds unless the caller asks for fewer or more; the hard ceiling keeps one answer bounded.
DEFAULT_LIMIT = 50
MAX_LIMIT = 2_000
MAX_DEPTH = 5
DEFAULT_MAP_TOKENS = 1_024
MAX_MAP_TOKENS = 16_384
DIRECTIONS = ("callers", "callees", "both")
GIT_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class SymbolRow:
    """One compact row: what, where, and the little context that tells two rows apart."""

    name: str
    kind: str
    file_path: str
    line: int
    qualified_name: str | None = None
    signature: str | None = None
    end_line: int | None = None
    enclosing: str | None = None  # a reference or call: the definition it sits in (None: module level)
    confidence: str | None = None  # a resolved use: same-file | import | global
    target: str | None = None  # a call edge: the other end, "qualified_name file:line"
    depth: int | None = None  # a call edge: 1 for a direct caller or callee, 2 for one further, ...
    direction: str | None = None  # a call edge: "caller" (the row names who calls) or "callee" (what is called)
    chunk_id: str | None = None
    member: str | None = None  # in a workspace: the member whose file this is (file_path is relative to it)

    def place(self) -> str:
        """The file as a reader names it: ``member:path`` in a workspace, else the path."""
        return f"{self.member}:{self.file_path}" if self.member else self.file_path

    def as_json(self) -> dict[str, Any]:
        """The row as a JSON object, without the fields this kind of row does not use."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}


@dataclass(frozen=True)
class SymbolAnswer:
    """Rows for one question, capped: ``total`` is how many there were before the cap."""

    query: str
    rows: list[SymbolRow]
    total: int
    notice: str = ""  # why the answer may be incomplete (no symbol data, files without it); empty when whole

    @property
    def truncated(self) -> bool:
        return self.total > len(self.rows)

    def by_file(self) -> list[tuple[str, list[SymbolRow]]]:
        """The rows grouped by file (``member:path`` in a workspace), files and rows in answer order."""
        groups: dict[str, list[SymbolRow]] = {}
        for row in self.rows:
            groups.setdefault(row.place(), []).append(row)
        return list(groups.items())

    def as_json(self, list_key: str) -> dict[str, Any]:
        return {"query": self.query, list_key: [r.as_json() for r in self.rows], "total": self.total,
                "truncated": self.truncated, **({"notice": self.notice} if self.notice else {})}


@dataclass(frozen=True)
class ImpactAnswer:
    """What a change touches: the symbols its hunks fall in, who calls them, and the tests that use them."""

    diff: str  # what was compared: "working tree vs HEAD", "staged", "working tree vs REV"
    changed_files: list[str]
    touched: list[SymbolRow]
    callers: list[SymbolRow]
    tests: list[SymbolRow]
    totals: dict[str, int]
    notice: str = ""

    @property
    def truncated(self) -> bool:
        return (self.totals["touched"] > len(self.touched) or self.totals["callers"] > len(self.callers)
                or self.totals["tests"] > len(self.tests))

    def as_json(self) -> dict[str, Any]:
        return {"diff": self.diff, "changed_files": self.changed_files,
                "touched": [r.as_json() for r in self.touched], "callers": [r.as_json() for r in self.callers],
                "tests": [r.as_json() for r in self.tests], "totals": self.totals, "truncated": self.truncated,
                **({"notice": self.notice} if self.notice else {})}


@dataclass(frozen=True)
class MapFile:
    file_path: str
    rank: float
    rows: list[SymbolRow]


@dataclass(frozen=True)
class RepoMap:
    """The most central files and their most central definitions, within a token budget."""

    tokens: int  # the budget asked for
    used_tokens: int  # what the rendered outline costs
    files: list[MapFile]
    total_files: int
    notice: str = ""

    def rows(self) -> list[SymbolRow]:
        return [row for f in self.files for row in f.rows]

    def as_json(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "used_tokens": self.used_tokens, "total_files": self.total_files,
                "files": [{"file_path": f.file_path, "rank": f.rank, "rows": [r.as_json() for r in f.rows]}
                          for f in self.files],
                "rows": [r.as_json() for r in self.rows()], **({"notice": self.notice} if self.notice else {})}


# --------------------------------------------------------------------------- opening


@dataclass(frozen=True)
class WorkspaceTarget:
    """Every member of the workspace at ``root`` (or the one ``package`` names), each through its own store."""

    root: Path
    package: str | None = None


Target = Path | WorkspaceTarget  # a store file, or a workspace


def _stores(target: Target) -> list[tuple[str | None, Path, Path]]:
    """(member name or None, the directory its paths are relative to, its store) for each store to ask."""
    from cce_core.indexing.store import default_store_path

    if isinstance(target, Path):
        return [(None, Path("."), target)]  # a lone store: its callers know the project directory
    from cce_core.workspace.manifest import load_manifest

    members = load_manifest(target.root).members
    if target.package is not None:
        members = [m for m in members if target.package in (m.name, m.package)]
        if not members:
            raise CceError(f"no workspace member or package named {target.package!r} — see `cce workspace list`")
    out: list[tuple[str | None, Path, Path]] = []
    for m in members:
        member_root = target.root / m.path
        store = default_store_path(member_root)
        if not store.exists():
            raise CceError(f"member '{m.name}' is not indexed ({store} missing) — run `cce index --workspace`")
        out.append((m.name, member_root, store))
    return out


def _indexes(target: Target) -> list[tuple[str | None, Path, SymbolIndex]]:
    return [(member, root, open_index(store)) for member, root, store in _stores(target)]


def _in_member(rows: Iterable[SymbolRow], member: str | None) -> list[SymbolRow]:
    return list(rows) if member is None else [replace(r, member=member) for r in rows]


def _notices(parts: Iterable[tuple[str | None, SymbolIndex]]) -> str:
    said = [(f"{member}: " if member else "") + _notice(index) for member, index in parts if _notice(index)]
    return "; ".join(said)


# The last few symbol indexes opened, keyed by the store file's identity: an MCP session asks many questions of
# one store, and loading it again per question would cost more than the answer. A re-index replaces the store
# file (write and rename), which changes the key.
_OPENED: dict[tuple[str, int, int, int], SymbolIndex] = {}
_OPENED_LIMIT = 4


def open_index(store_path: Path) -> SymbolIndex:
    """The symbol index of the store at ``store_path``; one ``error:`` line when there is no store."""
    from cce_core.symbols.index import open_symbols

    try:
        stat = store_path.stat()
    except OSError:
        return open_symbols(store_path)  # it raises the one-line error
    key = (str(store_path.resolve()), stat.st_ino, stat.st_mtime_ns, stat.st_size)
    found = _OPENED.get(key)
    if found is None:
        found = open_symbols(store_path)
        if len(_OPENED) >= _OPENED_LIMIT:
            _OPENED.pop(next(iter(_OPENED)))
        _OPENED[key] = found
    return found


def _notice(index: SymbolIndex) -> str:
    return index.unavailable_reason if not index.available or getattr(index, "missing", None) else ""


def _limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if limit < 1:
        raise CceError(f"--limit must be at least 1 (got {limit})")
    return min(limit, MAX_LIMIT)


def _depth(depth: int) -> int:
    if not 1 <= depth <= MAX_DEPTH:
        raise CceError(f"--depth must be between 1 and {MAX_DEPTH} (got {depth})")
    return depth


def _name(name: str) -> str:
    from cce_core.foundation.textrules import UNICODE_WHITESPACE

    wanted = name.strip(UNICODE_WHITESPACE)
    if not wanted:
        raise CceError("give a symbol name, e.g. `render` or `Flask.route`")
    return wanted


# --------------------------------------------------------------------------- rows


def definition_row(d: Definition) -> SymbolRow:
    return SymbolRow(name=d.name, kind=d.kind, file_path=d.file_path, line=d.line, qualified_name=d.qualified_name,
                     signature=d.signature or None, end_line=d.end_line, chunk_id=d.chunk_id)


def reference_row(r: Reference, confidence: str | None = None) -> SymbolRow:
    return SymbolRow(name=r.name, kind=r.kind, file_path=r.file_path, line=r.line, enclosing=r.enclosing,
                     confidence=confidence, chunk_id=r.chunk_id)


def _where(d: Definition) -> str:
    return f"{d.qualified_name} {d.file_path}:{d.line}"


def _edge_row(edge: CallEdge, depth: int, towards: str) -> SymbolRow:
    """An edge seen from the queried end: a caller row names the caller, a callee row the callee."""
    if towards == "callers":
        other = edge.caller_def
        return SymbolRow(name=edge.caller or "<module>", kind=other.kind if other else "module",
                         file_path=edge.file_path, line=edge.line, qualified_name=edge.caller,
                         signature=other.signature if other else None, confidence=edge.confidence,
                         target=_where(edge.callee_def), depth=depth, direction="caller",
                         chunk_id=other.chunk_id if other else None)
    callee = edge.callee_def
    return SymbolRow(name=edge.callee, kind=callee.kind, file_path=edge.file_path, line=edge.line,
                     qualified_name=callee.qualified_name, signature=callee.signature or None,
                     enclosing=edge.caller, confidence=edge.confidence, target=_where(callee), depth=depth,
                     direction="callee", chunk_id=callee.chunk_id)


# --------------------------------------------------------------------------- find_symbol / find_references


def find_symbol(target: Target, name: str, *, fuzzy: bool = False, limit: int | None = None) -> SymbolAnswer:
    """Definitions of ``name`` (or ``Class.method``); ``fuzzy`` also matches parts and subsequences, best first."""
    wanted, cap = _name(name), _limit(limit)
    indexes = _indexes(target)
    rows: list[SymbolRow] = []
    for member, _root, index in indexes:
        rows.extend(_in_member(map(definition_row, index.definitions(wanted, fuzzy=fuzzy)), member))
    notice = _notices((m, i) for m, _r, i in indexes)
    if not rows and not fuzzy:  # a near miss beats an empty answer
        for member, _root, index in indexes:
            rows.extend(_in_member(map(definition_row, index.definitions(wanted, fuzzy=True)), member))
        if rows:
            near = f"no definition named {wanted!r}; these are near matches"
            notice = f"{notice}; {near}" if notice else near
    return SymbolAnswer(wanted, rows[:cap], len(rows), notice)


def find_references(target: Target, name: str, *, limit: int | None = None,
                    include_uncertain: bool = False) -> SymbolAnswer:
    """Every use of ``name``, sorted by file then line, each with the definition it sits in.

    A qualified name (``Class.method``) keeps the uses that resolve to that
    definition; a bare name keeps every use of the name. The definitions'
    own lines are not uses and are left out. ``include_uncertain`` adds the
    uses of a qualified name through a receiver of unknown type (confidence
    ``guess``), which are left out by default.
    """
    wanted, cap = _name(name), _limit(limit)
    indexes = _indexes(target)
    rows: list[SymbolRow] = []
    for member, _root, index in indexes:
        own_lines = {(d.file_path, d.line) for d in index.definitions(wanted)}
        uses = [r for r in index.references(wanted, include_uncertain) if (r.file_path, r.line) not in own_lines]
        rows.extend(_in_member((reference_row(r, index.resolve(r)[1]) for r in uses), member))
    return SymbolAnswer(wanted, rows[:cap], len(rows), _notices((m, i) for m, _r, i in indexes))


# --------------------------------------------------------------------------- call_graph


def call_graph(target: Target, name: str, *, direction: str = "callers", depth: int = 1,
               limit: int | None = None) -> SymbolAnswer:
    """Who calls ``name`` (``callers``), what it calls (``callees``), or both, to ``depth`` hops."""
    wanted, cap = _name(name), _limit(limit)
    if direction not in DIRECTIONS:
        raise CceError(f"unknown direction {direction!r}: use callers, callees or both")
    hops = _depth(depth)
    indexes = _indexes(target)
    rows: list[SymbolRow] = []
    for towards in ("callers", "callees"):
        if direction in (towards, "both"):
            for member, _root, index in indexes:
                rows.extend(_in_member(_walk(index, wanted, hops, towards), member))
    return SymbolAnswer(wanted, rows[:cap], len(rows), _notices((m, i) for m, _r, i in indexes))


def _walk(index: SymbolIndex, name: str, depth: int, towards: str) -> list[SymbolRow]:
    """The edges of ``index.callers``/``callees`` with each one's hop count, nearest first."""
    edges = index.callers(name, depth) if towards == "callers" else index.callees(name, depth)
    start = {_def_key(d) for d in index.definitions(name)}
    level: dict[tuple[str, int], int] = {key: 0 for key in start}
    pending = list(edges)
    rows: list[tuple[int, SymbolRow]] = []
    # The library returns the breadth-first edges sorted by place; the hop of each is recovered here.
    for hop in range(1, depth + 1):
        reached: list[CallEdge] = []
        rest: list[CallEdge] = []
        for edge in pending:
            near = edge.callee_def if towards == "callers" else edge.caller_def
            if near is not None and level.get(_def_key(near)) == hop - 1:
                reached.append(edge)
            else:
                rest.append(edge)
        for edge in reached:
            far = edge.caller_def if towards == "callers" else edge.callee_def
            if far is not None:
                level.setdefault(_def_key(far), hop)
            rows.append((hop, _edge_row(edge, hop, towards)))
        pending = rest
    rows.extend((depth, _edge_row(edge, depth, towards)) for edge in pending)
    rows.sort(key=lambda item: (item[0], item[1].file_path, item[1].line, item[1].name))
    return [row for _hop, row in rows]


def _def_key(d: Definition) -> tuple[str, int]:
    return (d.file_path, d.line)


# --------------------------------------------------------------------------- change_impact


def git_diff_text(root: Path, rev: str | None, staged: bool) -> tuple[str, str]:
    """(the unified diff with no context, a description of what was compared), paths relative to ``root``."""
    if rev is not None and staged:
        raise CceError("give either --diff REV or --staged, not both")
    if rev is not None and (not rev or rev.startswith("-")):
        raise CceError(f"--diff takes a revision such as HEAD~1 or main (got {rev!r})")
    argv = ["git", "-C", str(root), "diff", "--no-color", "--no-ext-diff", "-U0", "--relative"]
    if staged:
        argv.append("--cached")
        described = "staged changes"
    else:
        argv.append(rev or "HEAD")
        described = f"working tree vs {rev or 'HEAD'}"
    argv.append("--")
    try:
        done = subprocess.run(argv, capture_output=True, check=False, timeout=GIT_TIMEOUT_SECONDS)
    except FileNotFoundError as exc:
        raise CceError("`cce impact` needs git on PATH") from exc
    except subprocess.TimeoutExpired as exc:
        raise CceError(f"git diff took longer than {GIT_TIMEOUT_SECONDS} s in {root}") from exc
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().split("\n")[0]
        raise CceError(f"git diff failed in {root}: {reason or 'exit ' + str(done.returncode)}")
    return done.stdout.decode("utf-8", "replace"), described


def change_impact(root: Path, target: Target, *, rev: str | None = None, staged: bool = False, depth: int = 1,
                  limit: int | None = None, is_test: Any = None) -> ImpactAnswer:
    """The symbols a diff touches, their callers to ``depth`` hops, and the tests that use any of them.

    The diff is ``git diff REV`` (default ``HEAD``: the uncommitted changes)
    or ``git diff --cached`` (``staged``), restricted to ``root``; its line
    numbers are read against the index, so index the working tree first (a
    stale index is said in the notice). ``is_test`` decides which paths are
    tests (default: the installed plugins' file conventions).
    """
    from cce_core.symbols.diff_hunks import parse_unified_diff, touched_definitions

    cap, hops = _limit(limit), _depth(depth)
    if rev is not None or staged:
        git_diff_text(root, rev, staged)  # a bad revision is one error line, before any store is opened
    test_path = is_test or _test_path_rule()
    described, files = "", list[str]()
    touched_rows: list[SymbolRow] = []
    caller_rows: list[SymbolRow] = []
    test_rows: list[SymbolRow] = []
    unindexed: list[str] = []
    indexes = _indexes(target)
    for member, member_root, index in indexes:
        text, described = git_diff_text(member_root if member is not None else root, rev, staged)
        hunks = parse_unified_diff(text)
        touched = touched_definitions(index.all_definitions(), hunks)
        callers = _callers_of(index, touched, hops)
        files.extend(f"{member}/{f}" if member else f for f in hunks.files)
        touched_rows.extend(_in_member(map(definition_row, touched), member))
        caller_rows.extend(_in_member((row for _key, row in callers), member))
        test_rows.extend(_in_member(_tests_using(index, touched, callers, test_path), member))
        indexed = set(index.files())
        unindexed.extend(f"{member}/{f}" if member else f for f in hunks.files if f not in indexed)
    notice = _notices((m, i) for m, _r, i in indexes)
    if unindexed:
        extra = f"{len(unindexed)} changed file(s) not in the index (not code, new, or index stale): " + ", ".join(
            unindexed[:5]) + (" …" if len(unindexed) > 5 else "")
        notice = f"{notice}; {extra}" if notice else extra
    totals = {"touched": len(touched_rows), "callers": len(caller_rows), "tests": len(test_rows)}
    return ImpactAnswer(described, files, touched_rows[:cap], caller_rows[:cap], test_rows[:cap], totals, notice)


def _test_path_rule() -> Any:
    from cce_core.plugins.conventions_cache import installed_file_conventions
    from cce_core.retrieval.file_roles import TEST, FileRoles

    roles = FileRoles(installed_file_conventions())
    return lambda path: roles.role(path) == TEST


def _callers_of(index: SymbolIndex, touched: Sequence[Definition], depth: int
                ) -> list[tuple[tuple[str, int, str], SymbolRow]]:
    """Breadth first from the touched definitions: each call edge into the frontier, once, with its hop."""
    seen_defs = {_def_key(d) for d in touched}
    frontier = list(touched)
    out: dict[tuple[str, int, str], SymbolRow] = {}
    for hop in range(1, depth + 1):
        following: list[Definition] = []
        for target in frontier:
            for edge in index.callers(target.qualified_name, 1):
                if _def_key(edge.callee_def) != _def_key(target):
                    continue  # another definition of the same qualified name
                key = (edge.file_path, edge.line, edge.callee)
                if key not in out:
                    out[key] = _edge_row(edge, hop, "callers")
                caller = edge.caller_def
                if caller is not None and _def_key(caller) not in seen_defs:
                    seen_defs.add(_def_key(caller))
                    following.append(caller)
        frontier = following
        if not frontier:
            break
    return sorted(out.items(), key=lambda item: (item[1].depth or 0, item[1].file_path, item[1].line))


def _tests_using(index: SymbolIndex, touched: Sequence[Definition],
                 callers: Sequence[tuple[tuple[str, int, str], SymbolRow]], is_test: Any) -> list[SymbolRow]:
    """Uses in test files of a touched definition, and the callers found in test files, once per line."""
    rows: dict[tuple[str, int], SymbolRow] = {}
    for d in touched:
        for ref in index.references_to(d):
            if is_test(ref.file_path) and (ref.file_path, ref.line) not in rows:
                rows[(ref.file_path, ref.line)] = SymbolRow(
                    name=ref.enclosing or "<module>", kind="test", file_path=ref.file_path, line=ref.line,
                    enclosing=ref.enclosing, target=_where(d), chunk_id=ref.chunk_id)
    for _key, row in callers:
        if is_test(row.file_path) and (row.file_path, row.line) not in rows:
            rows[(row.file_path, row.line)] = SymbolRow(
                name=row.name, kind="test", file_path=row.file_path, line=row.line, enclosing=row.qualified_name,
                target=row.target, depth=row.depth, chunk_id=row.chunk_id)
    return sorted(rows.values(), key=lambda r: (r.file_path, r.line))


# --------------------------------------------------------------------------- repo_map


def repo_map(target: Target, *, tokens: int = DEFAULT_MAP_TOKENS) -> RepoMap:
    """An outline of the most central files and definitions that fits in ``tokens``, Aider-style.

    Files are ranked by PageRank over the reference graph (a file that uses a
    name points at every file defining it, the weight shared between them);
    each file's rank is then shared among its definitions by how often other
    files use them. The outline lists files best first, each with its best
    definitions' signatures, until the budget is spent.
    """
    if not 1 <= tokens <= MAX_MAP_TOKENS:
        raise CceError(f"--tokens must be between 1 and {MAX_MAP_TOKENS} (got {tokens})")
    indexes = _indexes(target)
    definitions, members_of, file_rank, def_weight = _ranked(indexes)
    used_in: dict[str, float] = defaultdict(float)
    for d in definitions:
        used_in[d.file_path] += def_weight.get(_def_key(d), 0.0)

    def score(d: Definition) -> float:
        share = def_weight.get(_def_key(d), 0.0) / used_in[d.file_path] if used_in[d.file_path] else 0.0
        return file_rank.get(d.file_path, 0.0) * share

    # Definitions best first (only those another file uses); each is added with its file's header the first
    # time that file appears, as long as the outline stays within the budget.
    ranked = sorted((d for d in definitions if def_weight.get(_def_key(d))),
                    key=lambda d: (-score(d), d.file_path, d.line))
    picked: dict[str, list[SymbolRow]] = {}
    used = 0
    for d in ranked:
        row = definition_row(d)
        cost = _tokens(render_map_row(row)) + (0 if d.file_path in picked else _tokens(render_map_header(d.file_path)))
        if used + cost > tokens:
            if used + _tokens(render_map_row(row)) > tokens:
                break  # not even a row of a listed file fits any more
            continue
        picked.setdefault(d.file_path, []).append(row)
        used += cost
    chosen = [MapFile(path, file_rank.get(path, 0.0), sorted(_unspaced(rows, members_of), key=lambda r: r.line))
              for path, rows in sorted(picked.items(), key=lambda item: (-file_rank.get(item[0], 0.0), item[0]))]
    notice = _notices((m, i) for m, _r, i in indexes)
    return RepoMap(tokens, used, chosen, len({d.file_path for d in definitions}), notice)


def _unspaced(rows: list[SymbolRow], members_of: dict[str, str]) -> list[SymbolRow]:
    """Rows of a namespaced workspace path back to a member-relative path with the member named."""
    out = []
    for row in rows:
        member = members_of.get(row.file_path)
        out.append(row if member is None else replace(row, file_path=row.file_path[len(member) + 1:],
                                                      member=member))
    return out


# The ranking of the last few indexes (or workspace member sets) mapped: a session asking for a map twice, or
# with another budget, pays for the PageRank once. Keyed by the indexes themselves, which _OPENED keeps alive.
_RANKED: dict[tuple[int, ...], tuple[Any, ...]] = {}


def _ranked(indexes: Sequence[tuple[str | None, Path, SymbolIndex]]
            ) -> tuple[list[Definition], dict[str, str], dict[str, float], dict[tuple[str, int], float]]:
    """(definitions, namespaced path → member, file → rank, definition → weight) over the indexes, cached."""
    from cce_core.symbols.centrality import rank_files

    key = tuple(id(index) for _member, _root, index in indexes)
    cached = _RANKED.get(key)
    if cached is not None and all(a is b for a, b in zip(cached[0], (i for _m, _r, i in indexes), strict=True)):
        return cached[1]
    definitions: list[Definition] = []
    references: list[Reference] = []
    members_of: dict[str, str] = {}
    for member, _root, index in indexes:
        if member is None:
            definitions.extend(index.all_definitions())
            references.extend(index.all_references())
            continue
        # One graph over the workspace: paths namespaced by member while ranking, the member split off again later.
        for d in index.all_definitions():
            members_of[f"{member}/{d.file_path}"] = member
            definitions.append(replace(d, file_path=f"{member}/{d.file_path}"))
        references.extend(replace(r, file_path=f"{member}/{r.file_path}") for r in index.all_references())
    file_rank, def_weight = rank_files(definitions, references)
    answer = (definitions, members_of, file_rank, def_weight)
    if len(_RANKED) >= _OPENED_LIMIT:
        _RANKED.pop(next(iter(_RANKED)))
    _RANKED[key] = (tuple(index for _m, _r, index in indexes), answer)
    return answer


def render_map_header(path: str) -> str:
    return f"{path}:\n"


def render_map_row(row: SymbolRow) -> str:
    return f"  {row.line:>5}: {row.signature or row.qualified_name or row.name}\n"


def _tokens(text: str) -> int:
    from cce_core.foundation.textrules import estimate_tokens

    return estimate_tokens(text)
