"""The plugin contract: every hook, the types a plugin exchanges with the engine, and the call order.

A *plugin* is an importable object — usually a module; an instance of a
class works too — carrying functions decorated with ``@hookimpl`` and named
after the hooks of :class:`CceHookSpecs`. Installed plugins are found through
the ``cce`` entry-point group; the core's own plugins
(:mod:`cce_core.default_plugins`) are registered by module path, the way llm
and datasette register theirs. :class:`CceHookSpecs` states the one call
order every hook follows, and each hook's docstring is its whole contract.

A plugin imports from the engine only :mod:`cce_core.api`, which re-exports
every name of this module a plugin needs.

The docstrings here are the single source of the reference in
``docs/plugins.md``: :mod:`cce_core.plugins.hook_reference` renders them
into the marked regions of that page, and a test fails when the two drift.
The page's own prose (discovery, the entry-point cache, validation, worked
examples) is written there and only there. Nothing here imports a grammar.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

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
    """What a pack's own sample must produce: the pack's behavioural self-test.

    Layer 3 of the validation (``cce packs --validate``,
    ``cce_core.api.validate_plugin``) chunks :attr:`LanguagePack.sample` under
    :attr:`LanguagePack.sample_name` with every plugin hook switched off, so a
    pack is judged on its own rules, and compares the result with these
    fields. It runs only when layers 1 and 2 passed.

    * ``min_functions`` — at least this many ``function`` chunks.
    * ``min_classes`` — at least this many ``class`` chunks.
    * ``kinds`` — node kinds that must each appear as the ``kind`` of at
      least one chunk (a chunk's kind is the grammar node kind it was cut
      from).
    * ``imports`` — exactly what ``extract_imports`` returns on the sample,
      order included. When the pack also has ``imports_from_nodes``, that
      must return the same list.
    """

    min_functions: int
    min_classes: int
    kinds: tuple[str, ...]
    imports: tuple[str, ...]


@dataclass(frozen=True)
class LanguagePack:
    """Everything the engine knows about one language; register it with :meth:`CceHookSpecs.cce_register_packs`.

    The engine knows no language itself: it reads only these fields.

    Identity and files (checked by validation layer 1 every time a pack is
    registered; a pack that fails is not registered):

    * ``name`` — the pack's name: non-empty, lowercase, and unique among the
      installed packs. It is each chunk's ``language``, the ``language``
      argument of the hooks, and part of ``pack_set_id``, so layer 1
      accepts only a letter followed by ``a-z``, ``0-9``, ``_``, ``-`` or
      ``+`` (``cce packs new`` asks for ``[a-z][a-z0-9_]*``).
    * ``extensions`` — the file extensions the pack claims: at least one; each
      a lowercase string with a leading dot and at least one character after
      it, listed once, and not claimed by another installed pack (the pack
      registered first keeps a contested extension; the second is rejected).
      A path is matched by its lowercased *final* extension, so ``.ts``
      matches ``a.d.ts``; layer 1 refuses a two-dot extension such as
      ``.d.ts``, which could never match anything.

    The grammar and the chunks (every kind named in ``function_types``,
    ``class_types``, ``import_node_types``, ``body_node_types``,
    ``doc_node_types`` and ``member_node_types`` must be a named node kind of
    the grammar: validation layer 2, with "did you mean" suggestions):

    * ``grammar`` — a zero-argument callable returning the
      ``tree_sitter.Language``. Import the grammar module inside it and cache
      the result: it is called lazily (the first file of the language, a
      compact view, ``cce packs``, the validators), possibly many times.
    * ``function_types`` / ``class_types`` — node kinds: every named node of
      such a kind becomes a ``function`` / ``class`` chunk, nested ones
      included, and the chunk's ``kind`` is the node kind. A file with no
      such node becomes one ``module`` chunk. For compact rendering a
      ``class_types`` node is a *container* and a ``function_types`` node a
      *leaf*.

    Imports (they feed the import graph):

    * ``extract_imports(root, source)`` — required: the module names a file
      imports, each once, in first-seen order, from the root node of the
      whole file and its UTF-8 bytes. Validators, tools and plugins call it on
      a bare tree. An exception means the file has no imports.
      ``cce_core.api.imports_by_node_kind`` builds it from
      ``imports_from_nodes``. ``grammar`` and ``extract_imports`` must be
      callables (layer 1).
    * ``import_node_types`` — the node kinds that carry the imports.
    * ``imports_from_nodes(nodes, source)`` — optional, the same answer from
      every node whose kind is in ``import_node_types``, in start-byte order.
      With it, the chunker captures chunk and import nodes in one query over
      the tree instead of two. Leave it ``None`` when ``import_node_types``
      would match far more nodes than the imports (a call-expression kind,
      say), unless ``import_pattern`` narrows them. Must be callable or
      ``None`` (layer 1).
    * ``import_pattern`` — optional, with ``imports_from_nodes``: a query
      (one or more tree-sitter patterns, predicates allowed) capturing the
      import nodes as ``@import``, for a language whose import kind is far
      more common than its imports (Ruby's ``require`` is a ``call``). The
      chunker then runs it in its one walk in place of matching every
      ``import_node_types`` node, and ``imports_from_nodes`` gets what it
      captures, in start-byte order; a node two matches capture comes twice.
      Name any other capture with a leading ``_`` (``@_method``). Layer 2
      compiles it against the grammar and asks for an ``@import`` capture.
    * ``module_suffixes`` — how an import name resolves to an indexed file:
      first the file whose stem equals the name, else the first path ending in
      ``<name><suffix>`` for a suffix some pack declares (the suffixes of all
      installed packs are pooled).

    The self-test (validation layer 3, see :class:`PackExpected`):

    * ``sample`` — the text of a small, real file of the language, with at
      least one node of every kind listed and each import form handled.
    * ``sample_name`` — the path the sample is chunked under.
    * ``expected`` — what the sample must produce.

    Compact rendering (read by ``cce_core.api.render_definition`` and
    ``structural_renderer``):

    * ``body_node_types`` — the kinds of a definition's body: the first
      *direct* child of such a kind ends the header, which alone is the
      ``signature`` view.
    * ``doc_node_types`` — a body whose first named child has such a kind
      starts with a doc; ``compact`` shows its first line.
    * ``member_node_types`` — inside a container's body, children of these
      kinds (besides ``function_types``) are members, one line each.
    * ``member_line_prefixes`` — a body child whose first line starts with
      one of these words is a member too (Ruby's ``has_many``, say).

    Listing and provenance:

    * ``grammar_distribution`` — the distribution that ships the grammar
      (``tree-sitter-lua``), so ``cce packs`` can report its version and
      diagnostics can name it.
    * ``distribution`` — leave it empty: the engine fills in the distribution
      the pack was registered from. It takes no part in equality.

    Which of the language's files are tests and which are generated is not a
    field: the pack answers :meth:`CceHookSpecs.cce_file_conventions` with a
    :class:`FileConventions`.
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
    # the exact file-stem match fails; pooled across all installed packs.
    module_suffixes: tuple[str, ...] = ()
    # Node kinds the compact renderer reads (bodies, doc comments, members).
    body_node_types: tuple[str, ...] = ()
    doc_node_types: tuple[str, ...] = ()
    member_node_types: tuple[str, ...] = ()
    member_line_prefixes: tuple[str, ...] = ()
    # Optional fast path for extract_imports (see above): names from the import nodes.
    imports_from_nodes: Callable[[list[Node], bytes], list[str]] | None = None
    # Optional: the query whose @import captures imports_from_nodes reads, in place of import_node_types.
    import_pattern: str = ""
    # Filled in by the engine: the distribution the pack was loaded from.
    distribution: str = field(default="", compare=False)


@dataclass(frozen=True)
class FileConventions:
    """Which files of a language are tests and which are generated, as ``cce_file_conventions`` returns them.

    The default ranking holds back tests, examples, documentation, licences
    and the like so that a question finds the source (docs/relevance.md,
    *file roles*). The engine knows only the conventions of repositories in
    general — folders such as ``tests/``, ``docs/``, ``examples/``,
    ``vendor/``, lockfiles, licences, stylesheets, minified files. The
    conventions of one language (``*_test.go``, ``spec/``, ``test_*.py``,
    ``*_pb2.py``) come from the plugins through this type; a language no
    installed plugin speaks for keeps the general rules only.

    * ``tests`` — patterns of the language's test files.
    * ``generated`` — patterns of files a tool writes (protobuf stubs, build
      output folders), which the default ranking holds back further.

    Each is a tuple of path patterns over a file's relative, ``/``-separated
    path, matched case-sensitively, each component with ``fnmatch``
    (``*``, ``?``, ``[...]``):

    * ``name/`` — every file below a directory called ``name``, at any depth
      (``__tests__/``); several components (``src/test/``) must follow one
      another.
    * ``pattern`` without a slash — the file name, at any depth
      (``*_test.go``, ``conftest.py``). Include the extension: a pattern is
      not limited to the files your pack claims.
    * ``dir/pattern`` — the path's last components (``test/*_test.rb``).

    A pattern must be a non-empty string without surrounding white space, a
    leading ``/``, ``\\``, ``**``, or an empty, ``.`` or ``..`` component,
    and must not match every file (``*``). The conventions of all installed
    plugins are pooled: a file is a test when any plugin's ``tests`` pattern
    matches it. A generated file is held back even when it also looks like
    a test.
    """

    tests: tuple[str, ...] = ()
    generated: tuple[str, ...] = ()


class EmbedderError(Exception):
    """An embedder could not produce vectors; indexing must stop, not degrade.

    Raised from :meth:`Embedder.embed_batch` it stops ``cce index`` with
    ``error: embedding failed, nothing was written: <message>``; raised from
    :meth:`Embedder.embed_query` by ``cce search`` it is printed as the
    ``error:`` line.
    """


class Embedder:
    """The base class of every embedder: turns texts into float64 vectors, one row per text.

    Subclass it and register a factory (usually the class itself) with
    :meth:`CceHookSpecs.cce_register_embedders`; the engine refuses a factory
    whose product is not an instance of this class. The engine reads exactly
    what is declared here, nothing else:

    * ``name`` — the name users select (``cce index --embedder NAME``); it is
      written into the store, and a search loads the embedder registered
      under that name, so it must equal the name you register.
    * ``model`` — the model behind the vectors, stored as ``embed_model``. A
      search refuses a store built with another model. Empty for model-free
      embedders.
    * ``dim`` — the vector width. It is only read when an index has no chunk
      at all (the store still records a width) and by ``cce packs``; ``None``
      when unknown.
    * ``size_bytes`` — optional: the on-disk size of the model files, shown
      by ``cce packs``; ``None`` (the default) for model-free embedders.
    * :meth:`embed_batch` and :meth:`embed_query` — required.
    * :meth:`embed_tokenized` — an optional fast path (default: not offered).
    * :meth:`healthy` and :meth:`unavailable_message` — for embedders that
      depend on something outside the process (a server): checked before an
      index or a search starts, so a dead server gives one clear error line
      instead of a half-built index.

    ``cce packs`` builds every registered embedder once to show its model and
    dimension, so the constructor must be cheap and must not reach the
    network; check reachability in :meth:`healthy`.
    """

    name: str = ""
    model: str = ""
    dim: int | None = None
    size_bytes: int | None = None

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` as a ``(len(texts), dim)`` float64 array.

        The indexer calls it with at most 512 texts at a time; every batch
        must have the same width. Raise :class:`EmbedderError` when no vectors
        can be produced: indexing then stops and writes nothing.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement embed_batch")

    def embed_query(self, text: str) -> Sequence[float]:
        """The vector of one query string: a 1-D float64 array or a list of floats.

        A list lets a one-shot search answer without importing numpy.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement embed_query")

    def embed_tokenized(self, vocab: Sequence[bytes], flat_ids: np.ndarray,
                        lengths: np.ndarray) -> np.ndarray | None:
        """Optional: vectors for texts given as the family's tokens, or ``None`` (the default) to decline.

        ``vocab`` is the token list, ``flat_ids`` every text's token ids one
        after another and ``lengths`` how many ids each text has — the ids the
        indexer already made for BM25. An embedder that works on the family's
        tokens (the hash embedder) answers here and saves a second
        tokenization; the rows must equal what :meth:`embed_batch` would give.
        The indexer asks once per ``cce index`` that has new chunks to embed,
        before any :meth:`embed_batch` call, with one text per chunk of the
        new index (reused ones included), and keeps the rows it needs.
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


@dataclass(frozen=True)
class DocumentSection:
    """One section a :class:`DocumentChunker` cut from a document: the unit knowledge ingest stores and searches.

    * ``chunk_id`` — 16 lowercase hex digits, the engine family's content
      address: the first 16 hex characters of SHA-256 over
      ``"{path}:{start_line}:{end_line}:"`` followed by the first 100 bytes of
      ``content`` in UTF-8, where ``path`` is the document id the chunker was
      given. Equal inputs must give equal ids.
    * ``kind`` — what the section is, e.g. its heading text (a chunker's
      README says which values it uses).
    * ``name`` — the section's display name, e.g. a breadcrumb of headings.
    * ``start_line`` / ``end_line`` — 1-based and inclusive, in the document
      as given; ``end_line >= start_line``.
    * ``token_count`` — ``cce.tokens/v1`` of ``content``
      (``cce_core.api.estimate_tokens``).
    * ``content`` — the section's text, never empty.
    """

    chunk_id: str
    kind: str
    name: str
    start_line: int
    end_line: int
    token_count: int
    content: str


class DocumentChunker:
    """The base class of every document chunker: cuts one document format into :class:`DocumentSection` records.

    Register an instance with :meth:`CceHookSpecs.cce_register_document_chunkers`.
    A document chunker serves knowledge ingest (documents beside the code),
    never the code index: a file inside a code index is cut only by the
    language pack that claims its extension, and document chunkers take no
    part in ``pack_set_id``. The engine reads exactly what is declared here:

    * ``name`` — the chunker's name (``markdown``): non-empty, lowercase, a
      letter then ``a-z``, ``0-9``, ``_``, ``-`` or ``+``; unique among the
      installed chunkers.
    * ``formats`` — the format names callers look the chunker up by
      (knowledge ingest asks ``document_chunker_for("markdown")``):
      at least one, same spelling rule as ``name``, none claimed by another
      chunker. By convention a chunker for format ``F`` ships in the
      distribution ``cce-pack-F``, which is what the engine tells a user to
      install when no chunker answers for ``F``.
    * ``extensions`` — the file extensions of the format (``.md``), lowercase
      with a leading dot, for tools that pick a chunker by file name. They
      are checked against the other document chunkers only: a language pack
      may claim the same extension for code indexes.
    * ``sample`` — optional: a small real document of the format, which
      ``cce packs --validate`` chunks (see Validation in docs/plugins.md).
    * :meth:`chunk_document` — required.

    The constructor runs at registration, in every process that lists or
    validates plugins: keep it cheap, and load a grammar only when
    :meth:`chunk_document` first needs it. The engine fills ``distribution``
    (a class default of ``""``) with the distribution that registered the
    chunker.
    """

    name: str = ""
    formats: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    sample: str = ""
    distribution: str = ""

    def chunk_document(self, path: str, content: str, budget: int) -> list[DocumentSection]:
        """The sections of one document, in document order.

        ``path`` is the document's id: it goes into every ``chunk_id`` and is
        never opened. ``content`` is the whole document (already redacted by
        the caller when it redacts). ``budget`` is the section budget in
        ``cce.tokens/v1`` tokens (knowledge ingest passes
        ``markdown.max_section_tokens``, 400 by default); how a section over
        budget is split is the chunker's rule. Empty or blank input gives
        ``[]``. It must be deterministic and must never crash the process on
        any text: a chunker over a C parser guards the inputs the parser
        cannot take.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement chunk_document")


@dataclass(frozen=True, slots=True)
class CompactChunk:
    """A stored chunk on its way to a renderer: the ``chunk`` argument of :meth:`CceHookSpecs.cce_render_compact`.

    * ``file_path`` — the path the index records for the chunk.
    * ``content`` — the chunk's stored text: one definition, or a whole file
      that held none.
    * ``source`` — ``content`` as UTF-8 bytes; the ``node`` handed to the
      hook indexes into these bytes.
    * ``pack`` — the :class:`LanguagePack` whose grammar parsed ``source``.
    """

    file_path: str
    content: str
    source: bytes
    pack: LanguagePack


class CompactRenderer(Protocol):
    """The shape of a ``cce_render_compact`` implementation, as ``structural_renderer`` returns one.

    Called by keyword with the hook's parameters (see
    :meth:`CceHookSpecs.cce_render_compact`); answers the view as a ``str``,
    or ``None`` to leave the chunk to the next renderer.
    """

    def __call__(self, language: str, chunk: CompactChunk, node: Node | None, level: str) -> str | None:
        """The ``level`` view of ``chunk``, or ``None`` to pass."""
        ...


# The ``register`` argument of cce_register_packs: ``register(pack)``.
RegisterPack = Callable[[LanguagePack], None]
# The ``register`` argument of cce_register_embedders: ``register(name, factory)``.
RegisterEmbedder = Callable[[str, Callable[[], Embedder]], None]
# The ``register`` argument of cce_register_document_chunkers: ``register(chunker)``.
RegisterDocumentChunker = Callable[[DocumentChunker], None]


# What a pack's binding reader reports (the ``cce_symbol_binding_reader`` hook): facts about names the
# tags query cannot capture. The engine puts each one in the innermost definition around its offset.
ANNOTATION_HINT = "annotation"  # `name: Type` at offset (of the name): ``name`` is declared a ``value``
LOCAL_NAME_HINT = "local"  # ``name`` is a local (a parameter, an assigned name) of the function around offset
RESULT_TYPE_HINT = "result-type"  # the function around offset declares it returns a ``value``
RESULT_VARIABLE_HINT = "result-variable"  # the function around offset returns its variable ``name``
ATTRIBUTE_HINT = "attribute"  # `self.x = y` at offset: attribute ``name`` ("self.x") gets variable ``value``'s value
BINDING_HINT_KINDS = (ANNOTATION_HINT, LOCAL_NAME_HINT, RESULT_TYPE_HINT, RESULT_VARIABLE_HINT, ATTRIBUTE_HINT)


@dataclass(frozen=True, slots=True)
class BindingHint:
    """One fact a language pack reads from a file's text: see :data:`BINDING_HINT_KINDS` for ``kind``.

    ``offset`` is a byte offset into the (redacted) UTF-8 text the symbols come from; ``name`` and
    ``value`` are plain identifiers (a type's last name, not ``a.b.Type``).
    """

    kind: str
    offset: int
    name: str = ""
    value: str = ""


# What cce_symbol_binding_reader returns: (file bytes, definition spans) -> binding hints.
BindingReader = Callable[[bytes, Sequence[tuple[int, int]]], list[BindingHint]]


class CceHookSpecs:
    """The hook specifications: a plugin implements a hook with an ``@hookimpl`` function of the same name.

    Every hook's docstring has the same sections: *Parameters*, *Returns*,
    *Called* (when the engine calls it), *Results* (whether every
    implementation is called or the first answer wins), *Order* and *Errors*
    (what the engine does when an implementation raises), then an example and
    the cce-core release that added the hook. An implementation's parameters
    are matched to the hook's by name, and it may take fewer than the hook
    offers.

    There are two kinds of hook. *Collected* hooks (the three
    ``cce_register_*``, each implementation with its own ``register``, and
    ``cce_file_conventions``, whose answers are pooled) call every
    implementation. *First-result* hooks (``cce_extract_imports``,
    ``cce_tags_query``, ``cce_resolve_import``, ``cce_render_compact``) ask the implementations in turn and stop at the
    first answer that is not ``None``.

    Both kinds call their implementations in one order, pluggy's own:

    * implementations marked ``@hookimpl(tryfirst=True)`` first, then
      unmarked ones, then those marked ``@hookimpl(trylast=True)``;
    * within each of those three groups, plugins in the host's order: the
      core's built-in plugins (the ``hash`` embedder), then the installed
      entry points sorted by entry-point name, then plugins handed to the
      host directly (as ``validate_plugin`` and ``chunk_with`` do), in the
      order given.

    pluggy calls the plugin registered last first, so the host registers
    plugins in the reverse of that order; it never reorders calls itself. A
    marker is how a plugin claims a place whatever its name: an override
    marks itself ``tryfirst`` to come before the pack it overrides, a pack's
    own renderer is ``trylast``, and the built-in ``hash`` embedder registers
    ``tryfirst`` so that no plugin can take its name. Among collected hooks
    the order settles clashes: the first to register a name or an extension
    keeps it.
    """

    @hookspec
    def cce_register_packs(self, register: RegisterPack) -> None:
        """Declare the language packs this plugin ships: call ``register(pack)`` once per pack.

        Parameters:
            register: ``register(pack: LanguagePack) -> None``. It runs
                validation layer 1 (see :class:`LanguagePack`) against the
                packs registered before: a pack that passes is added, one that
                fails is left out and its problems are recorded. It raises
                nothing either way. The engine stamps each pack with the
                distribution of the plugin that registered it.

        Returns:
            Nothing; a return value is ignored.

        Called:
            At most once per plugin host, the first time the host's packs are
            needed (building the host only imports the plugins): by every
            command that indexes, serves or lists — ``cce index``, ``cce
            init``, ``cce mcp``, ``cce bench``, ``cce conformance``, ``cce
            packs`` — and by the test helpers ``validate_plugin``,
            ``chunk_with`` and ``render_with`` of ``cce_core.api``. A one-shot
            ``cce search`` usually loads only the plugin of its store's
            embedder, so other plugins' implementations are not called.
            Register and do nothing else: no grammar loading, no I/O.

        Results:
            Collected: every implementation is called, each with its own
            ``register``.

        Order:
            The common order (see :class:`CceHookSpecs`). It settles clashes:
            when two packs claim the same name or extension, the pack
            registered first keeps it — among unmarked plugins, the one whose
            entry-point name sorts first — and the other is rejected, with a
            problem naming both packs and distributions.

        Errors:
            An exception is caught and becomes a start-up problem naming the
            plugin and its distribution (``plugin "x" from distribution
            "cce-pack-x" failed while registering: cce_register_packs raised
            <type>: <message>``); packs it registered before raising stay
            registered. Like a plugin that
            fails to import, it makes the commands that index refuse to run
            with that line, ``cce packs`` list it as a warning, ``cce packs
            --validate`` and ``validate_plugin`` fail. A pack rejected by layer 1 is not
            an exception: ``cce packs`` warns, ``cce packs --validate`` fails,
            and the commands that index or search refuse to run, naming the
            pack and the fix. Keep the hook trivial.

        Example::

            @hookimpl
            def cce_register_packs(register):
                register(PACK)

        Since: 0.1.0
        """

    @hookspec(firstresult=True)
    def cce_extract_imports(self, language: str, root: Node, source: bytes) -> list[str] | None:
        """Replace a pack's import extraction: return the modules a file imports, or ``None`` to leave it to the pack.

        Parameters:
            language: the ``name`` of the pack that claims the file (by its
                extension). Every implementation is asked about every
                language: return ``None`` for the ones that are not yours.
            root: the root ``tree_sitter.Node`` of the whole file, parsed with
                that pack's grammar.
            source: the file's text as UTF-8 bytes after secret redaction
                (skipped with ``--allow-secrets``): the bytes the chunks are
                cut from, which ``root``'s byte offsets index.

        Returns:
            The module names the file imports, a ``list`` of ``str``, each
            once, in first-seen order; they become the file's import-graph
            edges (see ``LanguagePack.module_suffixes`` for how a name finds
            its file). ``[]`` is an answer — the file imports nothing — while
            ``None`` leaves the file to the next implementation.

        Called:
            At index time, once for every file a pack claims that is chunked
            afresh (new or changed since the previous store; an unchanged file
            keeps the imports stored with it), after its chunks are cut. A
            large tree is chunked in forked worker processes, so an
            implementation must not rely on state shared between calls.
            Never for a file no pack claims, and never by validation layer 3,
            which judges a pack on its own rule.

        Results:
            First result: the implementations are asked in turn and the first
            non-``None`` answer is the file's imports; the rest are not asked.
            When none answers, the pack's own rule runs:
            ``imports_from_nodes`` on the import nodes the chunker already
            captured, else ``extract_imports(root, source)``.

        Order:
            The common order (see :class:`CceHookSpecs`): between two
            unmarked implementations, the one whose entry-point name sorts
            first is asked first. An override marks itself
            ``@hookimpl(tryfirst=True)`` so the outcome does not depend on
            names.

        Errors:
            An exception from an implementation is swallowed and the pack's
            own rule answers instead, as if every implementation had returned
            ``None``. An exception from the pack's own rule leaves the file
            with no imports. Either way its chunks are stored as usual,
            indexing continues, and nothing is printed, so test an override
            on real files. Installing or removing any plugin makes the next
            ``cce index`` chunk every file again (the store records every
            plugin distribution and version).

        Example::

            @hookimpl(tryfirst=True)
            def cce_extract_imports(language, root, source):
                if language != "lua":
                    return None  # not ours: the next implementation, or the pack, answers
                return [...]

        Since: 0.1.0
        """

    @hookspec(firstresult=True)
    def cce_tags_query(self, language: str, shipped: str | None) -> str | None:
        """Supply a language's tags query — the tree-sitter query that finds its symbols — or ``None`` to pass.

        A tags query is the format tree-sitter's own ``tags`` command reads:
        each pattern captures a definition node as ``@definition.<kind>``
        (``function``, ``method``, ``class``, ``interface``, ``module``,
        ``constant``, …) or a use as ``@reference.<kind>``, and its name as
        ``@name``. The engine reads ``@reference.call`` as a call,
        ``@reference.call.self`` as a call through the instance itself
        (``self.save()``: the enclosing class's method comes first) and
        ``@reference.import`` as an import (an ``import`` statement naming
        the symbol, with the specifier as ``@module`` in the same pattern
        when it has one); every other ``@reference.*`` is a plain reference.
        A name written right after ``.`` or ``->`` is read as a member of
        whatever the receiver is. ``@receiver`` in a definition's pattern
        names the type a method is declared for outside the type's body (Go's
        ``func (s *Server) Start()``: qualified name ``Server.Start``). When several patterns capture one name,
        a definition keeps the widest node (then ``method`` over
        ``function``) and a use the strongest reading (self-call, call,
        import, reference).
        One more capture is the engine's own: ``@module`` marks a module
        specifier (``"./util"``, ``flask.app``, quotes are stripped), which
        :meth:`cce_resolve_import` turns into a file for name resolution.
        Other captures (``@doc``, ``@ignore``) are ignored, and text
        predicates (``#eq?``, ``#match?``, ``#not-eq?``) are honoured.

        Parameters:
            language: the ``name`` of a registered pack. Every
                implementation is asked about every language: return
                ``None`` for the ones that are not yours.
            shipped: the ``queries/tags.scm`` the pack's grammar distribution
                (``LanguagePack.grammar_distribution``) ships in its wheel,
                or ``None`` when it ships none.

        Returns:
            The whole query as a ``str``: ``shipped`` itself, ``shipped``
            followed by patterns of your own (to *extend* it), or a query of
            your own (to *replace* it). ``""`` switches symbols off for the
            language; ``None`` leaves the language to the next
            implementation.

        Called:
            Once per pack per process, when the first file of the language is
            chunked for an index (before any worker process is forked), and
            by ``cce packs``, ``cce packs --validate`` and the pack self-test.
            The query then runs over the very parse tree the chunks are cut
            from, so symbols cost no second parse. Installing or removing any
            plugin makes the next ``cce index`` chunk every file again.

        Results:
            First result: the first non-``None`` answer is the query. When
            none answers, ``shipped`` is used; when that is ``None`` too, the
            language has no symbols (its files are still chunked and
            searched as before).

        Order:
            The common order (see :class:`CceHookSpecs`). A pack answers for
            its own language unmarked; an override marks itself
            ``@hookimpl(tryfirst=True)`` to be asked first.

        Errors:
            An exception from an implementation is swallowed and ``shipped``
            is used. A query that does not compile against the pack's grammar
            leaves the language without symbols; ``cce packs --validate``
            reports it with the compiler's message and fails.

        Example::

            @hookimpl
            def cce_tags_query(language, shipped):
                if language != "lua":
                    return None
                return (shipped or "") + '(function_call name: (identifier) @name) @reference.call'

        Since: 0.2.1
        """

    @hookspec(firstresult=True)
    def cce_symbol_binding_reader(self, language: str) -> BindingReader | None:
        """Supply a function that reads a language's bindings from a file's text, or ``None`` to pass.

        A tags query finds definitions and uses; telling that ``app.route``
        means ``Flask.route`` also needs to know that ``app`` is a ``Flask``.
        Those facts are written in each language's own syntax (``app:
        Flask``, ``def make() -> Flask:``, ``self.app = app``), so the engine
        asks the pack for them. The reader reports them as
        :class:`~cce_core.api.BindingHint` rows, and the engine puts each one
        in the innermost definition around its offset:

        * ``ANNOTATION_HINT`` — ``name`` is declared a ``value`` (a type's
          last name) at ``offset``, the start of ``name``. Kept when some
          member use in the file reads ``name``, or when it is at module
          level (another file may import it).
        * ``LOCAL_NAME_HINT`` — ``name`` is a local of the function around
          ``offset`` (a parameter, an assigned or loop variable): a bare use
          of it there is never a definition elsewhere.
        * ``RESULT_TYPE_HINT`` — the function around ``offset`` declares it
          returns a ``value``.
        * ``RESULT_VARIABLE_HINT`` — the function around ``offset`` returns
          its variable ``name`` (``return app``).
        * ``ATTRIBUTE_HINT`` — attribute ``name`` (``self.app``) is given
          the value of variable ``value`` in the function around ``offset``.

        Parameters:
            language: the ``name`` of a registered pack. Every
                implementation is asked about every language: return
                ``None`` for the ones that are not yours.

        Returns:
            A callable ``reader(source, spans) -> list[BindingHint]``:
            ``source`` is the file's (redacted) UTF-8 bytes, which the
            offsets index; ``spans`` are the ``(start, end)`` byte offsets of
            the definitions the tags query found, sorted by start (a reader
            may look at a definition's header there). ``None`` leaves the
            language to the next implementation.

        Called:
            Once per pack per process, next to :meth:`cce_tags_query`; the
            reader is then called for every file of the language an index
            chunks, in the chunking processes, so keep it fast and pure.

        Results:
            First result: the first non-``None`` answer is the reader. When
            none answers, the language's symbols carry only what the tags
            query and the receivers written before ``.`` say.

        Order:
            The common order (see :class:`CceHookSpecs`). A pack answers for
            its own language unmarked; an override marks itself
            ``@hookimpl(tryfirst=True)`` to be asked first (its reader may
            call the pack's own and add to its hints).

        Errors:
            An exception from the hook leaves the language without a reader;
            one from the reader leaves that file without hints. Neither fails
            an index.

        Example::

            @hookimpl
            def cce_symbol_binding_reader(language):
                if language != "lua":
                    return None
                return read_lua_bindings  # (source, spans) -> [BindingHint(...), ...]

        Since: 0.2.1
        """

    @hookspec(firstresult=True)
    def cce_resolve_import(self, language: str, specifier: str, importer: str) -> list[str] | None:
        """Turn a module specifier into the paths it may name, most likely first, or ``None`` to pass.

        Symbol navigation resolves a call in three steps: a definition in the
        same file, then one in a file the caller's file imports, then any
        definition of that name. The middle step asks this hook which files
        an import names.

        Parameters:
            language: the ``name`` of the pack that claims the importing file.
                Every implementation is asked about every language: return
                ``None`` for the ones that are not yours.
            specifier: a module specifier the tags query captured as
                ``@module`` in that file (``flask.app``, ``.helpers``,
                ``"./util"`` with its quotes stripped).
            importer: the importing file's path, relative to the indexed
                root with ``/`` separators, so a relative specifier can be
                resolved against its directory.

        Returns:
            Candidate paths, a ``list`` of ``str``, relative to the root with
            ``/`` separators, best first (``["src/a/util.ts",
            "src/a/util/index.ts"]``). The engine takes the first candidate
            that is an indexed file, then the first indexed file whose path
            ends with ``/`` plus a candidate (so ``flask/app.py`` finds
            ``src/flask/app.py``). ``[]`` means the specifier names no file of
            the tree (a standard-library or third-party module); ``None``
            leaves it to the next implementation.

        Called:
            When symbols are queried (never at index time), once per distinct
            (language, specifier, importer) in a process. Keep it pure: no
            I/O, the indexed files are the engine's to check.

        Results:
            First result: the first non-``None`` answer is used. When none
            answers, the import graph's rule applies: the first indexed file
            whose stem equals the specifier, else the first path ending in
            the specifier plus a suffix some pack declares
            (``LanguagePack.module_suffixes``).

        Order:
            The common order (see :class:`CceHookSpecs`). A pack answers for
            its own language unmarked; an override marks itself
            ``@hookimpl(tryfirst=True)``.

        Errors:
            An exception is swallowed and the import graph's rule applies;
            the resolution is then only less precise (a call falls back to a
            global match, reported with that confidence).

        Example::

            @hookimpl
            def cce_resolve_import(language, specifier, importer):
                if language != "lua":
                    return None
                return [specifier.replace(".", "/") + ".lua"]

        Since: 0.2.1
        """

    @hookspec(firstresult=True)
    def cce_render_compact(self, language: str, chunk: CompactChunk, node: Node | None, level: str) -> str | None:
        """Render the reduced view of a stored chunk, or return ``None`` to leave it to the next renderer.

        Parameters:
            language: the ``name`` of the pack that claims the chunk's path
                (by its extension) in the serving process. Every
                implementation is asked about every language: return ``None``
                for the ones that are not yours.
            chunk: a :class:`CompactChunk`: ``file_path``, ``content``,
                ``source`` (``content`` as UTF-8 bytes, which ``node``
                indexes) and ``pack`` (the :class:`LanguagePack` whose grammar
                parsed it).
            node: the *definition*: ``content`` is re-parsed on its own with
                the pack's grammar, and this is the first named node in
                pre-order whose kind is in the pack's ``function_types`` or
                ``class_types``. ``None`` when there is none (some grammars
                parse a method only inside its class).
            level: ``"signature"`` or ``"compact"``; ``"full"`` never reaches
                a renderer.

        Returns:
            The view, a ``str``, or ``None`` to pass. Return nothing else: any
            other value stops the search for an answer and is discarded, as if
            no renderer had answered.

        Called:
            When the MCP server serves results: ``context_search`` at the
            level the call asks for (else the ``retrieval.detail`` setting,
            ``compact`` by default) and ``related_context`` (always
            ``compact``); once per path, level and text in a session, since
            views are memoised. Only for a path a pack claims whose text
            re-parses. Never at index time, so a new renderer takes effect
            without re-indexing; ``cce search`` on the command line prints
            first lines and never calls it.

        Results:
            First result: the first non-``None`` answer is the view. When none
            answers, the neutral rule applies: ``render_definition(chunk,
            node, level)`` (``cce_core.api``), driven by the pack's declared
            kinds, or when ``node`` is ``None`` the first-line rule (the first
            non-blank line, plus ``… (+N lines)`` at ``compact``).

        Order:
            The common order (see :class:`CceHookSpecs`). A pack's own
            renderer made with ``structural_renderer`` is marked ``trylast``,
            so every override is asked before it whatever the entry-point
            names; a pack that writes its own renderer (a
            :class:`CompactRenderer`) should mark it
            ``@hookimpl(trylast=True)`` too, and an override
            ``@hookimpl(tryfirst=True)`` to come before other overrides.

        Errors:
            An exception is swallowed: no later implementation is asked and
            the neutral rule applies (``render_definition`` without
            ``doc_wrappers``, or the first-line rule). Serving continues and
            nothing is printed.

        Example::

            @hookimpl(tryfirst=True)
            def cce_render_compact(language, chunk, node, level):
                if language != "lua" or node is None:
                    return None
                return render_definition(chunk, node, "signature")  # every definition as its signature

        Since: 0.1.0
        """

    @hookspec
    def cce_register_embedders(self, register: RegisterEmbedder) -> None:
        """Declare the embedders this plugin ships: call ``register(name, factory)`` once per embedder.

        Parameters:
            register: ``register(name: str, factory: Callable[[], Embedder])
                -> None``. ``name`` is what users select (``cce index
                --embedder NAME``) and what a store records; it must equal the
                ``name`` of what ``factory`` builds. ``factory`` takes no
                argument and returns a new :class:`Embedder` instance each time
                the engine needs one; usually it is the subclass itself. The
                first registration of a name keeps it; a later one with the
                same name is refused and recorded as a start-up problem (see
                *Order*).

        Returns:
            Nothing; a return value is ignored.

        Called:
            At most once per plugin host, the first time the host's embedders
            are needed: by ``cce index`` and ``cce init`` (to build the chosen
            embedder), by a search (to load the embedder that built the
            store) and by ``cce packs`` (which builds every embedder once to
            list it). A one-shot ``cce search`` loads only the entry point
            named like the store's embedder, so name an embedder plugin's entry
            point after the embedder it registers.

        Results:
            Collected: every implementation is called, each with its own
            ``register``.

        Order:
            The common order (see :class:`CceHookSpecs`). The first plugin to
            register a name keeps it — among unmarked plugins, the one whose
            entry-point name sorts first — and the second registration is a
            start-up problem naming both distributions. The built-in ``hash``
            embedder registers ``tryfirst`` and before every entry point, so
            it always keeps ``hash``.

        Errors:
            An exception is caught and reported like one from
            :meth:`cce_register_packs`: a start-up problem naming the plugin.
            A factory that raises stops ``cce index``
            or a search the same way, and ``cce packs`` lists the embedder as
            ``cannot be built``. A factory whose product does not subclass
            :class:`Embedder` is refused with an error naming its class.

        Example::

            @hookimpl
            def cce_register_embedders(register):
                register("letters", LetterEmbedder)

        Since: 0.1.0
        """

    @hookspec
    def cce_register_document_chunkers(self, register: RegisterDocumentChunker) -> None:
        """Declare the document chunkers this plugin ships: call ``register(chunker)`` once per chunker.

        Parameters:
            register: ``register(chunker: DocumentChunker) -> None``.
                ``chunker`` is an *instance* of a :class:`DocumentChunker`
                subclass. It is checked against the chunkers registered
                before (the type, ``name``, ``formats``, ``extensions`` and a
                callable ``chunk_document``): one that passes is added, one
                that fails is left out and its problems are recorded. It raises
                nothing either way. The engine stamps each chunker's
                ``distribution`` with the distribution of the plugin that
                registered it.

        Returns:
            Nothing; a return value is ignored.

        Called:
            At most once per plugin host, the first time the host's document
            chunkers are needed: by knowledge ingest (``cce knowledge
            index``), by ``cce packs`` and ``cce packs --validate``, by the
            start-up check of the commands that index or search, and by
            ``validate_plugin``. Never to cut a file of a code index: there a
            file is cut by the language pack claiming its extension, or kept
            as one ``module`` chunk. Register and do nothing else: no grammar
            loading, no I/O.

        Results:
            Collected: every implementation is called, each with its own
            ``register``.

        Order:
            The common order (see :class:`CceHookSpecs`). When two chunkers
            claim the same name, format or extension, the one registered
            first keeps it and the other is rejected with a problem naming
            both.

        Errors:
            An exception is caught and reported like one from
            :meth:`cce_register_packs`: a start-up problem naming the plugin
            and its distribution; chunkers it registered before raising stay
            registered. A rejected chunker is a start-up problem too: ``cce
            packs`` warns, ``cce packs --validate`` and ``validate_plugin``
            fail, and the commands that index or search refuse to run with
            that line. An exception from :meth:`DocumentChunker.chunk_document`
            is the caller's to report (knowledge ingest stops and writes
            nothing).

        Example::

            @hookimpl
            def cce_register_document_chunkers(register):
                register(LinesChunker())

        Since: 0.2.0
        """

    @hookspec
    def cce_file_conventions(self) -> FileConventions | None:
        """Declare the test-file and generated-file conventions of your language, for the file roles of the ranking.

        Parameters:
            The hook takes none: its answer is the same for every file, so
            the engine asks once and matches the patterns itself.

        Returns:
            A :class:`FileConventions` (its ``tests`` and ``generated``
            path patterns), or ``None`` to declare nothing. A pack usually
            returns one constant.

        Called:
            At most once per plugin host, the first time the default ranking
            needs the role of a file (``cce search``, ``context_search``,
            ``cce relevance`` and ``cce bench`` under the default profile),
            and by ``cce packs --validate``, ``validate_plugin`` and
            ``pack_self_test``. A one-shot ``cce search`` loads only the
            plugin of its store's embedder, so the pooled answer is
            remembered between runs beside the entry-point cache and asked
            again whenever a plugin is installed, upgraded or removed, or a
            plugin's module file changes. Never by the ``family`` profile,
            whose ranking does not read file roles. Return a constant: no
            I/O, no grammar loading.

        Results:
            Collected: every implementation is called and the patterns of
            all answers are pooled. A file is ``generated`` when any
            ``generated`` pattern matches it and a ``test`` when any
            ``tests`` pattern does, on top of the engine's general rules
            (see :class:`FileConventions`).

        Order:
            The common order (see :class:`CceHookSpecs`). Pooling makes the
            order irrelevant: no plugin can take a convention away.

        Errors:
            An exception, or an answer that is not a :class:`FileConventions`
            of valid patterns, leaves out that plugin's conventions and
            becomes a problem naming the plugin: ``cce packs`` warns, ``cce
            packs --validate`` and ``validate_plugin`` fail. Searching goes on
            with the other plugins' conventions.

        Example::

            @hookimpl
            def cce_file_conventions():
                return FileConventions(tests=("*_spec.lua", "spec/"), generated=("*.gen.lua",))

        Since: 0.2.1
        """
