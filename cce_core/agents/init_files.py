"""``cce init``: wire a project up for an AI coding agent in one idempotent step.

An agent only benefits from cce if three things are in place: an index, the
agent's MCP configuration pointing at ``cce mcp``, and an instruction telling
it to search before it reads. This module owns the last two and the order of
the whole step; building the index is handed in by the caller (the CLI), so
this module stays below the adapters. The files it touches (``.mcp.json``,
``CLAUDE.md`` and, in a git checkout, ``.gitignore``) are merged, never
clobbered, and a second run leaves every one of them byte-identical: the
other engines of the family write the very same bytes.

With a CCE Sync remote (``--remote URL``, or ``sync.remote`` already in the
project's config) the index is pulled instead of built: a team that publishes
its index from CI gets a fresh one in seconds. A remote the user names on the
command line must work, or the step fails and leaves the project as it was; a
remote that is merely configured is a convenience, so when it cannot deliver,
the index is built locally as it would be without one.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cce_core.agents.server_command import ServerCommand, choose_server_command, running_cce
from cce_core.foundation.errors import CceError
from cce_core.foundation.optional_file import read_bytes_or_none, read_utf8_or_none
from cce_core.foundation.textrules import UNICODE_WHITESPACE

SUPPORTED_AGENT = "claude"
WORKSPACE_MANIFEST = os.path.join(".cce", "workspace.yml")

BEGIN_MARKER = "<!-- BEGIN CCE MCP -->"
END_MARKER = "<!-- END CCE MCP -->"

# The instruction block, minus the output-compression section that follows it.
_GUIDANCE = (
    "## Code Context Engine (CCE)\n"
    "\n"
    "This project is indexed by CCE, exposed as MCP tools. Prefer them over reading or grepping files.\n"
    "\n"
    "- **PREFER `context_search`** to locate code, understand behaviour, or answer \"where is X / how does Y "
    "work\". It returns the most relevant code chunks (file:line + kind) from a hybrid vector + BM25 index, so "
    "you do not pay tokens for whole files.\n"
    "- Reserve file reads for opening a specific path `context_search` points you to.\n"
    "- Use `index_status` to check how fresh the index is, and `record_feedback` to rate a result.\n"
)

# `.cce/*` (not `.cce/`) so that git can still re-include the shared workspace manifest.
GITIGNORE_BLOCK = (
    "# cce local index/cache — never commit (but keep the shared workspace.yml)\n"
    ".cce/*\n"
    "!.cce/workspace.yml\n"
)
# Any of these lines (after trimming) already keeps the cache out of git.
_GITIGNORE_COVERED = frozenset({".cce/*", ".cce", ".cce/", "/.cce", "/.cce/"})


IndexBuilder = Callable[[Path], tuple[int, int]]
"""Builds the local index of a directory; returns (files indexed, chunks)."""

# The report line of an index that came from the sync remote (the family's text).
PULLED_INDEX_LINE = "index     : pulled from sync remote (cce sync pull --latest)"


@dataclass
class InitResult:
    workspace: bool
    index_line: str
    mcp_json: str
    claude_md: str
    gitignore: str | None
    # `warning: ...` lines for stderr: what went wrong on the way to a result that still stands.
    warnings: list[str] = field(default_factory=list)

    def report(self) -> str:
        mode = " (workspace)" if self.workspace else ""
        lines = [
            f"CCE is wired up for Claude Code{mode}.",
            f"  {self.index_line}",
            f'  .mcp.json : {self.mcp_json} (server "cce")',
            f"  CLAUDE.md : {self.claude_md} (context_search guidance)",
        ]
        if self.gitignore is not None:
            lines.append(f"  .gitignore: {self.gitignore} (ignores .cce/ cache)")
        lines += [
            "",
            "Next steps:",
            "  1. Restart your editor (Claude Code) so it loads .mcp.json.",
            "  2. Ask a question about this codebase — the agent calls context_search.",
            "  3. Confirm it was used: cce usage (or cce dashboard)",
        ]
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- pure merges


def claude_block(output_section: str) -> str:
    """The marker-bounded CLAUDE.md block around ``output_section`` (one level's rules, or "")."""
    return f"{BEGIN_MARKER}\n{_GUIDANCE}{output_section}{END_MARKER}\n"


def _marker_offsets(text: str, marker: str) -> list[int]:
    """Where ``marker`` starts on each line that holds nothing else (blanks around it aside)."""
    offsets = []
    at = 0
    for line in text.split("\n"):
        if line.strip(UNICODE_WHITESPACE) == marker:
            offsets.append(at + line.index(marker))
        at += len(line) + 1
    return offsets


def merge_claude_md(existing: str | None, block: str, source: str = "CLAUDE.md") -> str:
    """Replace the bounded block in ``existing``, or append it, or start a new file.

    Markers count only on a line of their own. Anything but no markers or one
    BEGIN line before one END line is refused with a :class:`CceError` naming
    ``source``: guessing which span to replace could delete the user's text.
    """
    if existing is None:
        return f"# CLAUDE.md\n\n{block}"
    begins, ends = _marker_offsets(existing, BEGIN_MARKER), _marker_offsets(existing, END_MARKER)
    if begins or ends:
        if len(begins) != 1 or len(ends) != 1 or begins[0] > ends[0]:
            raise CceError(f"{source} has unpaired, misordered or repeated CCE markers ({len(begins)} "
                           f"`{BEGIN_MARKER}`, {len(ends)} `{END_MARKER}`) — refusing to modify it so your "
                           "content is not lost; leave exactly one BEGIN line followed by one END line (or "
                           "remove both) and re-run `cce init`")
        begin, end = begins[0], ends[0]
        # The text after the end marker keeps its own line break.
        return existing[:begin] + block.rstrip(UNICODE_WHITESPACE) + existing[end + len(END_MARKER):]
    prefix = existing if existing == "" or existing.endswith("\n") else existing + "\n"
    return f"{prefix}\n{block}"


def server_entry(workspace: bool, command: str = "cce") -> dict[str, Any]:
    args = ["mcp", "--workspace"] if workspace else ["mcp", "--dir", "."]
    return {"command": command, "args": args}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def merge_mcp_json(existing: str | None, workspace: bool, source: str = ".mcp.json", command: str = "cce") -> str:
    """``existing`` with ``mcpServers.cce`` set to run ``command``, everything else kept byte for byte.

    A new (or blank) file is written as the other engines write it: sorted
    keys, 2-space indent, a final newline. In an existing file only the ``cce``
    entry changes (added last, or replaced where it is), laid out in the
    file's own style; an entry that already says the same is left alone.
    Text that is not JSON, a top level that is not an object, or a
    ``mcpServers`` that is not an object is refused with a
    :class:`CceError` naming ``source``: rewriting it would drop the user's
    other servers.
    """
    root: Any = {}
    refuse = "refusing to rewrite it because that could drop your other MCP servers; fix it and re-run `cce init`"
    if existing is not None and existing.strip(UNICODE_WHITESPACE):
        try:
            root = json.loads(existing, parse_constant=_reject_constant)
        except RecursionError:
            raise CceError(f"{source} is nested too deeply to read — {refuse}") from None
        except ValueError as exc:
            raise CceError(f"{source} is not valid JSON ({exc}) — {refuse}") from None
    if not isinstance(root, dict):
        raise CceError(f"{source} does not hold a JSON object at the top level — {refuse}")
    servers = root.get("mcpServers", {})
    if servers is None:
        servers = {}
    if not isinstance(servers, dict):
        raise CceError(f'"mcpServers" in {source} is not a JSON object — {refuse}')
    entry = server_entry(workspace, command)
    if existing is None or not root:
        servers["cce"] = entry
        root["mcpServers"] = servers
        return json.dumps(root, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if servers.get("cce") == entry:
        return existing
    return _splice_server(existing, servers, entry)


def _splice_server(text: str, servers: dict[str, Any], entry: dict[str, Any]) -> str:
    """``text`` with ``mcpServers.cce`` set to ``entry``, in the file's style (see :mod:`json_splice`)."""
    from cce_core.foundation.json_splice import Style, object_span, root_span, set_member

    style = Style.of(text)
    root = root_span(text)
    holder = root.last("mcpServers")
    if holder is None or text[holder.value_start] != "{":  # absent, or null
        return set_member(text, root, "mcpServers", {"cce": _ordered_like(entry, servers)}, style)
    span = object_span(text, holder.value_start)
    multiline = None
    if not span.members:  # "{}" has no layout of its own: the file's
        multiline = "\n" in text[root.start:root.end]
    elif span.last("cce") is None:
        # Laid out like the servers already there (one line each, or spread out).
        siblings = [m for m in span.members if text[m.value_start] == "{"]
        if siblings:
            multiline = "\n" in text[siblings[0].value_start:siblings[0].value_end]
    return set_member(text, span, "cce", _ordered_like(entry, servers), style, multiline=multiline)


def _ordered_like(entry: dict[str, Any], servers: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with its keys in the order the file uses: the old ``cce`` entry's, else another server's."""
    order: list[str] = []
    for model in [servers.get("cce"), *servers.values()]:
        if isinstance(model, dict) and {"command", "args"} <= set(model):
            order = [k for k in model if k in entry]
            break
    keys = order or ["command", "args"]
    return {k: entry[k] for k in keys}


def merge_gitignore(existing: str) -> str | None:
    """``existing`` with the cache rules appended, or None when it already ignores ``.cce``."""
    if any(line.strip(UNICODE_WHITESPACE) in _GITIGNORE_COVERED for line in existing.split("\n")):
        return None
    if existing == "":
        return GITIGNORE_BLOCK
    prefix = existing if existing.endswith("\n") else existing + "\n"
    return f"{prefix}\n{GITIGNORE_BLOCK}"


# --------------------------------------------------------------------------- file access


def _read_text(path: Path) -> str | None:
    """The UTF-8 text of ``path``; None when it does not exist."""
    # Rewriting a file we cannot read would lose the user's content.
    return read_utf8_or_none(path, not_utf8=lambda _exc: CceError(
        f"{path} is not UTF-8 text; fix or remove it, then re-run cce init"))


def _write_text(path: Path, text: str) -> None:
    """Atomically replace ``path`` with ``text`` unless it already holds exactly that.

    Skipping an unchanged file keeps re-runs free of writes. The replacement
    keeps an existing file's permission bits; a new file gets the umask's. A
    symbolic link (say CLAUDE.md pointing at a shared instructions file) is
    followed, so the link stays a link.
    """
    from cce_core.indexing.store import atomic_write

    if path.is_symlink():
        path = Path(os.path.realpath(path))
    payload = text.encode("utf-8")
    try:
        if path.read_bytes() == payload:
            return
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    except OSError as exc:
        raise CceError(f"could not read {path}: {exc.strerror or exc}") from exc
    try:
        atomic_write(path, payload)
        os.chmod(path, mode)
    except OSError as exc:
        raise CceError(f"could not write {path}: {exc.strerror or exc}") from exc


def _display(directory: str, name: str) -> str:
    return os.path.join(directory, name)


# --------------------------------------------------------------------------- the step


def is_workspace(directory: str | os.PathLike[str]) -> bool:
    return os.path.exists(os.path.join(directory, WORKSPACE_MANIFEST))


def check_request(directory: str, agent: str) -> None:
    """Reject an unsupported agent or a path that is not a directory, before anything is touched."""
    if agent != SUPPORTED_AGENT:
        raise CceError(f"unsupported --agent `{agent}` — v1 targets Claude Code (pass `--agent claude`)")
    if not os.path.isdir(directory):
        raise CceError(f"not a directory: {directory}")


def write_agent_files(directory: str, workspace: bool, command: str = "cce") -> tuple[str, str, str | None]:
    """Merge ``.mcp.json``, ``CLAUDE.md`` and (in a git checkout) ``.gitignore``; their display paths."""
    writes = plan_agent_files(directory, workspace, command)
    for path, text in writes:
        _write_text(path, text)
    gitignore = _display(directory, ".gitignore") if os.path.lexists(Path(directory) / ".git") else None
    return _display(directory, ".mcp.json"), _display(directory, "CLAUDE.md"), gitignore


def plan_agent_files(directory: str, workspace: bool, command: str = "cce") -> list[tuple[Path, str]]:
    """Every (path, merged text) ``write_agent_files`` would write, computed before any is written.

    Raises :class:`CceError` when a user file cannot be read or merged safely,
    so a refusal never leaves one file updated and the next untouched.
    """
    from cce_core.agents.output_level import output_block
    from cce_core.foundation.config import load_config

    root = Path(directory)
    mcp_path = root / ".mcp.json"
    writes = [(mcp_path, merge_mcp_json(_read_text(mcp_path), workspace, str(mcp_path), command))]
    level = load_config(root).output_level
    claude_path = root / "CLAUDE.md"
    writes.append((claude_path, merge_claude_md(_read_text(claude_path), claude_block(output_block(level)),
                                                str(claude_path))))
    if os.path.lexists(root / ".git"):
        gitignore_path = root / ".gitignore"
        merged = merge_gitignore(_read_text(gitignore_path) or "")
        if merged is not None:
            writes.append((gitignore_path, merged))
    return writes


def init_project(directory: str, agent: str, build_local: IndexBuilder,
                 build_workspace: IndexBuilder | None = None, *, remote: str | None = None,
                 force: bool = False, server: ServerCommand | None = None) -> InitResult:
    """Index ``directory`` (or pull its index) and wire it up for ``agent``; see :meth:`InitResult.report`.

    ``build_workspace`` indexes every member of a workspace; without one, a
    workspace cannot be initialised. ``remote`` configures that sync remote and
    pulls from it (failure is fatal); without it, a remote already configured
    is tried first and a local build follows if it fails. ``force`` lets the
    pull replace a store pulled at another sha. ``server`` is the command
    ``.mcp.json`` runs (default: chosen for this process, see :mod:`.server_command`).
    """
    check_request(directory, agent)
    workspace = is_workspace(directory)
    if workspace and build_workspace is None:
        raise CceError(f"{_display(directory, WORKSPACE_MANIFEST)} makes this a workspace, but this cce has "
                       "no workspace support (cce_core.workspace is missing) — remove the manifest to set up "
                       "a single project")
    if server is None:
        server = choose_server_command(os.environ, running_cce())
    warnings: list[str] = []
    plan_agent_files(directory, workspace, server.command)  # a file init would refuse to merge stops it first
    index_line = _index_from_sync(Path(directory), remote, force, workspace, warnings)
    if index_line is None and workspace:
        assert build_workspace is not None
        files, chunks = build_workspace(Path(directory))
        _forget_member_pulls(Path(directory))
        index_line = f"index     : built {chunks} chunk(s) from {files} file(s) across the workspace"
    elif index_line is None:
        files, chunks = build_local(Path(directory))
        _forget_pull(Path(directory))
        index_line = f"index     : built {chunks} chunk(s) from {files} file(s)"
    mcp_json, claude_md, gitignore = write_agent_files(directory, workspace, server.command)
    if server.note is not None:
        warnings.append(server.note)
    return InitResult(workspace, index_line, mcp_json, claude_md, gitignore, warnings)


# --------------------------------------------------------------------------- the index from a sync remote


def pull_latest(root: Path, *, force: bool, workspace: bool) -> None:
    """``cce sync pull --latest`` for ``root``: its own store, or every member's when it is a workspace.

    Shared by ``cce init`` and the MCP server's start-up pull, so both install
    exactly what the sync command would. ``force`` passes the overwrite guard
    (a store already pulled at another sha).
    """
    if workspace:
        from cce_core.sync.workspaces import pull_workspace

        pull_workspace(root, latest=True, force=force)
    else:
        from cce_core.sync.service import pull

        pull(root, latest=True, force=force)


def _forget_pull(root: Path) -> None:
    from cce_core.sync.service import forget_pull

    forget_pull(root)


def _forget_member_pulls(root: Path) -> None:
    """:func:`_forget_pull` for every member of the workspace at ``root`` (each has its own store)."""
    from cce_core.workspace.manifest import load_manifest

    for member in load_manifest(root).members:
        _forget_pull(root / member.path)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip(UNICODE_WHITESPACE)
    return text.splitlines()[0] if text else type(exc).__name__


def _index_from_sync(root: Path, remote: str | None, force: bool, workspace: bool,
                     warnings: list[str]) -> str | None:
    """The index line of a pull, or None when the index is to be built locally.

    An explicit ``remote`` is configured (git-LFS on, as ``cce sync init``
    does by default) and pulled from; either step failing raises and puts
    ``.cce/config`` back as it was, so a retry with a corrected URL starts
    clean and a later plain ``cce init`` does not keep trying a URL that never
    worked. A remote that is only configured is tried, and any failure is a
    warning followed by the local build.
    """
    from cce_core.sync.service import init as sync_init
    from cce_core.sync.settings import load_sync_settings

    if remote is not None and not remote.strip(UNICODE_WHITESPACE):
        raise CceError("--remote needs the URL of a sync remote (a git repository)")
    if remote is None:
        if not load_sync_settings(root, warn=lambda message: warnings.append(f"warning: {message}")).remote:
            return None
        try:
            pull_latest(root, force=force, workspace=workspace)
        except Exception as exc:  # any failure: the local build below is what `cce init` promises
            warnings.append(f"warning: sync pull failed: {_first_line(exc)} — built the index locally instead")
            return None
        return PULLED_INDEX_LINE
    with _config_restored_on_failure(root):
        sync_init(root, remote, lfs=True)  # its report is not shown: the init report says what happened
        try:
            pull_latest(root, force=force, workspace=workspace)
        except (CceError, OSError) as exc:
            raise CceError(f"sync pull failed: {_first_line(exc)}") from exc
    return PULLED_INDEX_LINE


@contextlib.contextmanager
def _config_restored_on_failure(root: Path) -> Iterator[None]:
    """Put ``.cce/config`` (and a ``.cce`` directory this step created) back as they were if the body raises."""
    from cce_core.foundation.atomic import atomic_write
    from cce_core.foundation.config import config_path

    path = config_path(root)
    had_dir = path.parent.exists()
    before = read_bytes_or_none(path)
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError):
            if before is not None:
                atomic_write(path, before)
            else:
                path.unlink(missing_ok=True)
                if not had_dir:
                    path.parent.rmdir()  # only when empty: a failed pull leaves nothing else behind
        raise
