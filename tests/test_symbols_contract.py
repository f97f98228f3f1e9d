"""The symbols half of the plugin contract: the shipped tags.scm as default, cce_tags_query, validation.

A pack's symbols come from its grammar's own ``queries/tags.scm`` unless a
plugin answers ``cce_tags_query``; ``cce packs --validate`` (and so the pack
self-test) compiles the query that indexing would use and runs it on the
pack's sample.
"""

from __future__ import annotations

import cce_pack_python

from cce_core.api import validate_plugin
from cce_core.hookspecs import LanguagePack, hookimpl
from cce_core.indexing.chunker import Chunker
from cce_core.plugins.host import PluginHost, default_host
from cce_core.symbols.checks import EXTENDED, NONE, OWN, SHIPPED, symbol_problems, tags_source
from cce_core.symbols.model import decode_file_symbols
from cce_core.symbols.tags import shipped_tags_query, tags_query_text


def test_every_default_grammar_ships_a_tags_query_the_packs_extend():
    host = default_host()
    for pack in host.packs.packs:
        assert shipped_tags_query(pack.grammar_distribution), f"{pack.grammar_distribution} ships no tags.scm"
        assert tags_source(host, pack) in (EXTENDED, OWN), pack.name
        assert symbol_problems(pack, host) == []


class _Replace:
    @hookimpl(tryfirst=True)
    def cce_tags_query(self, language, shipped):
        if language != "python":
            return None
        assert shipped is not None and "@definition.function" in shipped  # the override sees the shipped one
        return "(class_definition name: (identifier) @name) @definition.class"


class _Off:
    @hookimpl(tryfirst=True)
    def cce_tags_query(self, language, shipped):
        return ""


class _Broken:
    @hookimpl(tryfirst=True)
    def cce_tags_query(self, language, shipped):
        return "(function_definition name: (identifier) @name"  # unbalanced


class _Raises:
    @hookimpl(tryfirst=True)
    def cce_tags_query(self, language, shipped):
        raise RuntimeError("boom")


def _host(*plugins: object) -> tuple[PluginHost, LanguagePack]:
    host = PluginHost([(cce_pack_python, "cce-pack-python"), *((p, "test") for p in plugins)], entry_points=False)
    return host, host.packs.packs[0]


SOURCE = "class A:\n    def f(self):\n        g()\n"


def _definitions(host: PluginHost) -> list[str]:
    return [row[0] for row in decode_file_symbols(Chunker(host).chunk_file("a.py", SOURCE).symbols or b"").definitions]


def test_a_plugin_may_replace_the_query_or_switch_symbols_off():
    host, pack = _host(_Replace())
    assert _definitions(host) == ["A"] and tags_source(host, pack) == OWN
    host, pack = _host(_Off())
    assert Chunker(host).chunk_file("a.py", SOURCE).symbols is None and tags_source(host, pack) == NONE
    host, pack = _host()
    assert _definitions(host) == ["A", "f"] and tags_source(host, pack) == EXTENDED


def test_a_query_that_does_not_compile_fails_validation_but_not_indexing():
    host, pack = _host(_Broken())
    (problem,) = symbol_problems(pack, host)
    assert problem.startswith("[pack:python] the tags query of pack 'python' does not compile")
    chunked = Chunker(host).chunk_file("a.py", SOURCE)
    assert [c.kind for c in chunked.chunks] == ["class_definition", "function_definition"] and chunked.symbols is None


def test_a_raising_plugin_leaves_the_shipped_query():
    host, pack = _host(_Raises())
    assert tags_query_text(host, pack) == shipped_tags_query("tree-sitter-python")
    assert tags_source(host, pack) == SHIPPED


def test_validate_plugin_reports_a_pack_whose_query_finds_nothing_in_its_sample():
    class Blind:
        PACK = cce_pack_python.PACK

        @hookimpl
        def cce_register_packs(self, register):
            register(cce_pack_python.PACK)

        @hookimpl
        def cce_tags_query(self, language, shipped):
            return "(decorator (identifier) @name) @reference.call"

    report = validate_plugin(Blind())
    assert any("finds no definition in its sample" in d for d in report.diagnostics), report.diagnostics


def test_sharing_the_walk_with_the_tags_query_changes_no_chunk_and_no_import():
    """The chunker finds its nodes in the symbols' query walk; with hooks off it walks alone, as before."""
    from helpers import REPO_ROOT

    host = default_host()
    shared, alone = Chunker(host), Chunker(host)
    checked = 0
    for path in sorted((REPO_ROOT / "samples").rglob("*")):
        pack = host.packs.pack_for(path.name)
        if pack is None or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        a = shared.chunk_with_pack(pack, path.name, text)
        b = alone.chunk_with_pack(pack, path.name, text, use_hooks=False)
        assert a.symbols is not None and b.symbols is None
        assert [(c.chunk_id, c.kind, c.start_line, c.end_line) for c in a.chunks] == \
            [(c.chunk_id, c.kind, c.start_line, c.end_line) for c in b.chunks], path.name
        assert a.imports == b.imports, path.name
        checked += 1
    assert checked >= 6


# The binding reader: what a language's syntax says about names, supplied by its pack.
TYPED_SOURCE = (
    "from flask import Flask\n"
    "\n"
    "def make(config: Config, name) -> Flask:\n"
    "    app = Flask(name)\n"
    "    return app\n"
    "\n"
    "class Holder:\n"
    "    def __init__(self, app):\n"
    "        self.app = app\n"
)


def _bindings(host: PluginHost) -> list[list[object]]:
    record = decode_file_symbols(Chunker(host).chunk_file("a.py", TYPED_SOURCE).symbols or b"")
    return record.bindings


def test_the_python_pack_supplies_the_bindings_its_syntax_gives():
    bindings = _bindings(_host()[0])
    assert [0, "()", "app,config,name"] in bindings  # parameters and an assigned name: locals of make
    assert [0, "->", "Flask"] in bindings  # the declared result
    assert [0, "->", "=app"] in bindings  # `return app`
    assert [2, "self.app", "=app"] in bindings  # `self.app = app` in Holder.__init__


class _NoReader:
    @hookimpl(tryfirst=True)
    def cce_symbol_binding_reader(self, language):
        return lambda source, spans: []


class _ReaderRaises:
    @hookimpl(tryfirst=True)
    def cce_symbol_binding_reader(self, language):
        def read(source, spans):
            raise RuntimeError("boom")

        return read


class _HookRaises:
    @hookimpl(tryfirst=True)
    def cce_symbol_binding_reader(self, language):
        raise RuntimeError("boom")


def test_without_the_packs_reader_the_core_reads_no_language_syntax():
    """The locals, results and attributes above come only from the pack's reader: one that reports
    nothing leaves none of them (the core reads no declaration syntax of its own)."""
    bindings = _bindings(_host(_NoReader())[0])
    assert not [b for b in bindings if b[1] in ("()", "->", "self.app")], bindings


def test_a_failing_reader_or_hook_costs_hints_never_the_index():
    for plugin in (_ReaderRaises(), _HookRaises()):
        host = _host(plugin)[0]
        chunked = Chunker(host).chunk_file("a.py", TYPED_SOURCE)
        record = decode_file_symbols(chunked.symbols or b"")
        assert [row[0] for row in record.definitions] == ["make", "Holder", "__init__"]
        assert not [b for b in record.bindings if b[1] in ("()", "->")]


def test_validation_runs_the_binding_reader_on_the_sample():
    host, pack = _host()
    assert symbol_problems(pack, host) == []  # the Python pack's own reader reads its sample cleanly
    host, pack = _host(_ReaderRaises())
    (problem,) = symbol_problems(pack, host)
    assert problem == "[pack:python] its binding reader raised RuntimeError: boom on the sample"

    class OddHints:
        @hookimpl(tryfirst=True)
        def cce_symbol_binding_reader(self, language):
            return lambda source, spans: [("local", 0, "x")]

    host, pack = _host(OddHints())
    (problem,) = symbol_problems(pack, host)
    assert "must be a BindingHint of a known kind" in problem
