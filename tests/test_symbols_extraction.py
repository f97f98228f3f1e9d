"""Symbols per language: what each pack's tags query (the grammar's tags.scm plus the pack's patterns) finds.

Each fixture is a small file of the language; the checks name the
definitions with their qualified names and kinds, and the calls with the
definition they sit in, as the store records them at index time.
"""

from __future__ import annotations

import pytest

from cce_core.indexing.chunker import Chunker
from cce_core.plugins.host import PluginHost
from cce_core.symbols.index import SymbolIndex
from cce_core.symbols.model import decode_file_symbols


def _index(module_name: str, files: dict[str, str]) -> SymbolIndex:
    """The symbol index of ``files`` chunked with one pack plugin alone (no other plugin can interfere)."""
    plugin = pytest.importorskip(module_name)
    # An optional pack's module can be on the path while its grammar wheel is not installed.
    pytest.importorskip("tree_sitter_" + module_name.removeprefix("cce_pack_"))
    host = PluginHost([(plugin, module_name.replace("_", "-"))], entry_points=False)
    chunker = Chunker(host)
    records = {}
    for path, text in files.items():
        chunked = chunker.chunk_file(path, text)
        assert chunked.symbols is not None, f"{module_name}: no symbols recorded for {path}"
        pack = host.packs.pack_for(path)
        records[path] = (decode_file_symbols(chunked.symbols), pack.name if pack else "",
                         [c.chunk_id for c in chunked.chunks])
    return SymbolIndex(records, host)


def _defs(index: SymbolIndex) -> set[tuple[str, str, int]]:
    return {(d.qualified_name, d.kind, d.line) for d in index.all_definitions()}


def _calls(index: SymbolIndex) -> set[tuple[str, int, str | None]]:
    return {(r.name, r.line, r.enclosing) for r in index.all_references() if r.kind == "call"}


PYTHON = '''import os
from .helpers import slugify as slug, render


class Page:
    @property
    def title(self):
        return slug(self.raw)

    def save(self, path):
        render(self)
        os.path.join(path, self.title)


def build(pages):
    return [Page() for p in pages]
'''


def test_python_methods_imports_and_calls():
    index = _index("cce_pack_python", {"site/page.py": PYTHON})
    assert {("Page", "class", 5), ("Page.title", "method", 7), ("Page.save", "method", 10),
            ("build", "function", 15)} <= _defs(index)
    assert {("slug", 8, "Page.title"), ("render", 11, "Page.save"), ("join", 12, "Page.save"),
            ("Page", 16, "build"), ("property", 6, "Page")} <= _calls(index)
    imports = {(r.name, r.line) for r in index.all_references() if r.kind == "import"}
    assert imports == {("slugify", 2), ("render", 2)}
    (title,) = index.definitions("Page.title")
    assert title.signature == "def title(self):" and title.chunk_id is not None
    assert (title.end_line, title.file_path) == (8, "site/page.py")


def test_javascript_functions_classes_jsx_and_imports():
    text = ('import { fetchUser } from "./api";\n'
            "export class Store {\n  load(id) { return fetchUser(id).then(this.save); }\n}\n"
            "const View = () => <Avatar user={1} />;\n"
            "function main() { new Store().load(1); }\n")
    index = _index("cce_pack_javascript", {"src/store.jsx": text})
    assert {("Store", "class", 2), ("Store.load", "method", 3), ("View", "function", 5),
            ("main", "function", 6)} <= _defs(index)
    assert {("fetchUser", 3, "Store.load"), ("then", 3, "Store.load"), ("Avatar", 5, "View"),
            ("Store", 6, "main"), ("load", 6, "main")} <= _calls(index)
    assert index.imported_files("src/store.jsx") == frozenset()  # ./api is not in this index


def test_typescript_gets_the_javascript_part_and_its_own():
    text = ('import { z } from "./z";\n'
            "export interface Shape { area(): number }\n"
            "export type Id = string;\n"
            "export class Circle implements Shape {\n  area(): number { return square(this.r); }\n}\n"
            "export function square(x: number) { return x * x; }\n"
            "const parse = (v: unknown) => z.parse(v);\n")
    index = _index("cce_pack_typescript", {"src/shape.ts": text})
    assert {("Shape", "interface", 2), ("Id", "type", 3), ("Circle", "class", 4), ("Circle.area", "method", 5),
            ("square", "function", 7), ("parse", "function", 8)} <= _defs(index)
    assert {("square", 5, "Circle.area"), ("parse", 8, "parse")} <= _calls(index)


def test_ruby_methods_nest_in_classes_and_bare_names_are_not_calls():
    text = ('require_relative "helper"\n'
            "module Shop\n  class Cart\n    def total(items)\n      count = items.size\n"
            "      discount(count)\n    end\n\n    def self.empty\n      new\n    end\n  end\nend\n")
    index = _index("cce_pack_ruby", {"lib/shop/cart.rb": text})
    assert {("Shop", "module", 2), ("Shop.Cart", "class", 3), ("Shop.Cart.total", "method", 4),
            ("Shop.Cart.empty", "method", 9)} <= _defs(index)
    assert {("size", 5, "Shop.Cart.total"), ("discount", 6, "Shop.Cart.total")} <= _calls(index)
    # a local variable read is a plain reference, not a call (the shipped query's #is-not? local is not evaluated)
    assert ("count", 6, "Shop.Cart.total") not in _calls(index)
    assert [d.qualified_name for d in index.definitions("Cart#total")] == ["Shop.Cart.total"]


def test_rust_impl_blocks_qualify_methods_and_path_calls_count():
    text = ("use crate::util::clamp;\n"
            "pub struct Meter { v: u32 }\n"
            "impl Meter {\n    pub fn new() -> Self { Meter { v: clamp(0) } }\n"
            "    fn bump(&mut self) { self.v += 1; }\n}\n"
            "fn main() { let mut m = Meter::new(); m.bump(); println!(\"x\"); }\n")
    index = _index("cce_pack_rust", {"src/main.rs": text})
    assert {("Meter", "class", 2), ("Meter", "implementation", 3), ("Meter.new", "method", 4),
            ("Meter.bump", "method", 5), ("main", "function", 7)} <= _defs(index)
    assert {("clamp", 4, "Meter.new"), ("new", 7, "main"), ("bump", 7, "main"), ("println", 7, "main")} \
        <= _calls(index)
    assert [d.qualified_name for d in index.definitions("Meter::bump")] == ["Meter.bump"]


def test_c_definitions_span_their_bodies_and_prototypes_are_declarations():
    header = "int area(int w, int h);\n#define SQUARE(x) area((x), (x))\n"
    source = ('#include "geo.h"\n#include <stdio.h>\n'
              "int area(int w, int h) {\n  return w * h;\n}\n"
              "static void report(void) {\n  printf(\"%d\", area(2, 3));\n}\n")
    index = _index("cce_pack_c", {"src/geo.h": header, "src/geo.c": source})
    assert {("area", "declaration", 1), ("SQUARE", "macro", 2), ("area", "function", 3),
            ("report", "function", 6)} <= _defs(index)
    # the call sits inside report's body: the definition spans the body, not just its declarator
    assert {("printf", 7, "report"), ("area", 7, "report")} <= _calls(index)
    assert index.imported_files("src/geo.c") == frozenset({"src/geo.h"})


def test_go_methods_calls_and_package_imports():
    text = ('package main\n\nimport (\n\t"fmt"\n\t"example.com/app/internal/store"\n)\n\n'
            "type Server struct{}\n\nfunc (s *Server) Start() { store.Open(); fmt.Println(1) }\n\n"
            "func main() { (&Server{}).Start() }\n")
    index = _index("cce_pack_go", {"cmd/main.go": text, "internal/store/db.go": "package store\n\nfunc Open() {}\n"})
    # a method is qualified by its receiver type, though Go declares it outside the type
    assert {("Server", "type", 8), ("Server.Start", "method", 10), ("main", "function", 12)} <= _defs(index)
    assert {("Open", 10, "Server.Start"), ("Println", 10, "Server.Start"), ("Start", 12, "main")} <= _calls(index)
    assert [d.line for d in index.definitions("Server.Start")] == [10]
    assert index.imported_files("cmd/main.go") == frozenset({"internal/store/db.go"})


def test_java_classes_constructors_and_calls():
    text = ("package com.acme.shop;\n\nimport com.acme.util.Money;\n\n"
            "public class Cart {\n  public Cart() { }\n"
            "  public Money total() { return Money.sum(items()); }\n"
            "  private int items() { return new Money().cents(); }\n}\n")
    index = _index("cce_pack_java", {"src/main/java/com/acme/shop/Cart.java": text,
                                     "src/main/java/com/acme/util/Money.java": "package com.acme.util;\n"
                                     "public class Money { static Money sum(int n) { return null; } }\n"})
    assert {("Cart", "class", 5), ("Cart.Cart", "constructor", 6), ("Cart.total", "method", 7),
            ("Cart.items", "method", 8)} <= _defs(index)
    assert {("sum", 7, "Cart.total"), ("items", 7, "Cart.total"), ("Money", 8, "Cart.items")} <= _calls(index)
    assert "src/main/java/com/acme/util/Money.java" in index.imported_files("src/main/java/com/acme/shop/Cart.java")


@pytest.mark.parametrize("module_name", ["cce_pack_python", "cce_pack_javascript", "cce_pack_typescript",
                                         "cce_pack_ruby", "cce_pack_rust", "cce_pack_c", "cce_pack_go",
                                         "cce_pack_java"])
def test_every_pack_finds_definitions_in_its_own_sample(module_name):
    plugin = pytest.importorskip(module_name)
    pack = plugin.PACK
    index = _index(module_name, {pack.sample_name: pack.sample})
    assert index.all_definitions(), f"{pack.name}: its tags query finds nothing in its sample"


def test_the_record_marks_member_uses_exactly_where_the_byte_rule_says():
    """The record's fast reading of the bytes before a name (upper-case code: written after a receiver)
    agrees with ``_after_receiver`` at every offset where a name can start (never on a blank)."""
    import random

    from cce_core.symbols.extract import SymbolExtractor, _after_receiver
    from cce_core.symbols.model import REFERENCE

    rng = random.Random(5)
    for length in list(range(1, 12)) * 60 + [200] * 40:
        text = bytes(rng.choice(b"..->  \n\tab_(") for _ in range(length))
        if rng.random() < 0.1:
            text = b"a." + b" " * rng.randint(60, 70) + b"b"  # the 63-blank limit
        keys = [key for key in range(len(text)) if text[key] not in b" \t\r\n"]
        record = SymbolExtractor._record(text, [], {}, {key: (key + 1, REFERENCE, None) for key in keys}, [])
        assert len(record.references) == len(keys)
        for key, code in zip(keys, record.references.codes, strict=True):
            assert (code == "R") == _after_receiver(text, key), (text, key)


def test_the_parenthesis_jump_finds_the_same_opening_as_a_byte_walk():
    import random

    from cce_core.symbols.extract import _CALL_SCAN_BYTES, _matching_open

    def walk(source: bytes, close: int):
        depth = 0
        for i in range(close, max(0, close - _CALL_SCAN_BYTES) - 1, -1):
            if source[i] == ord(")"):
                depth += 1
            elif source[i] == ord("("):
                depth -= 1
                if depth == 0:
                    return i
        return None

    rng = random.Random(9)
    for _ in range(2000):
        text = bytes(rng.choice(b"(()) ab") for _ in range(rng.randint(1, 40)))
        for close in (i for i, b in enumerate(text) if b == ord(")")):
            assert _matching_open(text, close) == walk(text, close), (text, close)


def test_the_reversed_chain_reading_agrees_with_a_byte_walk():
    """``_receiver_before`` reads a receiver chain in one regex step over the reversed text; a plain walk
    back over the bytes (at most three names, none empty, none starting with a digit) must agree."""
    import random

    from cce_core.symbols.extract import MAX_CHAIN, _receiver_before

    word = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

    def walk(source: bytes, end: int) -> str | None:
        parts, i = 0, end
        while True:
            i -= 1
            word_end = i + 1
            while i >= 0 and source[i] in word:
                i -= 1
            if i + 1 == word_end or source[i + 1] in b"0123456789":
                return None
            parts += 1
            if i >= 0 and source[i] == ord(".") and parts < MAX_CHAIN:
                continue
            if i >= 0 and source[i] == ord("."):
                return None
            return source[i + 1:end].decode("ascii")

    rng = random.Random(21)
    checked = 0
    for _ in range(4000):
        text = bytes(rng.choice(b"ab9_.. (") for _ in range(rng.randint(1, 14))) + b".x"
        end = len(text) - 2
        if end < 1 or text[end - 1] == ord(")") or text.endswith(b"super().x"):
            continue
        assert _receiver_before(text, end + 1) == walk(text, end), text
        checked += 1
    assert checked > 2000


def test_the_receiver_uses_read_in_the_reversed_text_agree_with_a_byte_walk():
    """``_add_receiver_uses`` reads the names before a use in one regex step over the reversed text; the
    byte walk it replaced (blanks, ".", a whole word not starting with a digit, at most three times) must agree."""
    import random

    from cce_core.symbols.extract import _SELF_RECEIVER_BYTES, MAX_CHAIN, _add_receiver_uses
    from cce_core.symbols.model import CALL, REFERENCE

    word = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

    def walk(source: bytes, refs: dict[int, tuple[int, str, str | None]]) -> None:
        for key in list(refs):
            i = key - 1
            for _part in range(MAX_CHAIN):
                while i >= 0 and source[i] in b" \t\r\n":
                    i -= 1
                if i < 1 or source[i] != ord(".") or source[i - 1] == ord("."):
                    break
                end = i
                i -= 1
                while i >= 0 and source[i] in word:
                    i -= 1
                start = i + 1
                if start == end or source[start] in b"0123456789":
                    break
                if start not in refs and source[start:end] not in _SELF_RECEIVER_BYTES:
                    refs[start] = (end, REFERENCE, None)

    rng = random.Random(24)
    added = 0
    for _ in range(3000):
        text = bytes(rng.choice(b"ab9_..  \n(") for _ in range(rng.randint(1, 30)))
        if rng.random() < 0.2:
            text = text.replace(b"a", b"this", 1)
        starts = [i for i in range(len(text)) if text[i] in word and (i == 0 or text[i - 1] not in word)]
        refs = {key: (key + 1, CALL, None) for key in rng.sample(starts, min(len(starts), rng.randint(0, 4)))}
        expected = dict(refs)
        walk(text, expected)
        captured = len(refs)
        _add_receiver_uses(text, refs)
        assert refs == expected, text
        added += len(refs) - captured
    assert added > 150


def test_the_assignment_reading_agrees_with_the_backward_walk_it_replaced():
    """``_assigned_variable`` finds the callee's start and the byte before it in the reversed text; the byte walk
    and the tail test it replaced must give the same variable for every call on a line with an "="."""
    import random

    from cce_core.symbols.extract import _ASSIGNED, _assigned_variable

    word = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")

    def walked(source: bytes, line_start: int, name_start: int, name_end: int) -> str | None:
        after = name_end
        while after < len(source) and source[after] in b" \t\r\n":
            after += 1
        if after >= len(source) or source[after] != ord("("):
            return None
        start = name_start
        while start > line_start and (source[start - 1] in word or source[start - 1] == ord(".")):
            start -= 1
        tail = source[max(line_start, start - 16):start].rstrip()
        if len(tail) >= len(b"await") and not tail.endswith((b"=", b"await", b"new")):
            return None
        found = _ASSIGNED.search(source, line_start, start)
        return found.group(1).decode("ascii") if found is not None and found.end() == start else None

    pieces = [b"x", b"self.x", b"this.app", b" ", b"  ", b"\t", b"=", b" = ", b":", b": T ", b"const ", b"let ",
              b"await ", b"new ", b"a.", b"b", b"(", b")", b";", b"{", b"9", b"\x0b", b"tw", b"==", b"f"]
    rng = random.Random(25)
    found_some = 0
    for _ in range(4000):
        after_name = rng.choice([b"(", b" (", b"", b"x("])
        line = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 9))) + b"call" + after_name
        prefix = rng.choice([b"", b"z\n", b"y = 1;\n"])
        source = prefix + line + b"1)\n"
        line_start, name_start = len(prefix), len(prefix) + line.index(b"call")
        if source.rfind(b"=", line_start, name_start) < 0:
            continue  # the caller's pre-check: only calls after an "=" on their line are read
        expected = walked(source, line_start, name_start, name_start + 4)
        assert _assigned_variable(source, line_start, name_start, name_start + 4) == expected, source
        found_some += expected is not None
    assert found_some > 25


def test_the_record_reads_receivers_as_receiver_before_does():
    """The record's inlined reading of what stands before ``.name`` (a chain, ``super()``, a call's result
    found by the parenthesis shortcut) agrees with ``_receiver_before`` at every use after a "."."""
    import random

    from cce_core.symbols.extract import CALL_RESULT, SymbolExtractor, _receiver_before
    from cce_core.symbols.model import CALL, REFERENCE

    word = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
    rng = random.Random(26)
    compared = 0
    for _ in range(1500):
        text = b"".join(rng.choice([b"A", b"Bc", b"9", b"_", b".", b".", b"(", b")", b" ", b"\n", b"super()", b"f(x)"])
                        for _ in range(rng.randint(1, 25)))
        starts = [i for i in range(len(text)) if text[i] in word and (i == 0 or text[i - 1] not in word)]
        refs = {}
        for key in starts:
            end = key
            while end < len(text) and text[end] in word:
                end += 1
            refs[key] = (end, CALL if text[end:end + 1] == b"(" else REFERENCE, None)
        record = SymbolExtractor._record(text, [], {}, refs, [])
        keys = sorted(refs)
        calls = {key: i for i, key in enumerate(keys) if refs[key][1] == CALL}
        expected = []
        for i, key in enumerate(keys):
            if record.references.codes[i].isupper():
                found = _receiver_before(text, key, calls, text[::-1])
                # What the record keeps: a call's result, the instance, or a capitalised name (no bindings here).
                if found is not None and (found.startswith(CALL_RESULT) or found == "super" or found[:1].isupper()):
                    expected.append([i, found])
        assert record.receivers == expected, text
        compared += len(expected)
    assert compared > 250


def test_a_reference_is_enclosed_by_the_innermost_definition_around_it():
    """The record finds a use's enclosing definition by bisecting the stretches the definitions cut the file
    into; a brute force over every definition around the use (the one opened last wins) must agree."""
    import random

    from cce_core.symbols.extract import SymbolExtractor
    from cce_core.symbols.model import REFERENCE

    rng = random.Random(27)
    for _ in range(400):
        size = rng.randint(20, 80)
        text = bytes(rng.choice(b"abc\n ") for _ in range(size - 1)) + b"\n"
        defs = {}
        for _d in range(rng.randint(0, 6)):
            start = rng.randrange(size - 2)
            end = rng.randint(start, size)
            if any(s < start < e < end or start < s < end < e for s, e, *_rest in defs.values()):
                continue  # syntax nodes nest or stand apart; never overlap
            name = rng.randint(start, max(start, end - 1))
            if name in defs or text[name] in b" \n":
                continue
            defs[name] = (start, end, name + 1, "function", "")
        refs = {key: (key + 1, REFERENCE, None) for key in range(size) if key not in defs and text[key] not in b" \n"}
        record = SymbolExtractor._record(text, [], defs, refs, [])
        opened = sorted((start, -end, key) for key, (start, end, *_rest) in defs.items())
        index = {key: i for i, (_s, _e, key) in enumerate(opened)}
        for i, key in enumerate(sorted(refs)):
            around = [(start, negative_end, def_key) for start, negative_end, def_key in opened
                      if start <= key < -negative_end]
            expected = index[max(around)[2]] if around else -1
            assert record.references.enclosing[i] == expected, (text, defs, key)


def test_the_walk_leaves_the_cyclic_collector_as_it_found_it():
    """``run`` pauses the collector while it reads the matches; it resumes it only when it was on, even when
    reading fails, and never turns it on for a caller that had paused it."""
    import gc

    plugin = pytest.importorskip("cce_pack_python")
    from cce_core.symbols.extract import symbol_extractor

    host = PluginHost([(plugin, "cce-pack-python")], entry_points=False)
    pack = host.packs.pack_for("a.py")
    extractor = symbol_extractor(host, pack)
    assert extractor is not None
    from tree_sitter import Parser

    root = Parser(pack.grammar()).parse(b"import os\nos.path.join('a')\n").root_node
    was_on = gc.isenabled()
    try:
        gc.enable()
        read, _captured = extractor.run(root)
        assert gc.isenabled() and read.refs
        gc.disable()
        extractor.run(root)
        assert not gc.isenabled()
        gc.enable()

        def failing(matches):
            assert not gc.isenabled()  # paused while the matches are read
            raise RuntimeError("reading failed")

        extractor.read_matches = failing  # type: ignore[method-assign]
        with pytest.raises(RuntimeError):
            extractor.run(root)
        assert gc.isenabled()
    finally:
        (gc.enable if was_on else gc.disable)()
