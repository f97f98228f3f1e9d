"""The files of a generated pack, rendered from the templates and the scaffold's guesses and measurements.

Everything ``cce packs new`` writes is decided here, as bytes per relative
path: ``pyproject.toml``, ``README.md`` (what was guessed, from where, and what
to review), the package's ``__init__.py`` with the guessed node kinds as
Python literals in the house style, ``py.typed``, the sample and the pack's
test. Writing them to disk is the caller's job.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from cce_core.authoring.grammar_source import TAGS_QUERY, Grammar
from cce_core.authoring.kind_guesses import KindGuess
from cce_core.authoring.pack_sample import Measured
from cce_core.authoring.pack_templates import fill_template, template_text


def _py_str(text: str) -> str:
    # JSON string escapes are valid Python escapes, and double quotes match the house style.
    return json.dumps(text)


def py_tuple(items: Sequence[str], indent: int = 0, width: int = 120, prefix: int = 0) -> str:
    """A Python tuple literal of strings that fits ``width`` (one item per line when it does not)."""
    if not items:
        return "()"
    quoted = [_py_str(i) for i in items]
    one_line = "(" + ", ".join(quoted) + ("," if len(quoted) == 1 else "") + ")"
    if indent + prefix + len(one_line) + 1 <= width:
        return one_line
    pad = " " * (indent + 4)
    return "(\n" + "".join(f"{pad}{q},\n" for q in quoted) + " " * indent + ")"


def _grammar_imports(module_name: str) -> str:
    # Sorted as isort would: both are third-party straight imports.
    names = sorted({"tree_sitter", module_name}, key=str.lower)
    return "\n".join(f"        import {n}" for n in names)


@dataclass(frozen=True)
class PackPlan:
    """Everything the rendered files say: the pack's names, its grammar, the guesses, the sample and its measure."""

    name: str
    module: str
    grammar: Grammar
    extensions: tuple[str, ...]
    guesses: dict[str, KindGuess]
    sample_raw: bytes
    sample_file: str
    sample_name: str
    sample_origin: str
    sample_empty: bool
    measured: Measured
    tree_sitter_version: str


def _render_init(plan: PackPlan) -> str:
    g = plan.guesses
    import_kinds = g["import_node_types"].kinds
    api = ["FileConventions", "LanguagePack", "PackExpected", "hookimpl", "structural_renderer", "tags_query_extension"]
    if import_kinds:
        api[4:4] = ["imports_by_node_kind", "node_text"]  # the template reads node text through the contract
        imports_code = ("\n" + template_text("imports_from_nodes.py.tmpl") + "\n\n"
                        "extract_imports = imports_by_node_kind(grammar, IMPORT_KINDS, imports_from_nodes)\n")
        imports_doc = ("Imports: for each import node, the text of its path/source/module/name child (else its first "
                       "named child), quotes stripped, each once. A generic rule — review it.")
    else:
        imports_code = "\n" + template_text("no_imports.py.tmpl")
        imports_doc = "Imports: no node kind of the grammar looked like an import, so none are extracted yet."
    m = plan.measured
    return fill_template(
        "__init__.py.tmpl",
        name=plan.name,
        distribution=plan.grammar.distribution,
        distribution_version=plan.grammar.version,
        grammar_module=plan.grammar.module_name,
        language_function=plan.grammar.language_function,
        about=_docstring_about(plan, imports_doc),
        # One line while "from cce_core.api import ..." fits in 120 columns, else one name a line (ruff's style).
        api_names=", ".join(api) if len(", ".join(api)) <= 95 else "(\n    " + ",\n    ".join(api) + ",\n)",
        grammar_imports=_grammar_imports(plan.grammar.module_name),
        function_types=py_tuple(g["function_types"].kinds, prefix=len("FUNCTION_TYPES = ")),
        class_types=py_tuple(g["class_types"].kinds, prefix=len("CLASS_TYPES = ")),
        import_kinds=py_tuple(import_kinds, prefix=len("IMPORT_KINDS = ")),
        imports_code=imports_code,
        extensions=py_tuple(plan.extensions, indent=4, prefix=len("extensions=")),
        imports_from_nodes_arg="imports_from_nodes" if import_kinds else "None",
        sample_file=plan.sample_file,
        sample_name=plan.sample_name,
        empty_sample_note=" (the sample is EMPTY: replace it, then re-measure)" if plan.sample_empty else "",
        min_functions=m.functions,
        min_classes=m.classes,
        expected_kinds=py_tuple(m.kinds, indent=8, prefix=len("kinds=")),
        expected_imports=py_tuple(m.imports, indent=8, prefix=len("imports=")),
        body_types=py_tuple(g["body_node_types"].kinds, indent=4, prefix=len("body_node_types=")),
        doc_types=py_tuple(g["doc_node_types"].kinds, indent=4, prefix=len("doc_node_types=")),
    )


def _docstring_about(plan: PackPlan, imports_doc: str) -> str:
    """The generated module docstring's body: provenance, then one wrapped bullet per guessed member."""
    intro = (f"Generated by ``cce packs new {plan.name} --grammar {plan.grammar.distribution}`` against "
             f"{plan.grammar.distribution} {plan.grammar.version} (``{plan.grammar.module_name}."
             f"{plan.grammar.language_function}()``). The node kinds below are guesses; README.md lists what "
             "to review before publishing.")
    paragraphs = [textwrap.fill(intro, width=100)]
    bullets = []
    for guess in plan.guesses.values():
        kinds = ", ".join(guess.kinds) or "(none)"
        bullets.append(textwrap.fill(f"* {guess.member}: {kinds} — {guess.origin}", width=100,
                                     subsequent_indent="  ", break_on_hyphens=False))
    paragraphs.append("\n".join(bullets))
    paragraphs.append(textwrap.fill(imports_doc, width=100))
    return "\n\n".join(paragraphs)


def _md_kinds(kinds: Sequence[str]) -> str:
    return ", ".join(f"`{k}`" for k in kinds) if kinds else "(none)"


def _render_readme(plan: PackPlan) -> str:
    g = plan.guesses
    m = plan.measured
    rows = []
    for guess in g.values():
        if guess.from_tags and guess.from_heuristic:
            where = f"{_md_kinds(guess.from_tags)} from `{TAGS_QUERY}`; {_md_kinds(guess.from_heuristic)} by name"
        elif guess.from_tags:
            where = f"the grammar's `{TAGS_QUERY}`"
        elif guess.from_heuristic:
            where = "name heuristic (the shape of the kind's name)"
        else:
            where = "nothing matched — fill it in by hand if the language has them"
        rows.append(f"| `{guess.member}` | {_md_kinds(guess.kinds)} | {where} |")
    review = [
        "- `FUNCTION_TYPES` / `CLASS_TYPES`: every named node of these kinds becomes a chunk. Parse real "
        "files (`python -c \"import tree_sitter, ...\"` or the tree-sitter playground) and add or drop kinds; an "
        "expression kind (an anonymous function) makes every such expression a chunk.",
        "- Imports — **review this**: " + (
            "the generic `imports_from_nodes` takes each import node's path/source/module/name child (else its "
            "first named child) with quotes stripped. Rewrite it to return the module names the way the "
            "language spells them."
            if g["import_node_types"].kinds else
            "no import node kind was recognised, so `extract_imports` returns nothing. If the language has "
            "imports, list their node kinds in `IMPORT_KINDS` and write `imports_from_nodes`."),
        "- `body_node_types` / `doc_node_types` drive the compact view (signature plus first body line).",
    ]
    rejected = [k for guess in g.values() for k in guess.tags_rejected]
    if rejected:
        review.append(f"- `{TAGS_QUERY}` also marks {_md_kinds(rejected)} as definitions; they were left out "
                      "because they do not look like function or class definitions.")
    if plan.sample_empty:
        origin = plan.sample_origin[:1].upper() + plan.sample_origin[1:]
        sample_section = (
            f"**The sample `cce_pack_{plan.name}/{plan.sample_file}` is EMPTY and must be replaced.** "
            f"{origin}. Put a small, real {plan.name} file there (a few functions, a class-like "
            "definition if the language has one, an import), measure what it produces, update `PACK.expected`, "
            f"and set `SAMPLE_IS_EMPTY = False` in `tests/test_pack_{plan.name}.py`."
        )
        warning = ("> **WARNING: the sample is empty**, so the pack's self-test checks nothing. "
                   "Replace the sample before publishing (see *The sample*).\n\n")
    else:
        sample_section = (f"`cce_pack_{plan.name}/{plan.sample_file}` — {plan.sample_origin}. Make sure it is "
                          "code you may redistribute, or replace it.")
        warning = ""
    expected = (f"min_functions={m.functions}, min_classes={m.classes}, kinds={_md_kinds(m.kinds)}, "
                f"imports={_md_kinds(m.imports)}" + (" (imports: review this)" if g["import_node_types"].kinds else ""))
    return fill_template(
        "README.md.tmpl",
        name=plan.name,
        empty_warning_block=warning,
        extensions_text="`, `".join(plan.extensions),
        distribution=plan.grammar.distribution,
        distribution_version=plan.grammar.version,
        grammar_module=plan.grammar.module_name,
        language_function=plan.grammar.language_function,
        guess_table="\n".join(rows),
        review_list="\n".join(review),
        sample_section=sample_section,
        expected_text=expected,
    )


def render_pack_files(plan: PackPlan) -> dict[str, bytes]:
    """Relative path → bytes of every file of the pack's distribution."""
    pyproject = fill_template(
        "pyproject.toml.tmpl",
        name=plan.name,
        distribution=plan.grammar.distribution,
        distribution_version=plan.grammar.version,
        tree_sitter_version=plan.tree_sitter_version,
        sample_file=plan.sample_file,
    )
    tests = fill_template(
        "test_pack.py.tmpl",
        name=plan.name,
        sample_file=plan.sample_file,
        sample_is_empty=plan.sample_empty,
        extensions=py_tuple(plan.extensions, indent=4, prefix=len("assert pack.extensions == ")),
    )
    return {
        "pyproject.toml": pyproject.encode("utf-8"),
        "README.md": _render_readme(plan).encode("utf-8"),
        f"{plan.module}/__init__.py": _render_init(plan).encode("utf-8"),
        f"{plan.module}/py.typed": b"",
        f"{plan.module}/{plan.sample_file}": plan.sample_raw,
        f"tests/test_pack_{plan.name}.py": tests.encode("utf-8"),
    }
