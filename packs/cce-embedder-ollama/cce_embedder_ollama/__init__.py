"""An optional embedder that asks a local Ollama server for model embeddings.

Why it exists: the default hash embedder is exact and model-free, so it can
only match words that literally occur in the code. A real embedding model
(``nomic-embed-text`` by default) also matches meaning, at the price of a
running server and vectors that depend on the model. This plugin keeps that
choice behind the same :class:`~cce_core.hookspecs.Embedder` contract, so the
engine never knows which one it talks to.

It fails loud. A store whose vectors came from a different embedding space
than its queries ranks silently wrong, so every problem — no server, an HTTP
error, a malformed answer, a missing or ragged vector — raises
:class:`~cce_core.hookspecs.EmbedderError` instead of degrading to empty or
hash vectors. :meth:`OllamaEmbedder.unavailable_message` gives
the CLI its refusal texts (for indexing and for searching).

Configuration (environment): ``CCE_OLLAMA_URL`` (default
``http://localhost:11434``), ``CCE_OLLAMA_MODEL`` (default
``nomic-embed-text``) and ``CCE_OLLAMA_TIMEOUT`` in seconds (default 60).

Texts go to ``POST {url}/api/embed`` in batches of :data:`EMBED_BATCH_SIZE`,
each cut to its first :data:`MAX_INPUT_CHARS` characters. An empty text is
not sent: its row is all zeros (no vector signal), which keeps the result a
rectangular ``(n, dim)`` float64 array.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from cce_core.api import Embedder, EmbedderError, RegisterEmbedder, hookimpl

DEFAULT_URL = "http://localhost:11434"
DEFAULT_MODEL = "nomic-embed-text"
DEFAULT_TIMEOUT = 60.0
EMBED_BATCH_SIZE = 64
MAX_INPUT_CHARS = 2000

URL_ENV = "CCE_OLLAMA_URL"
MODEL_ENV = "CCE_OLLAMA_MODEL"
TIMEOUT_ENV = "CCE_OLLAMA_TIMEOUT"

# How much of an error body to quote back to the user.
_ERROR_SNIPPET = 200


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _parse_timeout(raw: str | None) -> float:
    if raw is None or raw.strip() == "":
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise EmbedderError(f"{TIMEOUT_ENV} must be a positive number of seconds, got {raw!r}")
    return value


def _snippet(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    return text if len(text) <= _ERROR_SNIPPET else text[:_ERROR_SNIPPET] + "…"


def _is_number(x: Any) -> bool:
    # bool is an int subclass; a JSON true/false is not a coordinate.
    return (type(x) is float and math.isfinite(x)) or type(x) is int


class OllamaEmbedder(Embedder):
    """Embeds texts through Ollama's ``/api/embed`` endpoint (see the module docstring)."""

    name = "ollama"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        timeout: float | None = None,
        batch_size: int = EMBED_BATCH_SIZE,
    ) -> None:
        url = base_url if base_url is not None else os.environ.get(URL_ENV) or DEFAULT_URL
        self.base_url: str = url.rstrip("/")
        self.model: str = model if model is not None else os.environ.get(MODEL_ENV) or DEFAULT_MODEL
        self.timeout: float = timeout if timeout is not None else _parse_timeout(os.environ.get(TIMEOUT_ENV))
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.batch_size = batch_size
        # The short reason of the most recent failure (None after a success);
        # the refusal messages quote it.
        self.last_error: str | None = None
        self._dim: int | None = None
        # HTTP modules load on first use: every cce command loads this plugin,
        # but only Ollama users need them.
        import urllib.request
        from urllib.parse import urlsplit

        # A local server is reached directly even when an HTTP proxy is set.
        handlers = [urllib.request.ProxyHandler({})] if _is_loopback(urlsplit(self.base_url).hostname) else []
        self._opener = urllib.request.build_opener(*handlers)

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/api/embed"

    @property
    def dim(self) -> int | None:  # type: ignore[override]  # read-only: learnt from the server, never set by callers
        """The vector length, known after the first successful request (``None`` before)."""
        return self._dim

    # -- the Embedder protocol ------------------------------------------------

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` as an ``(len(texts), dim)`` float64 array.

        Non-empty texts are sent in batches of ``batch_size``; empty ones get a
        zero row. Raises :class:`EmbedderError` on any failure.
        """
        n = len(texts)
        todo = [i for i, text in enumerate(texts) if text]
        parts: list[tuple[list[int], np.ndarray]] = []
        for start in range(0, len(todo), self.batch_size):
            rows = todo[start : start + self.batch_size]
            parts.append((rows, self._embed_nonempty([texts[i] for i in rows])))
        out = np.zeros((n, self._require_dim()), dtype=np.float64)
        for rows, vectors in parts:
            out[rows] = vectors
        return out

    def embed_query(self, text: str) -> np.ndarray:  # type: ignore[override]  # an array, as the base allows
        """The 1-D float64 vector of one query (all zeros for an empty query)."""
        return self.embed_batch([text])[0]

    def healthy(self) -> bool:
        """True when the server embeds a tiny probe text with the configured model."""
        try:
            self._embed_nonempty(["ping"])
        except EmbedderError:
            return False
        return True

    # -- the wire ---------------------------------------------------------------

    def unavailable_message(self, purpose: str) -> str:
        """Why ``cce index --embedder ollama`` (``purpose="index"``) or a search of an ollama-built store refuses."""
        reason = f" ({self.last_error})" if self.last_error else ""
        if purpose == "index":
            return (
                f"Ollama is unreachable at {self.base_url}{reason} — refusing to index with "
                f"--embedder ollama. Start Ollama (and `ollama pull {self.model}`), or index with the default "
                "hash embedder (drop --embedder ollama)."
            )
        return (
            f"this index was built with the ollama embedder but Ollama is unreachable at {self.base_url}"
            f"{reason} — refusing to search across mismatched embedding spaces. Start Ollama "
            f"(and `ollama pull {self.model}`), or re-index with the default hash embedder (`cce index <dir>`)."
        )

    def _require_dim(self) -> int:
        if self._dim is not None:
            return self._dim
        # Only empty texts so far: ask once, so zero rows have the model's width.
        return int(self._embed_nonempty(["ping"]).shape[1])

    def _fail(self, reason: str) -> EmbedderError:
        self.last_error = reason
        return EmbedderError(f"Ollama embedding request to {self.endpoint} (model {self.model}) failed: {reason}")

    def _post(self, inputs: list[str]) -> Any:
        import http.client
        import urllib.error
        import urllib.request
        from urllib.parse import urlsplit

        parts = urlsplit(self.base_url)
        try:
            port_ok = parts.port is None or parts.port > 0
        except ValueError:
            port_ok = False
        if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
            raise self._fail(f"bad {URL_ENV} {self.base_url!r}: expected http://host:port")
        body = json.dumps({"model": self.model, "input": inputs}, ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(
            self.endpoint,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json"},
        )
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                status = response.status
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = _snippet(exc.read() or b"")
            try:
                message = json.loads(detail).get("error")
                if isinstance(message, str) and message:
                    detail = message
            except (ValueError, AttributeError):
                pass
            hint = f"; run `ollama pull {self.model}`" if exc.code == 404 else ""
            raise self._fail(f"HTTP {exc.code}: {detail or exc.reason}{hint}") from None
        except TimeoutError:
            raise self._fail(f"no answer within {self.timeout:g}s; set {TIMEOUT_ENV} to wait longer") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise self._fail(f"no answer within {self.timeout:g}s; set {TIMEOUT_ENV} to wait longer") from None
            if isinstance(reason, ConnectionRefusedError):
                raise self._fail("connection refused") from None
            raise self._fail(f"cannot connect: {reason}") from None
        except (OSError, http.client.HTTPException) as exc:
            raise self._fail(f"connection error: {exc.__class__.__name__}: {exc}") from None
        except ValueError as exc:  # a URL urllib still cannot use
            raise self._fail(f"bad {URL_ENV} {self.base_url!r}: {exc}") from None
        if status != 200:
            raise self._fail(f"HTTP {status} (expected 200): {_snippet(raw)}")
        try:
            return json.loads(raw)
        except ValueError:
            raise self._fail(f"the response is not JSON: {_snippet(raw)!r}") from None

    def _embed_nonempty(self, texts: list[str]) -> np.ndarray:
        """One request for ``texts`` (all non-empty, at most one batch); ``(k, dim)``."""
        payload = self._post([text[:MAX_INPUT_CHARS] for text in texts])
        embeddings = payload.get("embeddings") if isinstance(payload, dict) else None
        if not isinstance(embeddings, list):
            raise self._fail(f'the response has no "embeddings" list (is {self.model} an embedding model?)')
        if len(embeddings) != len(texts):
            raise self._fail(f"got {len(embeddings)} embedding(s) for {len(texts)} input(s)")
        width: int | None = self._dim
        for i, vector in enumerate(embeddings):
            if not isinstance(vector, list):
                raise self._fail(f"embedding {i} is not a list of numbers")
            if not vector:
                raise self._fail(f"embedding {i} is empty for a non-empty input")
            if not all(_is_number(x) for x in vector):
                raise self._fail(f"embedding {i} holds a value that is not a finite number")
            if width is None:
                width = len(vector)
            elif len(vector) != width:
                raise self._fail(
                    f"embedding {i} has {len(vector)} dimensions, expected {width}; "
                    "vectors of one index must all have the same length (did the model change?)"
                )
        self._dim = width
        self.last_error = None
        return np.asarray(embeddings, dtype=np.float64)


@hookimpl
def cce_register_embedders(register: RegisterEmbedder) -> None:
    register("ollama", OllamaEmbedder)


__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_TIMEOUT",
    "DEFAULT_URL",
    "EMBED_BATCH_SIZE",
    "MAX_INPUT_CHARS",
    "OllamaEmbedder",
]
