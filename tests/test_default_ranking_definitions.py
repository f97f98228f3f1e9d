"""The default profile's definition stage on the shapes that used to defeat it (issue #20).

A bare-name lookup must put the defining chunk first even when the name is
not in the chunk (an arrow function bound by ``export const name =`` on the
line above or before it), when a prototype or interface repeats the name,
when a name carries a ``!`` the tokens drop, or when a file merely lists the
name (``export { name, ... }``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cce_core.indexing.indexer import build_index
from cce_core.plugins.host import default_host
from cce_core.retrieval.default_ranking import DefaultRanker
from cce_core.retrieval.definitions import (
    FORWARD_SHARE,
    declared_written,
    leaves_open,
    line_declaration_weight,
    opens_definition,
)
from cce_core.retrieval.query_analysis import analyse
from cce_core.retrieval.searcher import Searcher


@pytest.mark.parametrize(("header", "written"), [
    ("def route!(base = settings, pass_block = nil)", "route!"),
    ("def empty?", "empty?"),
    ("def route(verb, path)", "route"),
    ("fn ready(self) -> bool { self.a != self.b }", "ready"),
    ("(inst, def) => {", None),
])
def test_declared_written_keeps_a_bang_or_question_mark(header: str, written: str | None) -> None:
    assert declared_written(header) == written


@pytest.mark.parametrize(("line", "name", "weight"), [
    ("  safeParse,", "safeParse", 0.0),  # a list item, e.g. in a re-export
    ("const char* jvp_utf8_next(const char* in, const char* end, int* cp);", "jvp_utf8_next", FORWARD_SHARE),
    ("export const safeParse: <T extends core.$ZodType>(", "safeParse", 1.0),
    ("def make_response(*args):", "make_response", 1.0),
    ("MAX_DEPTH = 12", "MAX_DEPTH", 1.0),
])
def test_a_module_line_declares_only_in_a_declaration_shape(line: str, name: str, weight: float) -> None:
    assert line_declaration_weight(line, name) == weight


@pytest.mark.parametrize(("line", "name", "expected"), [
    ("export const create = (<T>(createState: StateCreator<T> | undefined) =>", "create", True),
    ("export const $ZodUnion: core.$constructor<$ZodUnion> =", "$ZodUnion", True),
    ("export const devtools = devtoolsImpl as unknown as Devtools", "devtools", True),
    ("const value = create(1)", "create", False),  # binds ``value``, not ``create``
    ("app = Flask(__name__)", "app", False),  # no declaration word: an assignment, not a definition
])
def test_a_declaration_binds_what_follows_it(line: str, name: str, expected: bool) -> None:
    assert opens_definition(line, name) is expected


def test_only_a_statement_left_open_reaches_the_next_lines() -> None:
    assert leaves_open("export const $ZodUnion: core.$constructor<$ZodUnion> =")
    assert not leaves_open("export const devtools = devtoolsImpl as unknown as Devtools")


def _searcher(root: Path) -> Searcher:
    host = default_host()
    embedder = host.embedder("hash")
    data, _ = build_index(str(root), host, embedder, protect_secrets=True)
    return Searcher(data, embedder, profile="default", source_root=str(root))


def _first(searcher: Searcher, query: str) -> tuple[str, int]:
    results = searcher.search(query, top_k=5)
    assert results, query
    return results[0].chunk.file_path, results[0].chunk.start_line


@pytest.fixture
def ts_repo(tmp_path: Path) -> Path:
    root = tmp_path / "ts"
    (root / "src").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "src" / "react.ts").write_text(
        "import { createStore } from './vanilla'\n\n"
        "const createImpl = <T>(createState: T) => {\n  const api = createStore(createState)\n  return api\n}\n\n"
        "export const create = (<T>(createState: T | undefined) =>\n"
        "  createState ? createImpl(createState) : createImpl) as unknown\n")
    (root / "src" / "union.ts").write_text(
        "export const $ZodUnion: core.$constructor<$ZodUnion> =\n  /*@__PURE__*/\n"
        "  core.$constructor(\"$ZodUnion\", (inst, def) => {\n    inst.options = def.options\n"
        "    inst.check = (payload) => def.options.some((option) => option.run(payload).ok)\n  })\n")
    (root / "docs" / "create.md").write_text(
        "# create\n\nCall create to create a store: `const useStore = create((set) => ({}))`. create returns a "
        "hook; create is the entry point.\n")
    return root


def test_an_arrow_function_is_found_by_the_name_bound_to_it(ts_repo: Path) -> None:
    assert _first(_searcher(ts_repo), "create") == ("src/react.ts", 8)


def test_the_implementation_leads_the_interface_of_the_same_name(tmp_path: Path) -> None:
    root = tmp_path / "core"
    (root / "src").mkdir(parents=True)
    (root / "src" / "core.ts").write_text(
        "export interface $constructor<T> {\n  new (def: T): T\n  init(inst: T, def: T): asserts inst is T\n"
        "  readonly name: string\n  readonly traits: Set<string>\n  readonly parent: unknown\n}\n\n"
        "export function $constructor<T>(name: string, initializer: (inst: T, def: T) => void) {\n"
        "  function init(inst: T, def: T) {\n    Object.defineProperty(inst, '_zod', { value: {} })\n"
        "    initializer(inst, def)\n  }\n  class Definition {}\n  function _(def: T) {\n"
        "    const inst = new Definition()\n    init(inst as T, def)\n    return inst\n  }\n"
        "  Object.defineProperty(_, 'name', { value: name })\n  return _\n}\n")
    (root / "src" / "schemas.ts").write_text("".join(
        f"export const $Zod{kind} = core.$constructor(\"$Zod{kind}\", (inst, def) => {{\n"
        f"  core.$constructor.init(inst, def)\n}})\n\n" for kind in ("String", "Number", "Object", "Array")))
    assert _first(_searcher(root), "$constructor") == ("src/core.ts", 9)


def test_a_value_declared_two_lines_above_its_chunk_is_found(ts_repo: Path) -> None:
    assert _first(_searcher(ts_repo), "$ZodUnion") == ("src/union.ts", 3)


def test_without_the_source_tree_the_declaration_before_a_chunk_is_not_read(ts_repo: Path) -> None:
    """The context is read from the indexed tree; with none, the lookup falls back (no error)."""
    host = default_host()
    embedder = host.embedder("hash")
    data, _ = build_index(str(ts_repo), host, embedder, protect_secrets=True)
    ranker = DefaultRanker(data, source_root=None)
    assert ranker._context_declarers([0], "create") == []


def test_a_bang_in_the_query_picks_the_definition_that_has_it(tmp_path: Path) -> None:
    root = tmp_path / "rb"
    (root / "lib").mkdir(parents=True)
    (root / "lib" / "multi_route.rb").write_text(
        "module MultiRoute\n  def route(*args, &block)\n    super(*args, &block)\n  end\nend\n")
    (root / "lib" / "base.rb").write_text(
        "class Base\n  def route!(base = settings, pass_block = nil)\n    routes = base.routes\n"
        "    routes.each { |r| process_route(r) }\n    route_missing\n  end\n\n"
        "  def route_missing\n    raise NotFound\n  end\nend\n")
    searcher = _searcher(root)
    assert _first(searcher, "route!") == ("lib/base.rb", 2)
    assert _first(searcher, "route") == ("lib/multi_route.rb", 2)


def test_a_prototype_does_not_outrank_the_function_it_declares(tmp_path: Path) -> None:
    root = tmp_path / "c"
    (root / "src").mkdir(parents=True)
    (root / "src" / "unicode.h").write_text(
        "#ifndef UNICODE_H\n#define UNICODE_H\n\n"
        "const char* utf8_next(const char* in, const char* end, int* codepoint);\n\n#endif\n")
    (root / "src" / "unicode.c").write_text(
        "#include \"unicode.h\"\n\n"
        "const char* utf8_next(const char* in, const char* end, int* codepoint) {\n"
        "  int length = utf8_length(*in);\n  if (in + length > end) {\n    *codepoint = -1;\n"
        "    return end;\n  }\n  *codepoint = decode(in, length);\n  return in + length;\n}\n")
    assert _first(_searcher(root), "utf8_next") == ("src/unicode.c", 3)


def test_a_re_export_list_is_not_a_definition(tmp_path: Path) -> None:
    root = tmp_path / "reexport"
    (root / "src").mkdir(parents=True)
    (root / "src" / "index.ts").write_text("export {\n  parse,\n  safeParse,\n  encode,\n} from './core'\n")
    (root / "src" / "core.ts").write_text(
        "export function safeParse(schema: Schema, data: unknown) {\n  const result = schema.run(data)\n"
        "  return result.ok ? { success: true, data: result.value } : { success: false, error: result.error }\n}\n")
    assert _first(_searcher(root), "safeParse") == ("src/core.ts", 1)


def test_the_file_view_length_cap_is_the_same_in_plain_and_vectorised_scoring(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One file far longer than the rest exercises the capped length in both forms of the file view."""
    root = tmp_path / "long"
    (root / "src").mkdir(parents=True)
    (root / "src" / "base.py").write_text("".join(
        f"def handler_{i}(session, cookie):\n    return session.get(cookie, {i})\n\n\n" for i in range(300)))
    for name in ("cookies", "sessions", "misc"):
        (root / "src" / f"{name}.py").write_text(f"def {name}(session):\n    return session\n")
    host = default_host()
    data, _ = build_index(str(root), host, host.embedder("hash"), protect_secrets=True)
    ranker = DefaultRanker(data)
    long_text = "the handler reads the session cookie and " * 8  # 30+ tokens: plain normalisation
    for query in ("session and cookies", long_text):
        vectorised = ranker._bm25_vectorised(analyse(query))
        monkeypatch.delitem(sys.modules, "numpy")
        plain = ranker._bm25(analyse(query))
        monkeypatch.undo()
        assert plain == vectorised and plain[1]
    assert analyse(long_text).is_long


def test_an_answer_no_query_word_supports_is_flagged_low_confidence(tmp_path: Path) -> None:
    """With no lexical evidence at all the vector alone ranks; its best match is not stretched to full weight."""
    from cce_core.observability.savings import LOW_CONFIDENCE_THRESHOLD

    root = tmp_path / "plain"
    (root / "src").mkdir(parents=True)
    (root / "src" / "sessions.py").write_text(
        "def sign_cookie(value, secret):\n    return hashlib.sha256((secret + value).encode()).hexdigest()\n")
    (root / "src" / "routing.py").write_text("def match_route(path, rules):\n    return rules.get(path)\n")
    searcher = _searcher(root)
    unrelated = searcher.search("routes matcher", top_k=5)  # near ``match_route`` in the vector, no shared token
    assert unrelated and unrelated[0].score < LOW_CONFIDENCE_THRESHOLD
    assert searcher.search("sign_cookie", top_k=5)[0].score >= LOW_CONFIDENCE_THRESHOLD


def test_an_answer_does_not_repeat_the_same_short_text(tmp_path: Path) -> None:
    root = tmp_path / "dup"
    (root / "src").mkdir(parents=True)
    for name in ("compile", "execute", "dump", "free"):
        (root / "src" / f"{name}.c").write_text(
            f"#include \"bytecode.h\"\n\nint {name}_all(struct bytecode* bc, int flags) {{\n"
            f"  int n = bc->count;\n  for (int i = 0; i < n; i++) {{\n    {name}_one(bc, i, flags);\n  }}\n"
            f"  return n;\n}}\n")
    results = _searcher(root).search("bytecode", top_k=10)
    short = [" ".join(r.chunk.content.split()) for r in results if len(r.chunk.content.split()) < 6]
    assert len(short) == len(set(short))
    assert len({r.chunk.file_path for r in results}) == 4


def test_a_bare_name_keeps_its_mark_but_a_question_mark_ends_a_question() -> None:
    assert [i.written_name for i in analyse("route!").identifiers] == ["route!"]
    assert [i.written_name for i in analyse("empty?").identifiers] == ["empty?"]
    assert [i.name for i in analyse("route!").identifiers] == ["route"]
    assert all(not i.written_name.endswith("?") for i in analyse("where is make_response?").identifiers)
