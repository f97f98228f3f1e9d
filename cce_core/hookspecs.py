"""The plugin contract: everything a language pack or embedder author needs.

cce discovers plugins through the ``cce`` entry-point group. A plugin is any
importable object (usually a module) carrying ``@hookimpl`` functions for some
of the hooks below. Four extension points exist:

* ``cce_register_packs(register)`` — declare :class:`LanguagePack` objects
  (which files a pack claims, how to parse them, which syntax nodes become
  chunks, a sample and what the sample must produce).
* ``cce_extract_imports(language, root, source)`` — first non-``None`` answer
  wins, so a plugin can replace a pack's import extraction.
* ``cce_render_compact(language, chunk, node, level)`` — first non-``None``
  answer wins; ``None`` everywhere means the language-neutral rendering.
* ``cce_register_embedders(register)`` — declare embedders by name.

Nothing here imports a grammar: a pack hands over a loader that returns its
``tree_sitter.Language`` when the engine first needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np
    from tree_sitter import Language, Node

PROJECT_NAME = "cce"
ENTRY_POINT_GROUP = "cce"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@dataclass(frozen=True)
class PackExpected:
    """What a pack's own sample must produce (its behavioural self-test)."""

    min_functions: int
    min_classes: int
    kinds: tuple[str, ...]
    imports: tuple[str, ...]


@dataclass(frozen=True)
class LanguagePack:
    """Everything the engine knows about one language.

    ``function_types`` / ``class_types`` are grammar node kinds: every named
    node of such a kind becomes a ``function`` / ``class`` chunk, nested ones
    included. ``extract_imports(root, source)`` returns the module names a file
    imports, de-duplicated in first-seen order; they feed the import graph.

    ``imports_from_nodes(nodes, source)`` is optional and gives the same answer
    from nodes the chunker has already found: every node whose kind is in
    ``import_node_types``, in start-byte order. With it, the chunker captures
    chunk and import nodes in one query over the tree instead of two.
    ``extract_imports`` stays required: validators, tools and plugins call it on
    a bare tree. Leave it ``None`` when ``import_node_types`` would match far
    more nodes than the imports (a call-expression kind, say).
    """

    name: str
    extensions: tuple[str, ...]
    grammar: Callable[[], Language]
    function_types: tuple[str, ...]
    class_types: tuple[str, ...]
    import_node_types: tuple[str, ...]
    extract_imports: Callable[[Node, bytes], list[str]]
    sample: str
    sample_name: str
    expected: PackExpected
    # Distribution that ships the grammar, so `cce packs` can report its version.
    grammar_distribution: str = ""
    # Path suffixes an import may also resolve by (``<module><suffix>``), after
    # the exact file-stem match fails.
    module_suffixes: tuple[str, ...] = ()
    # Node kinds the compact renderer reads (bodies, doc comments, members).
    body_node_types: tuple[str, ...] = ()
    doc_node_types: tuple[str, ...] = ()
    member_node_types: tuple[str, ...] = ()
    member_line_prefixes: tuple[str, ...] = ()
    # Optional fast path for extract_imports (see above): names from the import nodes.
    imports_from_nodes: Callable[[list[Node], bytes], list[str]] | None = None
    # Filled in by the engine: the distribution the pack was loaded from.
    distribution: str = field(default="", compare=False)


class EmbedderError(Exception):
    """An embedder could not produce vectors; indexing must stop, not degrade."""


class Embedder:
    """The base class of every embedder: turns texts into float64 vectors, one row per text.

    Subclass it and register a factory (usually the class itself) with
    :func:`CceHookSpecs.cce_register_embedders`. The engine reads exactly
    what is declared here, nothing else:

    * ``name`` — the name users select (``cce index --embedder NAME``); it is
      written into the store, and a search loads the embedder of that name.
    * ``model`` — the model behind the vectors, stored as ``embed_model``. A
      search refuses a store built with another model. Empty for model-free
      embedders.
    * ``dim`` — the vector width. It is only read when an index has no chunk
      at all (the store still records a width); ``None`` when unknown.
    * :meth:`embed_batch` and :meth:`embed_query` — required.
    * :meth:`embed_tokenized` — an optional fast path (default: not offered).
    * :meth:`healthy` and :meth:`unavailable_message` — for embedders that
      depend on something outside the process (a server): checked before an
      index or a search starts, so a dead server gives one clear error line
      instead of a half-built index.
    """

    name: str = ""
    model: str = ""
    dim: int | None = None

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` as a ``(len(texts), dim)`` float64 array.

        The indexer calls it with at most 512 texts at a time. Raise
        :class:`EmbedderError` when no vectors can be produced: indexing then
        stops and writes nothing.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement embed_batch")

    def embed_query(self, text: str) -> Sequence[float]:
        """The vector of one query string: a 1-D float64 array or a list of floats.

        A list lets a one-shot search answer without importing numpy.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement embed_query")

    def embed_tokenized(self, vocab: Sequence[bytes], flat_ids: Any, lengths: Any) -> np.ndarray | None:
        """Optional: vectors for texts given as the family's tokens, or ``None`` (the default) to decline.

        ``vocab`` is the token list, ``flat_ids`` every text's token ids one
        after another and ``lengths`` how many ids each text has — the ids the
        indexer already made for BM25. An embedder that works on the family's
        tokens (the hash embedder) answers here and saves a second
        tokenization; the rows must equal what :meth:`embed_batch` would give.
        """
        return None

    def healthy(self) -> bool:
        """Whether the embedder can produce vectors right now (default: always)."""
        return True

    def unavailable_message(self, purpose: str) -> str:
        """The one-line error shown when :meth:`healthy` is false.

        ``purpose`` is ``"index"`` (``cce index`` refuses to start) or
        ``"search"`` (a search of a store this embedder built refuses, since
        another embedder's vectors would not be comparable). Say what is
        unreachable and how to fix it.
        """
        return f'the "{self.name}" embedder is unavailable'


RegisterPack = Callable[[LanguagePack], None]
RegisterEmbedder = Callable[[str, Callable[[], Embedder]], None]


class CceHookSpecs:
    """Hook signatures; implementations use ``@hookimpl`` with the same names."""

    @hookspec
    def cce_register_packs(self, register: RegisterPack) -> None:
        """Call ``register(pack)`` once for every language pack this plugin ships."""

    @hookspec(firstresult=True)
    def cce_extract_imports(self, language: str, root: Node, source: bytes) -> list[str] | None:
        """Return the imports of a parsed file, or ``None`` to leave it to the pack."""

    @hookspec(firstresult=True)
    def cce_render_compact(self, language: str, chunk: Any, node: Node | None, level: str) -> str | None:
        """Return the compact rendering of a chunk, or ``None`` for the neutral rule."""

    @hookspec
    def cce_register_embedders(self, register: RegisterEmbedder) -> None:
        """Call ``register(name, factory)`` for every embedder this plugin ships."""
