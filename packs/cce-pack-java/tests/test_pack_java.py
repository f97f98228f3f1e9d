"""Self-tests of cce-pack-java: the engine's self-test of a pack, then the import rule, chunking and
compact views on snippets of real-looking Java."""

from __future__ import annotations

import importlib

import pytest
from tree_sitter import Node, Parser

from cce_core.api import ODD_INPUTS, CompactChunk, chunk_with, imports_with, pack_self_test, render_with

PACKAGE = importlib.import_module("cce_pack_java")
PACK = PACKAGE.PACK


def test_the_pack_passes_its_self_test() -> None:
    assert pack_self_test(PACKAGE, "java") == []


def test_the_pack_claims_its_extensions_grammar_and_sample() -> None:
    assert PACK.extensions == (".java",)
    assert (PACK.grammar_distribution, PACK.sample_name) == ("tree-sitter-java", "java.java")
    assert PACK.sample.strip(), "the sample is empty; ship real java code in cce_pack_java/sample.java"


# --- helpers: the pack alone, through cce_core.api and tree-sitter ------------------------------


def view(text: str, level: str) -> str:
    """A chunk's ``text`` as the engine serves it at ``level``: re-parsed, then rendered by the pack's hook."""
    return render_with(PACKAGE, "X.java", text, level)


def hook_view(text: str, level: str) -> str | None:
    """The pack's hook called directly, as the engine calls it (which hides an exception behind a fallback)."""
    source = text.encode("utf-8")
    todo: list[Node] = [Parser(PACK.grammar()).parse(source).root_node]
    while todo and todo[-1].type not in (*PACK.function_types, *PACK.class_types):  # pre-order: the first definition
        todo.extend(reversed(todo.pop().named_children))
    chunk = CompactChunk(file_path="X.java", content=text, source=source, pack=PACK)
    return PACKAGE.cce_render_compact(language="java", chunk=chunk, node=todo[-1] if todo else None, level=level)


# --- the import rule ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("import java.util.List;", ["List"]),
        ("package a.b;\n\nimport com.example.shop.Inventory;\n", ["Inventory"]),
        # A nested class lives in its outer class's file.
        ("import java.util.Map.Entry;", ["Map"]),
        # Static imports name a member (or all members) of a class: the class is the import.
        ("import static java.util.Objects.requireNonNull;", ["Objects"]),
        ("import static java.lang.annotation.RetentionPolicy.RUNTIME;", ["RetentionPolicy"]),
        ("import static org.junit.jupiter.api.Assertions.*;", ["Assertions"]),
        # Wildcards: the nested types of a class name the class, a package names no file.
        ("import java.util.Map.*;", ["Map"]),
        ("import java.util.concurrent.*;", []),
        # Lowercase class names (against convention): the position decides.
        ("import org.example.util.helpers;", ["helpers"]),
        ("import static org.example.util.helpers.clamp;", ["helpers"]),
        ("import Top;", ["Top"]),
        # Each class once, in first-seen order; comments and odd spacing change nothing.
        ("import java.util.List;\nimport static java.util.List.of;\nimport java.util.Set;\nimport java.util.List;\n",
         ["List", "Set"]),
        ("import java . util /* the */ . Optional ;", ["Optional"]),
        ("class A {}", []),
    ],
)
def test_imports(text: str, expected: list[str]) -> None:
    assert imports_with(PACKAGE, "X.java", text) == expected


@pytest.mark.parametrize(
    ("parts", "static", "wildcard", "expected"),
    [
        (["a", "b", "C"], False, False, "C"),
        (["a", "b", "C", "m"], True, False, "C"),
        (["a", "b", "C"], True, True, "C"),
        (["a", "b"], False, True, ""),
        (["a", "b", "c"], False, False, "c"),
        (["m"], True, False, ""),
        ([], False, False, ""),
        (["", "B"], False, False, "B"),
        (["a", "Ärger"], False, False, "Ärger"),
    ],
)
def test_imported_class(parts: list[str], static: bool, wildcard: bool, expected: str) -> None:
    assert PACKAGE.imported_class(parts, static, wildcard) == expected


# --- chunks -------------------------------------------------------------------------------------

SERVICE = """\
package com.example.orders;

import java.util.List;
import java.util.function.Function;

/** Orders, with their lines priced on demand. */
public final class OrderService {
    public record Line(String sku, int quantity) {
        public Line {
            if (quantity <= 0) throw new IllegalArgumentException("quantity");
        }
    }

    sealed interface Result permits Ok, Failed {}
    record Ok(long totalCents) implements Result {}
    record Failed(String reason) implements Result {}

    private final Function<String, Long> prices;

    public OrderService(Function<String, Long> prices) {
        this.prices = prices;
    }

    public Result total(List<Line> lines) {
        Runnable audit = new Runnable() {
            @Override
            public void run() {}
        };
        audit.run();
        return new Ok(lines.stream().mapToLong(l -> prices.apply(l.sku()) * l.quantity()).sum());
    }

    enum State { OPEN, PAID }
}
"""


def test_chunks_of_a_realistic_file() -> None:
    result = chunk_with(PACKAGE, "src/main/java/com/example/orders/OrderService.java", SERVICE)
    assert [(c.chunk_type, c.kind, c.start_line, c.end_line) for c in result.chunks] == [
        ("class", "class_declaration", 7, 34),
        ("class", "record_declaration", 8, 12),
        ("function", "compact_constructor_declaration", 9, 11),
        ("class", "interface_declaration", 14, 14),
        ("class", "record_declaration", 15, 15),
        ("class", "record_declaration", 16, 16),
        ("function", "constructor_declaration", 20, 22),
        ("function", "method_declaration", 24, 31),
        # A method of an anonymous class is a chunk too (nested kinds always are); the lambda is not.
        ("function", "method_declaration", 26, 27),
        ("class", "enum_declaration", 33, 33),
    ]
    assert all(c.language == "java" for c in result.chunks)
    assert result.imports == ["List", "Function"]


def test_module_info_is_not_a_class() -> None:
    text = "module com.example.orders {\n    requires java.sql;\n    exports com.example.orders;\n}\n"
    chunks = chunk_with(PACKAGE, "module-info.java", text).chunks
    assert [(c.chunk_type, c.kind) for c in chunks] == [("module", "module")]


# --- compact views ------------------------------------------------------------------------------

METHOD = """\
public Result total(List<Line> lines) throws PricingException {
        // Prices are looked up once per line.
        long sum = 0;
        for (Line line : lines) {
            sum += prices.apply(line.sku()) * line.quantity();
        }
        return new Ok(sum);
    }"""

CLASS = """\
public final class OrderService implements AutoCloseable {
    /** Prices by SKU. */
    private final Function<String, Long> prices;
    static final int LIMIT = 100;

    public OrderService(Function<String, Long> prices) {
        this.prices = prices;
    }

    @Override
    public void close() {}

    enum State { OPEN, PAID }
}"""


def test_a_method_renders_by_the_structural_rule() -> None:
    assert view(METHOD, "signature") == "public Result total(List<Line> lines) throws PricingException"
    assert view(METHOD, "compact") == (
        "public Result total(List<Line> lines) throws PricingException\n"
        "// Prices are looked up once per line.\n"
        "long sum = 0;\n"
        "\u2026 (+5 lines)"
    )


def test_a_class_renders_as_its_header_and_one_line_per_member() -> None:
    assert view(CLASS, "signature") == "public final class OrderService implements AutoCloseable"
    assert view(CLASS, "compact") == (
        "public final class OrderService implements AutoCloseable\n"
        "/** Prices by SKU. */\n"
        "private final Function<String, Long> prices;\n"
        "static final int LIMIT = 100;\n"
        "public OrderService(Function<String, Long> prices) {\n"
        "\u2026 (+2 lines)\n"
        "@Override\n"
        "\u2026 (+1 lines)\n"
        "enum State { OPEN, PAID }"
    )


def test_constructors_render_in_the_context_of_a_class() -> None:
    # On its own a constructor parses as a nameless method whose super(...) call is an error.
    text = "public Failed(String reason) {\n        super(reason);\n        this.code = 1;\n    }"
    assert view(text, "signature") == "public Failed(String reason)"
    assert view(text, "compact") == "public Failed(String reason)\nsuper(reason);\n\u2026 (+2 lines)"
    # On its own a compact constructor parses as no definition at all.
    compact = "public Line {\n            if (quantity <= 0) throw new IllegalArgumentException();\n        }"
    assert view(compact, "signature") == "public Line"
    assert view(compact, "compact") == (
        "public Line\nif (quantity <= 0) throw new IllegalArgumentException();\n\u2026 (+1 lines)"
    )


def test_enums_records_interfaces_and_annotation_types() -> None:
    assert view("enum State { OPEN, PAID }", "compact") == "enum State\nOPEN\nPAID"
    assert view("record Ok(long totalCents) implements Result {}", "signature") == (
        "record Ok(long totalCents) implements Result"
    )
    interface = "interface Priced {\n    long LIMIT = 10;\n    long price(String sku);\n}"
    assert view(interface, "compact") == "interface Priced\nlong LIMIT = 10;\nlong price(String sku);"
    annotation = "@interface Audited {\n    String reason() default \"\";\n}"
    assert view(annotation, "compact") == "@interface Audited\nString reason() default \"\";"


def test_other_languages_and_missing_definitions_are_left_to_the_engine() -> None:
    chunk = CompactChunk(file_path="x.py", content="def f(): pass", source=b"def f(): pass", pack=PACK)
    assert PACKAGE.cce_render_compact(language="python", chunk=chunk, node=None, level="compact") is None
    text = "package a.b;\n\nimport a.C;\n"
    chunk = CompactChunk(file_path="X.java", content=text, source=text.encode(), pack=PACK)
    assert PACKAGE.cce_render_compact(language="java", chunk=chunk, node=None, level="compact") is None
    # No definition in the text: the engine's first-line rule.
    assert view(text, "signature") == "package a.b;"
    assert view(text, "compact") == "package a.b;\n\u2026 (+2 lines)"


# --- odd input ----------------------------------------------------------------------------------

ODD = [
    "",
    "\n\n",
    "import",
    "import ;",
    "import static ;",
    "import .*;",
    "import a.b.",
    "import static a.b.C.*",
    "class {",
    "public Foo(",
    "Foo {",
    "} class _ {",
    "class Grüße { void größe() { String s = \"héllo\"; } }",
    "\ufeffimport java.util.List;\nclass A {}\n",
    "class A {\r\n\tvoid f() {\r\n\t}\r\n}\r\n",
    "\x00\x01\x02 class \x7f",
    "}}}}{{{{",
    "class A {\n" + "void f() {\n" * 200,
]


@pytest.mark.parametrize("text", [*ODD_INPUTS, *ODD])
def test_odd_input_never_raises(text: str) -> None:
    assert isinstance(imports_with(PACKAGE, "X.java", text), list)
    for level in ("signature", "compact"):
        assert isinstance(view(text, level), str)
        assert hook_view(text, level) is None or isinstance(hook_view(text, level), str)
    assert chunk_with(PACKAGE, "Odd.java", text).chunks


def test_imports_the_parser_cannot_read_are_skipped() -> None:
    # Bytes that are not UTF-8 end the first name in an error ("a" alone would be a wrong guess).
    # The unfinished ``import x.y.`` runs into the next line in the parse; its class is still found.
    source = b"import a.\xff\xfe;\nimport a.B;\nimport x.y.\nimport c.D"
    root = Parser(PACK.grammar()).parse(source).root_node
    assert PACK.extract_imports(root, source) == ["B", "D"]
