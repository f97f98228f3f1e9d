"""Open the knowledge corpus server: the store of one project over loopback HTTP, bearer token required.

The host is checked before the token or the store is read, and the server is
bound here and handed back unstarted; a port that cannot be bound is one
``error:`` line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.foundation.errors import CceError


@dataclass(frozen=True)
class OpenCorpus:
    server: Any  # knowledge.corpus_server.CorpusServer, bound, not yet serving
    sections: int  # how many knowledge sections it serves


def open_corpus_server(root: Path, host: str, port: int, token_file: Path | None, top_k: int) -> OpenCorpus:
    from cce_core.foundation.config import load_config
    from cce_core.knowledge.corpus_server import (
        CorpusApp,
        CorpusServer,
        load_knowledge_for_serving,
        loopback_host,
        resolve_token,
    )

    loopback_host(host)  # refused before the token or the store is even read
    token = resolve_token(token_file)
    knowledge = load_knowledge_for_serving(root)
    app = CorpusApp(knowledge, token, top_k, load_config(root).knowledge_min_score)
    try:
        server = CorpusServer(app, host, port)
    except OSError as exc:
        raise CceError(f"corpus serve failed: could not listen on {host}:{port}: {exc.strerror or exc}") from None
    return OpenCorpus(server, len(knowledge.store.chunks))
