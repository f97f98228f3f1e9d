"""Cut one file into chunks with its pack's grammar, or into one module chunk.

For a file a pack claims, every named syntax node whose kind the pack lists as
a function or class kind becomes a chunk — nested ones too, in pre-order. A
file no pack claims, or one that yields no such node, becomes a single
``module`` chunk whose ``end_line`` is the number of newline bytes plus one.
A pack that can read its imports from nodes (``imports_from_nodes``) gets them
from the same query pass as the chunks. The chunker knows no language: it only
reads the pack's declarations.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import chunk_id, estimate_tokens_bytes
from cce_core.hookspecs import LanguagePack
from cce_core.indexing.chunk import Chunk
from cce_core.plugins.host import PluginHost
from cce_core.symbols.extract import SymbolExtractor, symbol_extractor

MODULE = "module"
_NEWLINE = re.compile(rb"\n")
PLAINTEXT = "plaintext"


@dataclass(slots=True)
class FileChunks:
    chunks: list[Chunk]
    imports: list[str]
    # The file's symbols, encoded (cce_core.symbols.model); None when they were not extracted.
    symbols: bytes | None = None


def module_chunk(file_path: str, content: str, language: str = PLAINTEXT) -> Chunk:
    raw = content.encode("utf-8")
    end_line = raw.count(b"\n") + 1
    return Chunk(
        chunk_id=chunk_id(file_path, 1, end_line, raw),
        file_path=file_path,
        start_line=1,
        end_line=end_line,
        chunk_type=MODULE,
        kind=MODULE,
        language=language,
        content=content,
        token_count=estimate_tokens_bytes(len(raw)),
    )


def _pattern(kinds: list[str], capture: str) -> str:
    return "[" + " ".join(f"({k})" for k in kinds) + "] @" + capture


def imports_by_node_kind(grammar: Callable[[], Language], kinds: Sequence[str],
                         from_nodes: Callable[[list[Node], bytes], list[str]]) -> Callable[[Node, bytes], list[str]]:
    """An ``extract_imports`` made from a pack's ``imports_from_nodes``.

    It captures every node of ``kinds`` (the pack's ``import_node_types``) on a
    bare tree, in start-byte order, and hands them over, so a pack that reads
    its imports from nodes needs no import query of its own. The query is
    compiled on first use; a file the query cannot handle has no imports.
    """
    return imports_by_pattern(grammar, _pattern(list(dict.fromkeys(kinds)), "import"), from_nodes)


def imports_by_pattern(grammar: Callable[[], Language], pattern: str,
                       from_nodes: Callable[[list[Node], bytes], list[str]]) -> Callable[[Node, bytes], list[str]]:
    """An ``extract_imports`` made from a pack's ``import_pattern`` and ``imports_from_nodes``.

    It runs ``pattern`` on a bare tree and hands the ``@import`` nodes to
    ``from_nodes`` in start-byte order, as the chunker's one walk does, so the
    two import paths read the same nodes. The query is compiled on first use;
    a file (or a pattern) the query cannot handle has no imports.
    """
    query: Query | None = None

    def extract_imports(root: Node, source: bytes) -> list[str]:
        nonlocal query
        try:
            if query is None:
                query = Query(grammar(), pattern)
            nodes = sorted(QueryCursor(query).captures(root).get("import", []), key=lambda n: n.start_byte)
        except Exception:  # odd input or grammar: no imports rather than a failed file
            return []
        return from_nodes(nodes, source)

    return extract_imports


class _PackParser:
    """A parser plus the queries that find a pack's chunk (and import) nodes.

    When the pack's tags query compiles together with the chunk and import
    patterns (:attr:`shared_patterns`), that one query serves both and the
    chunker's own queries are never used on the indexing path: they are then
    compiled on first use only (tree-sitter query compilation is a visible
    share of a small index).
    """

    def __init__(self, pack: LanguagePack) -> None:
        self.language = pack.grammar()
        self.pack = pack
        self.parser = Parser(self.language)
        self.class_types = frozenset(pack.class_types)
        self.symbols: SymbolExtractor | None = None  # set by the Chunker, which knows the plugin host
        kinds = list(dict.fromkeys((*pack.function_types, *pack.class_types)))
        self.chunk_pattern = _pattern(kinds, "chunk") if kinds else ""
        # When the pack can read its imports from nodes, one query captures both
        # lists: walking the tree costs about as much as the pack's own import
        # query, so this saves that second walk. A kind listed both as a chunk
        # and an import kind is matched by each pattern and lands in both lists.
        # A pack whose import kind is common (a call) narrows it with its own pattern.
        import_kinds = list(dict.fromkeys(pack.import_node_types))
        by_kind = _pattern(import_kinds, "import") if import_kinds else ""
        self.import_pattern = (pack.import_pattern.strip() or by_kind) if pack.imports_from_nodes is not None else ""
        # The patterns above, for the symbol extractor to run in the same walk as the tags query.
        self.shared_patterns = " ".join(p for p in (self.chunk_pattern, self.import_pattern) if p)
        self._query: Query | None = None
        self._combined: Query | None = None
        self._compiled = False

    def compile_own_queries(self) -> None:
        """Compile the chunk and chunk+import queries (raises on a chunk kind the grammar lacks)."""
        if self._compiled:
            return
        self._query = Query(self.language, self.chunk_pattern) if self.chunk_pattern else None
        if self.import_pattern:
            try:
                self._combined = Query(self.language, self.shared_patterns)
            except Exception:  # a bad import kind may cost a file its imports, never its chunks: two passes
                self._combined = None
        self._compiled = True

    @property
    def shares_walk(self) -> bool:
        """Whether the symbol extractor's query also finds the chunk and import nodes."""
        return self.symbols is not None and bool(self.symbols.chunker_patterns)

    @property
    def query(self) -> Query | None:
        self.compile_own_queries()
        return self._query

    @property
    def combined(self) -> Query | None:
        self.compile_own_queries()
        return self._combined


class Chunker:
    """Chunks files using the packs of a :class:`PluginHost`."""

    def __init__(self, host: PluginHost) -> None:
        self.host = host
        self._parsers: dict[int, _PackParser] = {}

    def _parser_for(self, pack: LanguagePack) -> _PackParser:
        parser = self._parsers.get(id(pack))
        if parser is None or parser.pack is not pack:
            try:
                parser = _PackParser(pack)
                parser.symbols = symbol_extractor(self.host, pack, parser.shared_patterns)
                if not parser.shares_walk:
                    parser.compile_own_queries()  # checks the pack's chunk kinds now, not on first use
            except Exception as exc:  # a broken third-party pack: missing grammar, misspelt node kind
                raise CceError(f"[pack:{pack.name}] cannot be used ({type(exc).__name__}: {exc}) — "
                               "run `cce packs --validate` for a diagnosis") from exc
            self._parsers[id(pack)] = parser
        return parser

    def prepare(self, paths: Iterable[str]) -> None:
        """Build the parser and queries of every pack that claims one of ``paths`` now, not on first use."""
        for pack in {id(p): p for p in map(self.host.packs.pack_for, paths) if p is not None}.values():
            self._parser_for(pack)

    def chunk_file(self, file_path: str, content: str) -> FileChunks:
        pack = self.host.packs.pack_for(file_path)
        if pack is None:
            return FileChunks([module_chunk(file_path, content)], [])
        return self.chunk_with_pack(pack, file_path, content)

    def chunk_with_pack(
        self, pack: LanguagePack, file_path: str, content: str, *, use_hooks: bool = True, one_pass: bool = True
    ) -> FileChunks:
        """Chunks and imports of one file. ``one_pass=False`` forces the pack's own
        ``extract_imports`` (a second query) even when the pack offers
        ``imports_from_nodes``; the result must be the same either way."""
        pp = self._parser_for(pack)
        source = content.encode("utf-8")
        tree = pp.parser.parse(source)
        root = tree.root_node
        chunks: list[Chunk] = []
        import_nodes: list[Node] | None = None
        nodes: list[Node] = []
        symbol_matches = None
        newlines: list[int] | None = None
        if use_hooks and one_pass and pp.symbols is not None and pp.shares_walk:
            # One walk finds the chunk and import nodes and the symbols (see cce_core.symbols.extract).
            symbol_matches, shared = pp.symbols.run(root)
            nodes = shared.get("chunk", [])
            if pp.import_pattern:  # the shared query compiled with it, so the import kinds are sound
                import_nodes = sorted(shared.get("import", []), key=lambda n: n.start_byte)
        elif one_pass and pp.combined is not None:
            captured = QueryCursor(pp.combined).captures(root)
            nodes = captured.get("chunk", [])
            # Stable, like the packs' own sort, so equal starts keep capture order.
            import_nodes = sorted(captured.get("import", []), key=lambda n: n.start_byte)
        elif pp.query is not None:
            nodes = QueryCursor(pp.query).captures(root).get("chunk", [])
        if nodes:
            # Pre-order: an enclosing node comes before the nodes it contains.
            spans = sorted(((n.start_byte, n.end_byte, n.type) for n in nodes), key=lambda t: (t[0], -t[1]))
            # Rows come from newline offsets, never from Node.start_point/end_point:
            # tree-sitter 0.26.0's Point objects have a reference-counting bug
            # (py-tree-sitter #472/#466) that crashes the process on large files.
            newlines = [m.start() for m in _NEWLINE.finditer(source)]  # the symbols read them too
            for start, end, kind in spans:
                raw = source[start:end]
                start_line = bisect_left(newlines, start) + 1
                end_line = bisect_left(newlines, end) + 1
                text = raw.decode("utf-8", errors="replace")
                chunks.append(
                    Chunk(
                        chunk_id=chunk_id(file_path, start_line, end_line, raw),
                        file_path=file_path,
                        start_line=start_line,
                        end_line=end_line,
                        chunk_type="class" if kind in pp.class_types else "function",
                        kind=kind,
                        language=pack.name,
                        content=text,
                        token_count=estimate_tokens_bytes(len(raw)),
                    )
                )
        imports = self.host.extract_imports(pack, root, source, use_hooks=use_hooks, import_nodes=import_nodes)
        if not chunks:
            chunks = [module_chunk(file_path, content, pack.name)]
        # Symbols from the same tree (skipped for the self-test's and drift check's hook-free runs).
        symbols = None
        if use_hooks and pp.symbols is not None:
            symbols = pp.symbols.encoded(symbol_matches, source, chunks, newlines) if symbol_matches is not None \
                else pp.symbols.extract(root, source, chunks)
        return FileChunks(chunks, imports, symbols)
