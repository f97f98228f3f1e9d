"""cce-pack-c alone: the engine's self-test of a pack, then the rules that are C's own."""

from __future__ import annotations

import cce_pack_c
import pytest

from cce_core.api import chunk_with, imports_with, pack_self_test

PACK = cce_pack_c.PACK


def test_the_pack_passes_its_self_test() -> None:
    assert pack_self_test(cce_pack_c, "c") == []


def test_the_pack_claims_its_extensions_grammar_and_sample() -> None:
    assert PACK.extensions == (".c", ".h")
    assert (PACK.grammar_distribution, PACK.sample_name) == ("tree-sitter-c", "c.c")


def test_sample_chunks_in_document_order() -> None:
    chunks = chunk_with(cce_pack_c, PACK.sample_name, PACK.sample).chunks
    assert [(c.language, c.kind, c.chunk_type) for c in chunks] == [
        ("c", "struct_specifier", "class"),
        ("c", "function_definition", "function"),
        ("c", "struct_specifier", "class"),
    ]


# The header's file stem, from either include form; an include through a macro names nothing.
@pytest.mark.parametrize(("path", "text", "expected"), [
    ("a.c", '#include "dir/store.h"\n', ["store"]),
    ("a.h", "#include <stdlib.h>\n#include <sys/types.h>\n#include CONFIG_H\n#include <stdlib.h>\n",
     ["stdlib", "types"]),
    ("a.c", '#ifdef X\n#include "cond.h"\n#endif\n', ["cond"]),
])
def test_import_rule(path: str, text: str, expected: list[str]) -> None:
    assert imports_with(cce_pack_c, path, text) == expected
