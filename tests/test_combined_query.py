"""One query pass for chunks and imports (``LanguagePack.imports_from_nodes``).

A pack that provides ``imports_from_nodes`` gets its import nodes from the
chunker's own query instead of walking the tree a second time. Nothing a user
sees may change: the imports must equal the pack's ``extract_imports`` and the
chunks must equal those of the two-pass path, on every file we have at hand.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from helpers import PackPlugin, installed_pack, reference_dir
from tree_sitter import Node, Parser

from cce_core.authoring.validate import behaviour_problems
from cce_core.hookspecs import LanguagePack, hookimpl
from cce_core.indexing.chunker import Chunker
from cce_core.plugins.host import PluginHost
from cce_core.plugins.validation import structural_problems

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
FIXTURE = reference_dir() / "test" / "fixture"

# Every bundled pack reads its imports in the shared pass. Ruby's import kind is `call`, so its
# import_pattern narrows the shared query to the require calls (filtered in C) rather than
# handing over every method call of a file.
ONE_PASS = ["c", "javascript", "python", "ruby", "rust", "typescript"]
ALL_PACKS = ONE_PASS

# Several imports per file, with duplicates and odd forms: the samples hold one
# import each, which would not notice import nodes handed over in the wrong order.
HANDWRITTEN = {
    "c": '#include <stdlib.h>\n#include "dir/store.h"\n#include <sys/types.h>\n#include CONFIG_H\n'
         "#include <stdlib.h>\nint main(void) { return 0; }\n",
    "javascript": 'import fs from "fs";\nimport { a } from "./lib/a";\nimport "@scope/pkg/sub";\n'
                  'import React from "react-dom/client";\nimport again from "fs";\nconst f = () => a;\n',
    "python": "import os.path, sys as system\nfrom . import sibling\nfrom .pkg.mod import x\n"
              "from collections import abc\nimport os\ndef f():\n    import json\n",
    "ruby": 'require "json"\nrequire_relative "lib/store.rb"\nloader.require "x"\nrequire "set"\n',
    "rust": "use std::io;\nuse crate::store::Index;\npub use serde::Deserialize;\nuse super::x;\n"
            "use std::fmt;\nfn f() { use regex::Regex; }\n",
    "typescript": 'import { z } from "zod";\nimport type { T } from "./types/t";\nimport "@scope/pkg/sub";\n'
                  'import x = require("legacy");\nimport again from "zod";\nclass A { m() {} }\n',
}


def _files_for(pack: LanguagePack, root: Path) -> list[tuple[str, str]]:
    return [
        (str(p.relative_to(root)), p.read_text(encoding="utf-8", errors="replace"))
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix.lower() in pack.extensions
    ]


def _cases(pack: LanguagePack, where: str) -> list[tuple[str, str]]:
    if where == "sample":
        return [(pack.sample_name, pack.sample)]
    if where == "handwritten":
        return [(f"multi{pack.extensions[0]}", HANDWRITTEN[pack.name])]
    if where == "samples":
        return _files_for(pack, SAMPLES)
    if not FIXTURE.is_dir():
        pytest.skip(f"reference fixtures not found at {FIXTURE} (set CCE_REFERENCE_DIR to the shared/reference folder)")
    return _files_for(pack, FIXTURE)


def _direct_imports(pack: LanguagePack, text: str) -> list[str]:
    source = text.encode("utf-8")
    return pack.extract_imports(Parser(pack.grammar()).parse(source).root_node, source)


def test_the_bundled_packs_that_offer_one_pass(host):
    assert sorted(p.name for p in host.packs.packs if p.imports_from_nodes is not None) == ONE_PASS
    assert sorted(p.name for p in host.packs.packs if p.import_pattern) == ["ruby"]


def test_an_import_pattern_hands_over_only_what_it_captures(host, bare_host):
    ruby = installed_pack(host, "ruby")
    handed: list[list[Node]] = []

    def spy(nodes: list[Node], source: bytes) -> list[str]:
        handed.append(nodes)
        return ruby.imports_from_nodes(nodes, source)

    text = 'puts "hi"\nrequire "json"\nfoo.bar(1)\nloader.require "x"\nrequire_relative "lib/a"\nlog(2)\n'
    result = Chunker(bare_host).chunk_with_pack(replace(ruby, imports_from_nodes=spy), "a.rb", text)
    assert result.imports == ["json", "a"]
    # The calls naming require or require_relative, not the other calls the `call` kind would match.
    source = text.encode("utf-8")
    assert [source[n.start_byte:n.end_byte].decode() for n in handed[0]] == [
        'require "json"', 'loader.require "x"', 'require_relative "lib/a"']


@pytest.mark.parametrize("where", ["sample", "handwritten", "samples", "fixture"])
@pytest.mark.parametrize("name", ONE_PASS)
def test_one_pass_imports_equal_extract_imports(host, bare_host, name, where):
    pack = installed_pack(host, name)
    calls: list[list[Node]] = []

    def spy(nodes: list[Node], source: bytes) -> list[str]:
        calls.append(nodes)
        return pack.imports_from_nodes(nodes, source)

    # extract_imports must not be reached on the one-pass path: it would hide a broken imports_from_nodes.
    def not_called(root: Node, source: bytes) -> list[str]:
        raise AssertionError("extract_imports was called on the one-pass path")

    watched = replace(pack, imports_from_nodes=spy, extract_imports=not_called)
    chunker = Chunker(bare_host)
    cases = _cases(pack, where)
    assert cases, f"no {pack.extensions} file under {where}"
    found_any = False
    for path, text in cases:
        calls.clear()
        imports = chunker.chunk_with_pack(watched, path, text).imports
        assert len(calls) == 1, path
        nodes = calls[0]
        assert all(n.type in pack.import_node_types for n in nodes), path
        assert [n.start_byte for n in nodes] == sorted(n.start_byte for n in nodes), path
        assert imports == _direct_imports(pack, text), path
        found_any = found_any or bool(imports)
    # Guard against a vacuous pass where both sides find nothing.
    if where != "fixture":
        assert found_any, f"no {name} file under {where} has an import"
    if where == "handwritten":
        assert len(imports) >= 3, imports  # enough names for their order to matter


@pytest.mark.parametrize("where", ["sample", "handwritten", "samples", "fixture"])
@pytest.mark.parametrize("name", ALL_PACKS)
def test_chunks_and_imports_match_the_two_pass_path(host, bare_host, name, where):
    pack = installed_pack(host, name)
    chunker = Chunker(bare_host)
    for path, text in _cases(pack, where):
        one = chunker.chunk_with_pack(pack, path, text)
        two = chunker.chunk_with_pack(pack, path, text, one_pass=False)
        assert one.chunks == two.chunks, path
        assert one.imports == two.imports, path


class _Override:
    @hookimpl
    def cce_extract_imports(self, language, root, source):
        return ["overridden"] if language == "typescript" else None


def test_an_import_override_still_wins_over_the_one_pass_path(host):
    ts = installed_pack(host, "typescript")
    py = installed_pack(host, "python")
    fresh = PluginHost([(PackPlugin(ts, py), "bundle"), (_Override(), "override")], entry_points=False)
    chunker = Chunker(fresh)
    text = 'import { z } from "zod";\nexport function f() { return z; }\n'
    result = chunker.chunk_file("a.ts", text)
    assert result.imports == ["overridden"]
    assert [c.kind for c in result.chunks] == ["function_declaration"]
    # The hook answered None for Python: the pack's own rule, from the shared pass.
    assert chunker.chunk_file("a.py", "import os\n").imports == ["os"]
    # And without hooks (the validator's view) the pack speaks for itself.
    assert chunker.chunk_with_pack(ts, "a.ts", text, use_hooks=False).imports == ["zod"]


def test_import_kinds_that_are_also_chunk_kinds(host, bare_host):
    # `#include` lines become chunks as well as imports: each node must land in both lists.
    c = installed_pack(host, "c")
    overlapping = replace(c, name="c-overlap", class_types=(*c.class_types, "preproc_include"))
    text = '#include <stdlib.h>\n#include "dir/store.h"\nstruct S { int x; };\nint f(void) { return 0; }\n'
    chunker = Chunker(bare_host)
    one = chunker.chunk_with_pack(overlapping, "a.c", text)
    two = chunker.chunk_with_pack(overlapping, "a.c", text, one_pass=False)
    assert [(c.kind, c.start_line) for c in one.chunks] == [
        ("preproc_include", 1),
        ("preproc_include", 2),
        ("struct_specifier", 3),
        ("function_definition", 4),
    ]
    assert one.chunks == two.chunks
    assert one.imports == two.imports == ["stdlib", "store"]


def test_an_import_kind_missing_from_the_grammar_costs_no_chunks(host, bare_host):
    ts = installed_pack(host, "typescript")
    broken = replace(ts, import_node_types=("import_statment",))
    text = 'import { z } from "zod";\nclass A { m() {} }\n'
    result = Chunker(bare_host).chunk_with_pack(broken, "a.ts", text)
    assert result.chunks == Chunker(bare_host).chunk_with_pack(ts, "a.ts", text).chunks
    # Two passes then, so the pack's own extract_imports still answers.
    assert result.imports == ["zod"]


def test_imports_from_nodes_that_raises_leaves_the_file_without_imports(host, bare_host):
    def explode(nodes: list[Node], source: bytes) -> list[str]:
        raise ValueError("boom")

    rust = installed_pack(host, "rust")
    broken = replace(rust, imports_from_nodes=explode)
    result = Chunker(bare_host).chunk_with_pack(broken, "a.rs", "use std::io;\nfn f() {}\n")
    assert result.imports == []
    assert [c.kind for c in result.chunks] == ["function_item"]


def test_validator_rejects_a_non_callable_imports_from_nodes(host):
    c = replace(installed_pack(host, "c"), imports_from_nodes="not a function")
    assert structural_problems(c, []) == [
        "[pack:c] imports_from_nodes must be a callable or None; see docs/adding-a-language.md."
    ]


def test_validator_reports_imports_from_nodes_that_disagrees(host, bare_host):
    js = installed_pack(host, "javascript")
    drifted = replace(js, imports_from_nodes=lambda nodes, source: ["elsewhere"])
    assert behaviour_problems(drifted, bare_host) == [
        "[pack:javascript] imports_from_nodes gave ['elsewhere'] on its sample but extract_imports gave ['fs'] — "
        "both must return the same names; build extract_imports on imports_from_nodes."
    ]


def test_imports_by_node_kind_hands_over_every_import_node_in_order_and_survives_a_bad_kind(host):
    from tree_sitter import Parser

    from cce_core.indexing.chunker import imports_by_node_kind

    python = installed_pack(host, "python")
    source = b"import zlib\nfrom os import path\ndef f():\n    import json\n"
    tree = Parser(python.grammar()).parse(source)
    seen: list[list[str]] = []

    def record(nodes, src):
        seen.append([n.type for n in nodes])
        return [src[n.start_byte : n.end_byte].decode() for n in nodes]

    extract = imports_by_node_kind(python.grammar, ("import_statement", "import_from_statement"), record)
    assert extract(tree.root_node, source) == ["import zlib", "from os import path", "import json"]
    assert seen == [["import_statement", "import_from_statement", "import_statement"]]
    broken = imports_by_node_kind(python.grammar, ("import_statment",), record)
    assert broken(tree.root_node, source) == []


def test_imports_by_pattern_hands_over_what_the_pattern_captures_in_order_and_survives_a_bad_pattern(host):
    from tree_sitter import Parser

    from cce_core.api import imports_by_pattern

    ruby = installed_pack(host, "ruby")
    source = b'require "a"\nputs "x"\nrequire_relative "b"\nloader.require "c"\n'
    tree = Parser(ruby.grammar()).parse(source)

    def texts(nodes, src):
        return [src[n.start_byte : n.end_byte].decode() for n in nodes]

    pattern = '(call (identifier) @_m (#any-of? @_m "require" "require_relative")) @import'
    extract = imports_by_pattern(ruby.grammar, pattern, texts)
    assert extract(tree.root_node, source) == ['require "a"', 'require_relative "b"', 'loader.require "c"']
    broken = imports_by_pattern(ruby.grammar, "(cal) @import", texts)
    assert broken(tree.root_node, source) == []
