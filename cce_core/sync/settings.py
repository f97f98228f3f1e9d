"""The ``sync.*`` and ``knowledge.sync.*`` keys of ``.cce/config``: how a project names its cache.

Sync is opt-in: a project with no ``sync.remote`` is pure local CCE. This
module reads the keys every sync command needs and writes them back in the
byte-exact canonical form the other engines write, so a config written by one
engine reads the same in the others.

Reading differs on purpose from :mod:`cce_core.foundation.config`, whose
sections are each forgiving. The reference types the ``sync:`` block as one
unit: a single wrong-typed key (``lfs: yes`` is a string in YAML 1.2) makes the
whole project file count as malformed, and a malformed project file leaves the
project all-local rather than falling back to the global remote (reference fix
#119, so a typo can never send a push to the wrong cache). That is observable
through which remote a command uses, so it is followed here. Keys outside the
block, and unknown keys inside it, are never typed.

Writing differs on purpose from the reference, whose ``sync init`` rewrites the
whole file with only the ``sync:`` block and so drops every other setting.
:func:`save_sync_settings` replaces only the ``sync:`` block and keeps the rest
of the file's text byte for byte; a file it cannot edit safely is refused,
never overwritten.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.config import config_path
from cce_core.foundation.errors import CceError
from cce_core.foundation.optional_file import read_utf8_or_none
from cce_core.foundation.textrules import UNICODE_WHITESPACE

GLOBAL_CONFIG_FILE = "config.yml"
_KEEP_LAST = "keep-last-"
_U64_MAX = (1 << 64) - 1
# A plain scalar that YAML 1.2 (and the reference's reader) reads as null.
_NULLS = ("", "~", "null", "Null", "NULL")
_TRUE = ("true", "True", "TRUE")
_FALSE = ("false", "False", "FALSE")
# Characters a config value may carry unquoted. Wider than workspace.yml's rule:
# ``:`` is allowed (remote URLs) and a leading ``.`` is fine.
_BARE_PUNCTUATION = frozenset("-_/.:")


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Retention:
    """``all`` (``keep_last is None``) or ``keep-last-<n>``."""

    keep_last: int | None = None

    def __post_init__(self) -> None:
        if self.keep_last is not None and not 0 <= self.keep_last <= _U64_MAX:
            raise ValueError(f"keep_last must be an unsigned 64-bit count, not {self.keep_last}")

    @classmethod
    def parse(cls, text: str) -> Retention:
        """Read the config form; anything that is not ``keep-last-<n>`` means ``all``."""
        body = text.strip(UNICODE_WHITESPACE)
        if body.startswith(_KEEP_LAST):
            count = _parse_count(body[len(_KEEP_LAST):])
            if count is not None:
                return cls(count)
        return cls()

    @property
    def text(self) -> str:
        return "all" if self.keep_last is None else f"{_KEEP_LAST}{self.keep_last}"


def _parse_count(text: str) -> int | None:
    """An unsigned 64-bit count spelled as the reference's integer parser accepts it.

    That is one optional ``+`` and ASCII digits (leading zeros allowed), nothing else.
    """
    digits = text[1:] if text.startswith("+") else text
    if not digits or not (digits.isascii() and digits.isdigit()):
        return None
    value = int(digits)
    return value if value <= _U64_MAX else None


@dataclass(frozen=True)
class SyncSettings:
    """The resolved ``sync.*`` settings of a project; the defaults are all-local."""

    remote: str | None = None
    lfs: bool = True
    repo_id: str | None = None
    # The ``refs/<name>`` pointer ``pull --latest`` follows; None means ``main``
    # (then the single other ref, if there is exactly one).
    ref: str | None = None
    auto_pull: bool = False
    retention: Retention = field(default_factory=Retention)


@dataclass(frozen=True)
class KnowledgeSyncSettings:
    """The ``knowledge.sync.*`` settings: which corpus a root publishes, and where."""

    corpus_id: str | None = None
    # Overrides ``sync.remote`` for the knowledge commands only.
    remote: str | None = None
    retention: Retention = field(default_factory=Retention)


# --------------------------------------------------------------------------- YAML


class _Malformed(Exception):
    """The text is not one YAML mapping, or a typed key holds a value of the wrong type."""


def _yaml_problem(exc: Exception) -> str:
    import yaml

    if isinstance(exc, RecursionError):
        return "the YAML is nested too deeply to read"
    if isinstance(exc, yaml.MarkedYAMLError):
        where = exc.problem_mark or exc.context_mark
        detail = " ".join(p for p in (exc.context, exc.problem) if p) or "malformed YAML"
        if where is not None:
            detail += f" at line {where.line + 1} column {where.column + 1}"
        return detail
    return " ".join(str(exc).split()) or "malformed YAML"


def _compose_root(text: str) -> Any:
    """The root mapping node of ``text`` (an empty one for an empty document).

    Raises :class:`_Malformed` with a readable reason when ``text`` is not YAML,
    holds several documents, or its top level is not a mapping. Deep nesting is
    a reason too, never a crash: PyYAML composes recursively.
    """
    import yaml

    from cce_core.foundation.nesting import MAX_YAML_DEPTH, yaml_too_deep

    if yaml_too_deep(text):  # refused before composing, which recurses once or more per level
        raise _Malformed(f"the YAML is nested too deeply to read (more than {MAX_YAML_DEPTH} levels)")
    try:
        docs = list(yaml.compose_all(text, Loader=yaml.BaseLoader))
    except (yaml.YAMLError, RecursionError) as exc:
        raise _Malformed(_yaml_problem(exc)) from None
    if len(docs) > 1:
        raise _Malformed("the file holds more than one YAML document")
    root = docs[0] if docs else None
    if root is None or (isinstance(root, yaml.ScalarNode) and root.style is None and root.value == ""):
        return yaml.MappingNode("tag:yaml.org,2002:map", [])
    if not isinstance(root, yaml.MappingNode):
        raise _Malformed("the top level is not a mapping")
    return root


def _is_null(node: Any) -> bool:
    import yaml

    return isinstance(node, yaml.ScalarNode) and node.style is None and node.value in _NULLS


def _sub_block(mapping: Any, name: str, where: str) -> Any:
    """The mapping node under the key ``name``; None when the key is absent or null.

    A second ``name`` key or a non-mapping value is malformed, as a duplicate or
    mistyped field is for the reference's reader. Keys that are not scalars
    cannot name a field and are skipped.
    """
    import yaml

    found = [value for key, value in mapping.value if isinstance(key, yaml.ScalarNode) and key.value == name]
    if len(found) > 1:
        raise _Malformed(f"duplicate key `{where}`")
    if not found or _is_null(found[0]):
        return None
    if not isinstance(found[0], yaml.MappingNode):
        raise _Malformed(f"`{where}` must be a mapping")
    return found[0]


def _fields(mapping: Any, names: tuple[str, ...], where: str) -> dict[str, Any]:
    """The non-null nodes of the keys ``names`` of a block (unknown keys are ignored)."""
    import yaml

    seen: dict[str, Any] = {}
    for key, value in mapping.value:
        if isinstance(key, yaml.ScalarNode) and key.value in names:
            if key.value in seen:
                raise _Malformed(f"duplicate key `{where}.{key.value}`")
            seen[key.value] = value
    return {name: node for name, node in seen.items() if not _is_null(node)}


def _as_text(node: Any, where: str) -> str:
    """Any scalar reads as a string (``123`` and ``true`` too), as the reference reads them."""
    import yaml

    if not isinstance(node, yaml.ScalarNode):
        raise _Malformed(f"`{where}` must be a string")
    return str(node.value)


def _as_flag(node: Any, where: str) -> bool:
    """Only plain ``true``/``false`` (three spellings each) are booleans in YAML 1.2."""
    import yaml

    if isinstance(node, yaml.ScalarNode) and node.style is None:
        if node.value in _TRUE:
            return True
        if node.value in _FALSE:
            return False
    raise _Malformed(f"`{where}` must be true or false")


def _sync_from_root(root: Any) -> SyncSettings:
    block = _sub_block(root, "sync", "sync")
    if block is None:
        return SyncSettings()
    f = _fields(block, ("remote", "lfs", "repo_id", "ref", "auto_pull", "retention"), "sync")
    # Type every key before using any: one mismatch discards the whole block.
    remote = _as_text(f["remote"], "sync.remote") if "remote" in f else None
    lfs = _as_flag(f["lfs"], "sync.lfs") if "lfs" in f else True
    repo_id = _as_text(f["repo_id"], "sync.repo_id") if "repo_id" in f else None
    ref = _as_text(f["ref"], "sync.ref") if "ref" in f else None
    auto_pull = _as_flag(f["auto_pull"], "sync.auto_pull") if "auto_pull" in f else False
    retention = _as_text(f["retention"], "sync.retention") if "retention" in f else None
    return SyncSettings(
        remote=remote or None,  # an empty string means unset
        lfs=lfs,
        repo_id=repo_id or None,
        ref=ref or None,
        auto_pull=auto_pull,
        retention=Retention.parse(retention) if retention is not None else Retention(),
    )


def parse_sync_settings(text: str) -> SyncSettings:
    """The ``sync.*`` settings of a config text; a file with no ``sync:`` block yields the defaults.

    Raises :class:`CceError` (``invalid sync config: ...``) when the text is not
    one YAML mapping or a ``sync.*`` key has the wrong type.
    """
    try:
        return _sync_from_root(_compose_root(text))
    except _Malformed as exc:
        raise CceError(f"invalid sync config: {exc}") from None


def parse_knowledge_sync_settings(text: str) -> KnowledgeSyncSettings:
    """The ``knowledge.sync.*`` settings of a config text; anything unreadable yields the defaults.

    Only these three keys are typed: the runtime ``knowledge.*`` keys beside them
    belong to :mod:`cce_core.foundation.config` and never disturb this reader.
    """
    try:
        knowledge = _sub_block(_compose_root(text), "knowledge", "knowledge")
        sync = _sub_block(knowledge, "sync", "knowledge.sync") if knowledge is not None else None
        if sync is None:
            return KnowledgeSyncSettings()
        f = _fields(sync, ("corpus_id", "remote", "retention"), "knowledge.sync")
        corpus_id = _as_text(f["corpus_id"], "knowledge.sync.corpus_id") if "corpus_id" in f else None
        remote = _as_text(f["remote"], "knowledge.sync.remote") if "remote" in f else None
        retention = _as_text(f["retention"], "knowledge.sync.retention") if "retention" in f else None
    except _Malformed:
        return KnowledgeSyncSettings()
    return KnowledgeSyncSettings(
        corpus_id=corpus_id or None,
        remote=remote or None,
        retention=Retention.parse(retention) if retention is not None else Retention(),
    )


# --------------------------------------------------------------------------- canonical bytes


def config_scalar(text: str) -> str:
    """A value as the canonical writer spells it: bare when that is unambiguous, else double-quoted."""
    bare = (bool(text) and not text.startswith("-")
            and all((c.isascii() and c.isalnum()) or c in _BARE_PUNCTUATION for c in text))
    if bare:
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sync_yaml(settings: SyncSettings) -> str:
    """The canonical ``sync:`` block, byte for byte what every engine writes."""
    out = ["sync:\n"]
    out.append(f"  remote: {config_scalar(settings.remote) if settings.remote is not None else 'null'}\n")
    out.append(f"  lfs: {'true' if settings.lfs else 'false'}\n")
    out.append(f"  repo_id: {config_scalar(settings.repo_id) if settings.repo_id is not None else 'null'}\n")
    # `ref` is written only when set, so a config without one stays byte-identical
    # to what engines that predate the key write.
    if settings.ref is not None:
        out.append(f"  ref: {config_scalar(settings.ref)}\n")
    out.append(f"  auto_pull: {'true' if settings.auto_pull else 'false'}\n")
    out.append(f"  retention: {settings.retention.text}\n")
    return "".join(out)


# --------------------------------------------------------------------------- loading


def cce_home() -> Path | None:
    """The per-user CCE directory: ``$CCE_HOME``, else ``$HOME/.cce``; None when neither is set.

    An empty variable counts as unset: the reference would read it as a path
    relative to whatever directory the command runs in.
    """
    home = os.environ.get("CCE_HOME")
    if home:
        return Path(home)
    user_home = os.environ.get("HOME")
    return Path(user_home) / ".cce" if user_home else None


def global_config_path() -> Path | None:
    """``$CCE_HOME/config.yml``, else ``~/.cce/config.yml``."""
    home = cce_home()
    return home / GLOBAL_CONFIG_FILE if home is not None else None


def _read_config_text(path: Path) -> str | None:
    """The text of a config file; None when there is no such file. Other failures raise ``_Malformed``."""
    return read_utf8_or_none(path, unreadable=lambda exc: _Malformed(f"cannot read it: {exc.strerror or exc}"),
                             not_utf8=lambda _exc: _Malformed("it is not UTF-8 text"))


def _stderr_warning(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")
    sys.stderr.flush()


def load_sync_settings(root: Path, *, warn: Callable[[str], None] | None = None) -> SyncSettings:
    """The ``sync.*`` settings in force for the project at ``root``.

    The project's ``.cce/config`` when it exists (taking the global ``remote``
    when it names none), else the global config, else the defaults. A project
    file that exists but cannot be read as sync settings is reported through
    ``warn`` (default: a ``warning:`` line on stderr) and the project stays
    all-local: falling back to the global remote would push to a cache the
    project never chose.
    """
    path = config_path(root)
    report = warn or _stderr_warning
    try:
        text = _read_config_text(path)
        project_root = _compose_root(text) if text is not None else None
    except _Malformed as exc:
        # `cce sync init` refuses to rewrite a file it cannot parse, so only a
        # fix by hand helps here; a wrongly typed sync key (below) it can replace.
        report(_malformed_warning(path, exc, "fix the file"))
        return SyncSettings()
    try:
        project = _sync_from_root(project_root) if project_root is not None else None
    except _Malformed as exc:
        report(_malformed_warning(path, exc, "fix the file or run `cce sync init` to rewrite its sync block"))
        return SyncSettings()
    global_settings = _load_global()
    if project is None:
        return global_settings if global_settings is not None else SyncSettings()
    if project.remote is None and global_settings is not None and global_settings.remote is not None:
        return replace(project, remote=global_settings.remote)
    return project


def _malformed_warning(path: Path, exc: _Malformed, hint: str) -> str:
    return (f"project sync config {path} is malformed and was ignored (invalid sync config: {exc}); "
            f"staying all-local — {hint}")


def _load_global() -> SyncSettings | None:
    """The global config's settings; a missing or malformed global file counts as absent."""
    path = global_config_path()
    if path is None:
        return None
    try:
        text = _read_config_text(path)
        return _sync_from_root(_compose_root(text)) if text is not None else None
    except _Malformed:
        return None


def load_knowledge_sync_settings(root: Path) -> KnowledgeSyncSettings:
    """The ``knowledge.sync.*`` settings of the project at ``root`` (project file only, never global)."""
    try:
        text = _read_config_text(config_path(root))
    except _Malformed:
        return KnowledgeSyncSettings()
    return parse_knowledge_sync_settings(text) if text is not None else KnowledgeSyncSettings()


# --------------------------------------------------------------------------- saving


def _refusal(path: Path | str, reason: str) -> CceError:
    return CceError(f"{path}: {reason} — refusing to rewrite it so your other settings are not lost; "
                    "fix or move the file, then re-run")


def _is_trailer_line(line: str) -> bool:
    """A line that belongs to no top-level entry: blank, a column-0 comment, or a document-end marker."""
    body = line.rstrip("\r")
    if body.strip(" \t") == "" or body.startswith("#"):
        return True
    return body == "..." or body.startswith(("... ", "...\t"))


def _entry_end(text: str, start: int, limit: int) -> int:
    """Where the top-level entry starting at ``start`` ends: after its last content line.

    Every line of a block entry but its first is indented, so the column-0
    comments, blank lines and ``...`` markers before ``limit`` (the next entry's
    key, or the end of the file) belong to what follows and are kept there.
    """
    # Split on LF only: the file's other line-break characters are content here.
    lines = text[start:limit].split("\n")
    sizes = [len(line) + 1 for line in lines[:-1]] + [len(lines[-1])]
    while len(lines) > 1 and _is_trailer_line(lines[-1]):
        lines.pop()
        sizes.pop()
    return start + sum(sizes)


def replace_sync_block(text: str, settings: SyncSettings, *, path: Path | str = "config") -> str:
    """``text`` with its ``sync:`` block replaced by the canonical one and everything else kept.

    The canonical block takes the place of the first ``sync:`` entry (other
    ``sync:`` entries are removed: the reference reads a second one as an error)
    or, when there is none, follows the last top-level entry. Raises
    :class:`CceError` when ``text`` is not one YAML mapping, or is shaped so that
    the edit could change another setting (flow-style or indented top level,
    aliases into the old block); ``path`` only names the file in that message.
    """
    import yaml

    block = sync_yaml(settings)
    try:
        readable = _sync_from_root(_compose_root(block)) == _as_read(settings)
    except _Malformed:
        readable = False
    if not readable:
        # The canonical quoting escapes only `\` and `"`, so a line break or a
        # control character in a value would not read back as written.
        raise CceError("cannot save these sync settings: a remote, repo_id or ref value holds a line break or "
                       "control character that the config file cannot carry")
    try:
        root = _compose_root(text)
    except _Malformed as exc:
        raise _refusal(path, f"it is not a valid YAML config ({exc})") from None
    if root.flow_style:
        raise _refusal(path, "its top-level mapping is written in flow style ({...})")
    if not root.value:
        if text.strip(" \t\r\n") == "":
            return block
        joined = text + ("" if text.endswith("\n") else "\n") + block
        return _verified(text, joined, settings, path)
    starts = []
    for key, _value in root.value:
        if key.start_mark.column != 0:
            raise _refusal(path, f"its top-level key at line {key.start_mark.line + 1} is not at column 0")
        starts.append(key.start_mark.index)
    ends = [_entry_end(text, start, nxt) for start, nxt in zip(starts, [*starts[1:], len(text)], strict=True)]
    syncs = [i for i, (key, _value) in enumerate(root.value) if isinstance(key, yaml.ScalarNode)
             and key.value == "sync"]
    if not syncs:
        at = ends[-1]
        head = text[:at] + ("" if at == 0 or text[at - 1] == "\n" else "\n")
        return _verified(text, head + block + text[at:], settings, path)
    pieces = []
    cursor = 0
    for n, i in enumerate(syncs):
        pieces.append(text[cursor:starts[i]])
        if n == 0:
            pieces.append(block)
        cursor = ends[i]
    pieces.append(text[cursor:])
    return _verified(text, "".join(pieces), settings, path)


def _verified(old: str, new: str, settings: SyncSettings, path: Path | str) -> str:
    """``new`` if it reads as ``settings`` plus exactly the old non-sync entries, else a refusal.

    The splice works on text, so this re-reads the result: an alias that pointed
    into the removed block, or a document marker the block landed after, would
    otherwise change or break a setting the user never touched.
    """
    try:
        new_root = _compose_root(new)
        same_sync = _sync_from_root(new_root) == _as_read(settings)
        same_rest = _same_nodes(_non_sync_entries(_compose_root(old)), _non_sync_entries(new_root))
    except (_Malformed, RecursionError):
        same_sync = same_rest = False
    if not (same_sync and same_rest):
        raise _refusal(path, "replacing its sync block in place would change other settings (an alias "
                             "pointing into the block, or a document marker in the way)")
    return new


def _as_read(settings: SyncSettings) -> SyncSettings:
    """What ``settings`` read back as: an empty string written out is an unset key."""
    return replace(settings, remote=settings.remote or None, repo_id=settings.repo_id or None,
                   ref=settings.ref or None)


def _non_sync_entries(root: Any) -> list[tuple[Any, Any]]:
    import yaml

    return [(k, v) for k, v in root.value if not (isinstance(k, yaml.ScalarNode) and k.value == "sync")]


def _same_nodes(left: list[tuple[Any, Any]], right: list[tuple[Any, Any]]) -> bool:
    """Whether two lists of YAML entries compose to the same graph (iterative: nesting may be deep)."""
    import yaml

    if len(left) != len(right):
        return False
    todo = [pair for lk_lv, rk_rv in zip(left, right, strict=True) for pair in zip(lk_lv, rk_rv, strict=True)]
    seen: set[tuple[int, int]] = set()
    while todo:
        a, b = todo.pop()
        if (id(a), id(b)) in seen:
            continue
        seen.add((id(a), id(b)))
        if type(a) is not type(b) or a.tag != b.tag:
            return False
        if isinstance(a, yaml.ScalarNode):
            if a.value != b.value or a.style != b.style:
                return False
        elif isinstance(a, yaml.SequenceNode):
            if len(a.value) != len(b.value):
                return False
            todo.extend(zip(a.value, b.value, strict=True))
        else:
            if len(a.value) != len(b.value):
                return False
            for (ak, av), (bk, bv) in zip(a.value, b.value, strict=True):
                todo.extend(((ak, bk), (av, bv)))
    return True


def save_sync_settings(root: Path, settings: SyncSettings) -> Path:
    """Write ``settings`` as the ``sync:`` block of ``<root>/.cce/config``; the file's path.

    Every other top-level key keeps its exact text; a missing file becomes just
    the canonical block (the reference's bytes). The write is atomic. A file
    that cannot be read, is not UTF-8 or is not a YAML mapping is left untouched
    and a :class:`CceError` says why.
    """
    path = config_path(root)
    old_text = read_utf8_or_none(path, unreadable=lambda exc: _refusal(path, f"cannot read it ({exc.strerror or exc})"),
                                 not_utf8=lambda _exc: _refusal(path, "it is not UTF-8 text")) or ""
    new_text = replace_sync_block(old_text, settings, path=path)
    try:
        atomic_write(path, new_text.encode("utf-8"))
    except OSError as exc:
        raise CceError(f"could not write {path}: {exc.strerror or exc}") from exc
    return path
