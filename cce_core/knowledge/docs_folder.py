"""``cce knowledge add DIR...``: a documentation folder becomes a ``cce.knowledge/v1`` feed, then knowledge.

Writing a feed by hand is the step new users fall at (a script that globs
``*.md`` over a folder of ``.rst`` files makes an empty feed). Here every
file under the folders whose name matches a glob becomes one record: the id
is its path (relative to the project root when it lies inside it), the title
its first heading or else its file name, the body the rest of the file, and
``source`` is ``docs``. Files are found by the code walker's rules (no
dot-directories, no ``.gitignore``-d, sensitive, non-UTF-8 or over-2-MiB
files), in path order, so the same folder always gives the same feed and
snapshot.

A body is markdown by the feed's contract, and the installed document
chunker for that format cuts it. A file that chunker claims by extension is
taken as it is; any other is plain text, whose underlined headings are first
rewritten as ``#`` headings (:mod:`cce_core.knowledge.text_headings`) so the
sections still follow the document. The feed goes through the same ingest as
``cce knowledge index`` — limits, redaction, atomic install — and is kept as
``.cce/knowledge/docs-feed.jsonl`` for inspection or ``cce knowledge index``
elsewhere. No matching file is an error, never an empty store.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from cce_core.foundation.atomic import atomic_write
from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE
from cce_core.knowledge.ingest import IngestSummary
from cce_core.knowledge.limits import MAX_FEED_BYTES

# The usual documentation files; an installed document chunker's extensions are added to these.
DEFAULT_GLOBS = ("*.md", "*.markdown", "*.rst", "*.txt", "*.adoc")
FEED_NAME = "docs-feed.jsonl"
DEFAULT_SOURCE = "docs"

# The feed body's own heading syntax (see render_document): `#` to `######` then a space, or a text line over
# a line of `=` or `-`; and the fences inside which a `#` line is code.
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))??(?:[ \t]+#+)?[ \t\r]*")
_SETEXT_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t\r]*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Document:
    record_id: str
    text: str
    plain_text: bool  # no document chunker claims it: its underlined headings are rewritten


@dataclass(frozen=True)
class AddSummary:
    folders: list[Path]
    globs: list[str]
    documents: int
    skipped: dict[str, int]  # matching files left out, by reason
    feed: Path
    ingest: IngestSummary


def _ingest_chunker_extensions() -> tuple[str, ...]:
    from cce_core.knowledge.ingest import resolve_chunker

    return tuple(ext.lower() for ext in getattr(resolve_chunker(), "extensions", ()))


def default_globs() -> list[str]:
    """:data:`DEFAULT_GLOBS` plus ``*EXT`` for each extension an installed document chunker declares."""
    from cce_core.plugins.host import document_chunkers

    globs = list(DEFAULT_GLOBS)
    for chunker in document_chunkers():
        globs += [f"*{ext.lower()}" for ext in chunker.extensions if f"*{ext.lower()}" not in globs]
    return globs


def _matches(relative: str, globs: Sequence[str]) -> bool:
    """A pattern with a ``/`` matches the path below the folder, any other the file name; case does not matter."""
    path = relative.lower()
    name = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(path if "/" in g else name, g.lower()) for g in globs)


def _record_id(file: Path, folder: Path, root: Path) -> str:
    try:
        return file.relative_to(root).as_posix()
    except ValueError:
        return file.relative_to(folder.parent).as_posix()


def collect_documents(folders: Sequence[Path], root: Path, globs: Sequence[str],
                      skipped: dict[str, int] | None = None) -> list[Document]:
    """The matching files under ``folders``, read, in record-id order; ``skipped`` counts matching files left out."""
    from cce_core.indexing.walker import read_listed, scan

    claimed = _ingest_chunker_extensions()
    root_abs = Path(os.path.abspath(root))
    found: dict[str, Document] = {}
    total = 0
    for folder in folders:
        if not folder.is_dir():
            raise CceError(f"not a directory: {folder}")
        folder_abs = Path(os.path.abspath(folder))
        walked = scan(str(folder_abs))
        for listed in walked.listed:
            if not _matches(listed.path, globs):
                continue
            record_id = _record_id(folder_abs / listed.path, folder_abs, root_abs)
            if record_id in found:
                continue
            read = read_listed(walked, listed)
            if read is None:
                continue
            total += read.size
            if total > MAX_FEED_BYTES:
                raise CceError(f"the documents under {', '.join(map(str, folders))} add up to more than "
                               f"{MAX_FEED_BYTES:,} bytes, the most one knowledge feed takes — narrow --glob")
            plain = PurePosixPath(listed.path).suffix.lower() not in claimed
            found[record_id] = Document(record_id, read.text, plain)
        if skipped is not None:
            for skip in walked.skips:
                if not skip.is_dir and _matches(skip.path, globs):
                    skipped[skip.reason.label] = skipped.get(skip.reason.label, 0) + 1
    if not found:
        raise CceError(f"no documents to add: no file under {', '.join(map(str, folders))} matches "
                       f"{', '.join(globs)} — pass --glob for the files to take, e.g. --glob '*.rst'")
    return [found[key] for key in sorted(found)]


def _heading_at(lines: list[str], i: int) -> tuple[str, int] | None:
    """``(title, lines it spans)`` when a heading with text starts at line ``i``."""
    atx = _ATX.fullmatch(lines[i])
    if atx is not None:
        title = (atx.group(2) or "").strip(UNICODE_WHITESPACE)
        return (title, 1) if title else None
    text = lines[i].strip(UNICODE_WHITESPACE)
    starts_paragraph = i == 0 or not lines[i - 1].strip(UNICODE_WHITESPACE)
    if (text and starts_paragraph and not lines[i].startswith("    ") and i + 1 < len(lines)
            and _SETEXT_UNDERLINE.fullmatch(lines[i + 1])):
        return text, 2
    return None


def _front_matter_end(lines: list[str]) -> int:
    """The index just past a leading ``---`` metadata block (0 when there is none): its keys are no heading."""
    if not lines or lines[0].rstrip(UNICODE_WHITESPACE) != "---":
        return 0
    for j in range(1, len(lines)):
        if lines[j].rstrip(UNICODE_WHITESPACE) in ("---", "..."):
            return j + 1
    return 0


def split_title(text: str) -> tuple[str | None, str]:
    """The document's first heading (outside code fences) and the text without it; ``(None, text)`` if none.

    The blank lines after the heading go with it; whatever stands before it
    (a directive, a badge line) stays at the top of the body.
    """
    lines = text.split("\n")
    fence: str | None = None
    for i, line in enumerate(lines):
        if i < _front_matter_end(lines):
            continue
        opener = _FENCE.match(line)
        if fence is not None:
            if opener is not None and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence) \
                    and not line[opener.end():].strip(UNICODE_WHITESPACE):
                fence = None
            continue
        if opener is not None:
            fence = opener.group(1)
            continue
        heading = _heading_at(lines, i)
        if heading is None:
            continue
        title, span = heading
        rest = i + span
        while rest < len(lines) - 1 and not lines[rest].strip(UNICODE_WHITESPACE):
            rest += 1
        return title, "\n".join(lines[:i] + lines[rest:])
    return None, text


def document_record(record_id: str, text: str, source: str, plain_text: bool) -> dict[str, str]:
    """The ``cce.knowledge/v1`` record of one document."""
    if plain_text:
        from cce_core.knowledge.text_headings import underlined_to_hashes

        text = underlined_to_hashes(text)
    title, body = split_title(text)
    if title is None:
        title = PurePosixPath(record_id).stem or record_id
    return {"id": record_id, "title": title, "body": body, "source": source}


def feed_bytes(documents: Sequence[Document], source: str) -> bytes:
    """The NDJSON feed of ``documents``, one record a line."""
    return "".join(json.dumps(document_record(d.record_id, d.text, source, d.plain_text), ensure_ascii=False) + "\n"
                   for d in documents).encode("utf-8")


def add_folders(folders: Sequence[Path], root: Path, globs: Sequence[str] | None = None,
                source: str = DEFAULT_SOURCE) -> AddSummary:
    """Make the feed of ``folders``, index it into ``root``'s knowledge store and keep the feed beside it."""
    from cce_core.foundation.config import load_config
    from cce_core.knowledge.ingest import DISABLED_MESSAGE, ingest_file
    from cce_core.knowledge.store import knowledge_dir

    if not load_config(root).knowledge_enabled:
        raise CceError(DISABLED_MESSAGE)
    chosen = list(globs) if globs else default_globs()
    skipped: dict[str, int] = {}
    data = feed_bytes(collect_documents(folders, root, chosen, skipped), source)
    # The feed is staged outside the project so a refused ingest leaves nothing behind.
    fd, staged = tempfile.mkstemp(prefix="cce-docs-feed-", suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        summary = ingest_file(Path(staged), root)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(staged)
    feed = knowledge_dir(root) / FEED_NAME
    atomic_write(feed, data)
    return AddSummary(list(folders), chosen, summary.records, skipped, feed, summary)


def add_summary_text(summary: AddSummary) -> str:
    """What ``cce knowledge add`` prints."""
    skipped = sum(summary.skipped.values())
    reasons = ", ".join(f"{label}: {n}" for label, n in sorted(summary.skipped.items()))
    ingest = summary.ingest
    return (f"Added knowledge from {', '.join(map(str, summary.folders))}\n"
            f"  globs     : {', '.join(summary.globs)}\n"
            f"  documents : {summary.documents}\n"
            + (f"  skipped   : {skipped} matching file(s) ({reasons})\n" if skipped else "")
            + f"  feed      : {summary.feed}\n"
            f"  records   : {ingest.records}\n"
            f"  chunks    : {ingest.chunks}\n"
            f"  snapshot  : {ingest.snapshot}\n"
            f"  store     : {ingest.store_path}\n")
