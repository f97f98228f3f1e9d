"""The cross-engine conformance report: every chunk of a fixture directory.

Engines of the family diff this JSON byte for byte (all but ``impl_language``),
so its field order, sorting and formatting are fixed.
"""

from __future__ import annotations

import json
import os

from cce_core.indexing.chunk import Chunk
from cce_core.indexing.walker import walk
from cce_core.plugins.host import PluginHost
from cce_core.secrets.redactor import redact

CONFORMANCE_SPEC_VERSION = "2.0"
IMPL_LANGUAGE = "python"  # lang-guard: engine identity


def conformance_chunks(root: str | os.PathLike[str], host: PluginHost) -> list[Chunk]:
    from cce_core.indexing.chunker import Chunker

    chunker = Chunker(host)
    chunks: list[Chunk] = []
    for wf in walk(str(root), protect_secrets=True).files:
        chunks.extend(chunker.chunk_file(wf.path, redact(wf.text)).chunks)
    chunks.sort(key=lambda c: (c.file_path, c.start_line, c.chunk_id))
    return chunks


def conformance_json(root: str | os.PathLike[str], host: PluginHost) -> str:
    body = {
        "spec_version": CONFORMANCE_SPEC_VERSION,
        "impl_language": IMPL_LANGUAGE,
        "chunks": [
            {
                "file_path": c.file_path,
                "start_line": c.start_line,
                "end_line": c.end_line,
                "chunk_type": c.chunk_type,
                "kind": c.kind,
                "chunk_id": c.chunk_id,
                "token_count": c.token_count,
            }
            for c in conformance_chunks(root, host)
        ],
    }
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"
