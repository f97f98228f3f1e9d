"""Self-tests of cce-pack-go: the engine's self-test of a pack, then the import rule, chunking and
compact views on snippets of real-looking Go."""

from __future__ import annotations

import importlib

import pytest
from tree_sitter import Node, Parser

from cce_core.api import ODD_INPUTS, CompactChunk, chunk_with, imports_with, pack_self_test, render_with

PACKAGE = importlib.import_module("cce_pack_go")
PACK = PACKAGE.PACK


def test_the_pack_passes_its_self_test() -> None:
    assert pack_self_test(PACKAGE, "go") == []


def test_the_pack_claims_its_extensions_grammar_and_sample() -> None:
    assert PACK.extensions == (".go",)
    assert (PACK.grammar_distribution, PACK.sample_name) == ("tree-sitter-go", "go.go")
    assert PACK.sample.strip(), "the sample is empty; ship real go code in cce_pack_go/sample.go"


# --- helpers: the pack alone, through cce_core.api and tree-sitter ------------------------------


def view(text: str, level: str) -> str:
    """A chunk's ``text`` as the engine serves it at ``level``: re-parsed, then rendered by the pack's hook."""
    return render_with(PACKAGE, "x.go", text, level)


def hook_view(text: str, level: str) -> str | None:
    """The pack's hook called directly, as the engine calls it (which hides an exception behind a fallback)."""
    source = text.encode("utf-8")
    todo: list[Node] = [Parser(PACK.grammar()).parse(source).root_node]
    while todo and todo[-1].type not in (*PACK.function_types, *PACK.class_types):  # pre-order: the first definition
        todo.extend(reversed(todo.pop().named_children))
    chunk = CompactChunk(file_path="x.go", content=text, source=source, pack=PACK)
    return PACKAGE.cce_render_compact(language="go", chunk=chunk, node=todo[-1] if todo else None, level=level)


# --- the import rule ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('package p\nimport "fmt"\n', ["fmt"]),
        ('package p\nimport "net/http"\n', ["http"]),
        ('package p\nimport (\n\t"context"\n\t"encoding/json"\n\n\t"example.com/app/store"\n)\n',
         ["context", "json", "store"]),
        # An alias, a dot import and a blank import name the same package as the plain form.
        ('package p\nimport cfg "example.com/app/config"\n', ["config"]),
        ('package p\nimport (\n\t. "math"\n\t_ "embed"\n\tpb "example.com/api/v1/proto"\n)\n',
         ["math", "embed", "proto"]),
        ('package p\nimport `raw/strings`\n', ["strings"]),
        # Module major versions and gopkg.in versions are not package names.
        ('package p\nimport (\n\t"github.com/jackc/pgx/v5"\n\t"gopkg.in/yaml.v3"\n)\n', ["pgx", "yaml"]),
        # Each package once, in first-seen order, across several import declarations.
        ('package p\nimport "fmt"\nimport (\n\tf "fmt"\n\t"os"\n)\nimport "fmt"\n', ["fmt", "os"]),
        ("package p\n\nfunc main() {}\n", []),
    ],
)
def test_imports(text: str, expected: list[str]) -> None:
    assert imports_with(PACKAGE, "x.go", text) == expected


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ('"fmt"', "fmt"),
        ('"k8s.io/client-go/kubernetes"', "kubernetes"),
        ('"github.com/x/y/v2"', "y"),
        ('"v2"', "v2"),  # a package really named v2
        ('"example.com/versioned/v10/sub"', "sub"),
        ('"gopkg.in/check.v1"', "check"),
        ('"example.com/a.b"', "a.b"),
        ('""', ""),
        ('"/"', ""),
        ("", ""),
    ],
)
def test_package_name(path: str, name: str) -> None:
    assert PACKAGE.package_name(path) == name


# --- chunks -------------------------------------------------------------------------------------

SERVER = """\
package server

import (
	"encoding/json"
	"net/http"

	"example.com/app/store"
)

const maxBody = 1 << 20

// Handler serves the store over HTTP.
type Handler struct {
	Store *store.Store
}

type (
	Key   string
	Codec interface {
		Encode(v any) ([]byte, error)
	}
)

// New returns a handler for s.
func New(s *store.Store) *Handler {
	return &Handler{Store: s}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	write := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	write(h.Store.Get(Key(r.URL.Path)))
}
"""


def test_chunks_of_a_realistic_file() -> None:
    result = chunk_with(PACKAGE, "server/server.go", SERVER)
    assert [(c.chunk_type, c.kind, c.start_line, c.end_line) for c in result.chunks] == [
        ("class", "type_declaration", 13, 15),
        ("class", "type_declaration", 17, 22),
        ("function", "function_declaration", 25, 27),
        ("function", "method_declaration", 29, 32),
    ]
    assert all(c.language == "go" for c in result.chunks)
    # The closure inside ServeHTTP and the const declaration are not chunks of their own.
    assert result.imports == ["json", "http", "store"]


# --- compact views ------------------------------------------------------------------------------

FUNCTION = """\
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Only GET is served.
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h.write(w, r.URL.Path)
}"""

STRUCT = """\
type Handler[T any] struct {
	// Store holds the values.
	Store  *store.Store
	Codec  Codec[T]
	limits struct {
		body int
	}
	sync.Mutex
}"""

INTERFACE = """\
type Codec[T any] interface {
	Encode(v T) ([]byte, error)
	Decode(data []byte) (T, error)
	fmt.Stringer
}"""


def test_a_function_renders_by_the_structural_rule() -> None:
    assert view(FUNCTION, "signature") == "func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request)"
    assert view(FUNCTION, "compact") == (
        "func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request)\n"
        "// Only GET is served.\n"
        "if r.Method != http.MethodGet {\n"
        "\u2026 (+5 lines)"
    )


def test_a_struct_renders_as_its_header_and_one_line_per_field() -> None:
    assert view(STRUCT, "signature") == "type Handler[T any] struct"
    assert view(STRUCT, "compact") == (
        "type Handler[T any] struct\n"
        "// Store holds the values.\n"
        "Store  *store.Store\n"
        "Codec  Codec[T]\n"
        "limits struct {\n"
        "\u2026 (+2 lines)\n"
        "sync.Mutex"
    )


def test_an_interface_renders_as_its_header_and_one_line_per_method() -> None:
    assert view(INTERFACE, "signature") == "type Codec[T any] interface"
    assert view(INTERFACE, "compact") == (
        "type Codec[T any] interface\nEncode(v T) ([]byte, error)\nDecode(data []byte) (T, error)\nfmt.Stringer"
    )


@pytest.mark.parametrize(
    "text",
    [
        "type ID int64",
        "type Pair = struct{ A, B int }",
        "type HandlerFunc func(w http.ResponseWriter, r *http.Request)",
        "type (\n\tA struct{ X int }\n\tB = A\n)",
    ],
)
def test_other_type_declarations_are_their_own_signature(text: str) -> None:
    # No single struct or interface body: the engine's rule shows the whole declaration.
    assert view(text, "signature") == text
    assert view(text, "compact") == text


def test_other_languages_and_missing_definitions_are_left_to_the_engine() -> None:
    chunk = CompactChunk(file_path="x.py", content="def f(): pass", source=b"def f(): pass", pack=PACK)
    assert PACKAGE.cce_render_compact(language="python", chunk=chunk, node=None, level="compact") is None
    text = "package p\n\nvar limit = 10\n"
    chunk = CompactChunk(file_path="x.go", content=text, source=text.encode(), pack=PACK)
    assert PACKAGE.cce_render_compact(language="go", chunk=chunk, node=None, level="compact") is None
    # No definition in the text: the engine's first-line rule.
    assert view(text, "signature") == "package p"
    assert view(text, "compact") == "package p\n\u2026 (+2 lines)"


# --- odd input ----------------------------------------------------------------------------------

ODD = [
    "",
    "\n\n",
    "package",
    "import (",
    'import "',
    'package p\nimport (\n\t"fmt"\n',
    "func (",
    "type X struct {",
    "type X interface {\n\tM(",
    "func Grüße() string { return \"héllo\" }",
    "\ufeffpackage p\n\nfunc F() {}\n",
    "package p\r\n\r\ntype T struct {\r\n\tA int\r\n}\r\n",
    "\x00\x01\x02 func \x7f",
    "}}}}{{{{",
    "package p\n" + "func F() {\n" * 200,
]


@pytest.mark.parametrize("text", [*ODD_INPUTS, *ODD])
def test_odd_input_never_raises(text: str) -> None:
    assert isinstance(imports_with(PACKAGE, "x.go", text), list)
    for level in ("signature", "compact"):
        assert isinstance(view(text, level), str)
        assert hook_view(text, level) is None or isinstance(hook_view(text, level), str)
    assert chunk_with(PACKAGE, "odd.go", text).chunks


def test_import_paths_that_are_not_utf8_are_skipped() -> None:
    source = b'package p\nimport (\n\t"\xff\xfe"\n\t"os"\n)\n'
    root = Parser(PACK.grammar()).parse(source).root_node
    assert PACK.extract_imports(root, source) == ["os"]
