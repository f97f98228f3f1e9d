"""What a sync artifact may hold: the format's size limits and the checks of every field a pull trusts.

Whoever can write to a sync cache can also compute a valid checksum, so a
checksum proves only that the bytes arrived as written. What a pull may
believe is decided here instead, by rules both sides apply: the exporter
refuses to write what the importer would refuse to read (so a push never
publishes an artifact nobody can pull), and the importer refuses anything
outside them with one line naming the field.

The limits follow from the format. A file over 2 MiB is never indexed, so a
chunk's text (after redaction, which may lengthen it) stays far below
:data:`MAX_CONTENT_BYTES`; line numbers and token counts of such text fit in
31 bits; the shared vectors are the hash embedder's 256 dimensions, well
inside :data:`MAX_DIM`. A line longer than the longest field it can hold is
refused by its length alone, before it is parsed, and :class:`LineGuard`
enforces the same while the bytes are still arriving from git, so a blob
that compresses to almost nothing on the remote cannot inflate one field
without bound. (An artifact as a whole has no cap: a large repository makes
a large artifact, and every line of it is bounded.)
"""

from __future__ import annotations

import itertools
import json
import re

from cce_core.foundation.errors import CceError

# A chunk's text, in UTF-8 bytes: four times the largest file the walker reads.
MAX_CONTENT_BYTES = 8 << 20
# A file path, in UTF-8 bytes (PATH_MAX on Linux).
MAX_PATH_BYTES = 4096
# A chunk id, kind, language or chunk type, in UTF-8 bytes.
MAX_LABEL_BYTES = 256
# Dimensions of a vector.
MAX_DIM = 4096
# Line numbers, token counts and file token totals.
MAX_COUNT = (1 << 31) - 1
# The manifest line (one entry per file) and the graph line (one entry per file and per import edge).
MAX_MANIFEST_LINE_BYTES = 64 << 20
MAX_GRAPH_LINE_BYTES = 128 << 20


def _base64_length(raw_bytes: int) -> int:
    return 4 * ((raw_bytes + 2) // 3)


# The longest a chunk line can be: every string field at its limit, each byte escaped as \u00XX.
MAX_CHUNK_LINE_BYTES = (6 * (MAX_CONTENT_BYTES + MAX_PATH_BYTES + 4 * MAX_LABEL_BYTES)
                        + _base64_length(8 * MAX_DIM) + 1024)
# What a reader still receiving the bytes can hold a line to (it does not know yet which line is the last).
MAX_LINE_BYTES = max(MAX_MANIFEST_LINE_BYTES, MAX_CHUNK_LINE_BYTES, MAX_GRAPH_LINE_BYTES)
# The longest embedding text a chunk line may carry.
MAX_EMBEDDING_CHARS = _base64_length(8 * MAX_DIM)
# A pointer (`refs/<name>`, a corpus's `current`) holds one sha or snapshot id and a newline.
MAX_POINTER_BYTES = 1024

_PACK_NAME = re.compile(r"[a-z][a-z0-9_+-]*")
_CHECKSUM = re.compile(r"[0-9a-f]{64}")
_DRIVE = re.compile(r"[A-Za-z]:([/\\]|$)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SHOWN_CHARS = 120


class ArtifactError(CceError):
    """An artifact that cannot be built or is not a valid format-2.3 stream."""


def shown(text: str) -> str:
    """``text`` quoted for a one-line message: control characters escaped, long values cut."""
    cut = text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "…"
    return json.dumps(cut, ensure_ascii=False)


def _utf8_length(text: str) -> int:
    # A code point is at most 4 bytes: the exact count is needed only near the limit.
    return len(text) if text.isascii() else len(text.encode("utf-8", errors="surrogatepass"))


def path_problem(path: str) -> str | None:
    """Why ``path`` cannot name a file inside the tree (``it has a '..' segment``), or None when it can.

    A path is relative, ``/``-separated, and stays inside the tree however
    it is read: no ``..`` or ``.`` segment and no absolute form, also where
    a backslash would be taken as a separator; nothing inside a ``.git``
    directory; no NUL. Other control characters are legal in a file name
    (a tree may hold one, and its push must stay pullable): whatever prints
    a path as part of a line neutralizes them there. (A file named ``.git``
    is a submodule's or a worktree's pointer, not git's directory.)
    """
    if not path:
        return "it is an empty path"
    if _utf8_length(path) > MAX_PATH_BYTES:
        return f"it is longer than {MAX_PATH_BYTES} bytes"
    if "\0" in path:
        return "it holds a NUL character"
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        return "it is an absolute path"
    segments = re.split(r"[/\\]", path)
    if ".." in segments:
        return "it has a '..' segment"
    if "." in segments:
        return "it has a '.' segment"
    if "" in segments:
        return "it has an empty segment"
    if any(segment.lower() == ".git" for segment in segments[:-1]):
        return "it names git's own directory"
    return None


def check_path(path: str, where: str) -> None:
    """Raise :class:`ArtifactError` when ``path`` is not a file inside the tree; ``where`` says whose it is."""
    problem = path_problem(path)
    if problem is not None:
        raise ArtifactError(f"unsafe file path {shown(path)} {where}: {problem}")


def check_label(field: str, value: str) -> None:
    """A short field that is printed (chunk id, kind, language, chunk type): bounded, no control character."""
    if _utf8_length(value) > MAX_LABEL_BYTES:
        raise ArtifactError(f"chunk field `{field}` {shown(value)} is longer than {MAX_LABEL_BYTES} bytes")
    if _CONTROL.search(value):
        raise ArtifactError(f"chunk field `{field}` {shown(value)} holds a control character")


def check_count(value: int, what: str) -> None:
    if value > MAX_COUNT:
        raise ArtifactError(f"{what} = {value} is over the format's limit of {MAX_COUNT}")


def check_content(content: str, chunk_id: str) -> None:
    if len(content) * 4 > MAX_CONTENT_BYTES:  # only then can it be over the limit
        size = _utf8_length(content)
        if size > MAX_CONTENT_BYTES:
            raise ArtifactError(f"chunk {chunk_id}: content is {size} bytes, over the format's limit of "
                                f"{MAX_CONTENT_BYTES}")


def check_embedding_text(text: str, chunk_id: str) -> None:
    """Refuse an embedding too long to be a vector of the format, before it is decoded."""
    if len(text) > MAX_EMBEDDING_CHARS:
        raise ArtifactError(f"chunk {chunk_id}: its embedding is over the format's limit of {MAX_DIM} dimensions")


def is_pack_set_id(pack_set: str) -> bool:
    """Whether ``pack_set`` is a ``pack_set_id``: pack names, sorted, each once, comma-joined ("" for none)."""
    if pack_set == "":
        return True  # no language pack at all
    names = pack_set.split(",")
    return all(_PACK_NAME.fullmatch(n) for n in names) and all(a < b for a, b in itertools.pairwise(names))


def check_checksum_field(checksum: str) -> None:
    if not _CHECKSUM.fullmatch(checksum):
        raise ArtifactError(f"manifest checksum {shown(checksum)} is not 64 lowercase hex digits")


def check_line_lengths(lengths: list[int], *, graph: bool = True) -> None:
    """Each line against the limit of its kind (first the manifest, then chunks, last the graph when the
    format has one), before anything is parsed."""
    last = len(lengths) - 1 if graph else -1
    for number, length in enumerate(lengths):
        if number == 0:
            limit, kind = MAX_MANIFEST_LINE_BYTES, "the manifest line"
        elif number == last:
            limit, kind = MAX_GRAPH_LINE_BYTES, "the graph line"
        else:
            limit, kind = MAX_CHUNK_LINE_BYTES, "a chunk line"
        if length > limit:
            raise ArtifactError(f"artifact line {number + 1} is {length} bytes, over the format's limit of {limit} "
                                f"for {kind}")


class LineGuard:
    """Fed an artifact's bytes as they arrive, refuses a line longer than any line of the format can be.

    ``first`` limits line 1 (the manifest), ``rest`` every other line. It
    holds no bytes itself, only the length of the line in progress.
    """

    def __init__(self, first: int = MAX_MANIFEST_LINE_BYTES, rest: int = MAX_LINE_BYTES) -> None:
        self.first = first
        self.rest = rest
        self._line = 1
        self._length = 0

    def feed(self, block: bytes) -> None:
        start = 0
        while True:
            end = block.find(b"\n", start)
            piece = (len(block) if end < 0 else end) - start
            self._length += piece
            limit = self.first if self._line == 1 else self.rest
            if self._length > limit:
                raise ArtifactError(f"artifact line {self._line} is over {limit} bytes, the format's limit — "
                                    "refused while reading it")
            if end < 0:
                return
            self._line += 1
            self._length = 0
            start = end + 1
