"""The two checks a language pack can pass without chunking anything.

1. Structural lint: a name, lowercase dotted extensions, no extension claimed
   twice. Cheap; it runs every time a plugin host registers a pack.
2. Grammar binding: the grammar loads and every node kind the pack names
   exists in it (with "did you mean" suggestions by edit distance).

The third layer, behaviour (the pack chunks its own sample into what it
declares), needs the chunker and so lives above it, in
:mod:`cce_core.authoring.validate`. Every diagnostic names the pack, the
member, the problem and a fix.

What a plugin's ``cce_file_conventions`` returns is checked the same cheap
way, when the host pools it (:func:`file_conventions_problems`).

Document chunkers get the same two kinds of check: a structural one at
registration (:func:`document_chunker_problems`), and a behavioural one that
needs nothing of the engine's chunker, since a document chunker cuts its own
sections (:func:`document_behaviour_problems`).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from cce_core.foundation.path_patterns import pattern_problem
from cce_core.hookspecs import (
    PROJECT_NAME,
    CceHookSpecs,
    DocumentChunker,
    DocumentSection,
    FileConventions,
    LanguagePack,
)

_PACK_NAME = re.compile(r"[a-z][a-z0-9_+-]*")


def structural_problems(pack: LanguagePack, registered: list[LanguagePack]) -> list[str]:
    """Layer 1 for one pack against the packs already registered."""
    label = f"[pack:{pack.name or '?'}]"
    out: list[str] = []
    if not pack.name or not pack.name.strip():
        out.append(f"{label} name is empty; give the pack a unique lowercase name.")
    elif pack.name != pack.name.lower():
        out.append(f'{label} name "{pack.name}" is not lowercase; use "{pack.name.lower()}".')
    elif not _PACK_NAME.fullmatch(pack.name):
        # The name is joined with commas into pack_set_id, which other engines compare byte for byte.
        out.append(f'{label} name "{pack.name}" may hold only a-z, 0-9, "_", "-" and "+", starting with a letter; '
                   "it becomes part of pack_set_id.")
    if not pack.extensions:
        out.append(f'{label} extensions is empty; claim at least one extension such as ".{pack.name or "ext"}".')
    for ext in pack.extensions:
        if not ext.startswith(".") or len(ext) < 2 or ext != ext.lower():
            fixed = "." + ext.lstrip(".").lower()
            out.append(f'{label} extension "{ext}" must be a lowercase string with a leading dot; use "{fixed}".')
        elif "." in ext[1:] or any(ch in ext for ch in "/\\") or ext != ext.strip():
            # A file is matched by its final extension only, so ".d.ts" could never match anything.
            last = "." + ext.rsplit(".", 1)[-1].strip()
            out.append(f'{label} extension "{ext}" can never match: files are matched by their final extension '
                       f'alone; use "{last}".')
    if len(set(pack.extensions)) != len(pack.extensions):
        out.append(f"{label} extensions lists the same extension twice; list each once.")
    if not callable(pack.grammar) or not callable(pack.extract_imports):
        out.append(f"{label} grammar and extract_imports must be callables; see docs/adding-a-language.md.")
    if pack.imports_from_nodes is not None and not callable(pack.imports_from_nodes):
        # Called inside the chunker's never-fail import guard, a non-callable would
        # silently leave every file without imports; catch it here instead.
        out.append(f"{label} imports_from_nodes must be a callable or None; see docs/adding-a-language.md.")
    if not isinstance(pack.import_pattern, str):
        out.append(f"{label} import_pattern must be a string (a tree-sitter query capturing @import), or empty.")
    elif pack.import_pattern.strip() and pack.imports_from_nodes is None:
        out.append(f"{label} import_pattern is set but imports_from_nodes is None, so nothing reads what it "
                   "captures; write imports_from_nodes, or leave import_pattern empty.")
    for other in registered:
        if other.name == pack.name:
            owner = other.distribution or "?"
            out.append(f'{label} name is already registered by distribution "{owner}"; each pack name must be unique.')
        for ext in pack.extensions:
            if ext in other.extensions:
                dists = " and ".join(dict.fromkeys(d for d in (other.distribution, pack.distribution) if d))
                which = f" (installed by {dists}; uninstall one)" if dists else ""
                out.append(
                    f'{label} extension "{ext}" already claimed by pack "{other.name}"; '
                    f"each extension maps to exactly one pack.{which}"
                )
    return out


def file_conventions_problems(answer: object, label: str) -> list[str]:
    """What is wrong with one ``cce_file_conventions`` answer (``None`` declares nothing and is fine)."""
    if answer is None:
        return []
    if not isinstance(answer, FileConventions):
        return [f"{label} cce_file_conventions returned {type(answer).__name__}, not a FileConventions; "
                "return FileConventions(tests=(...), generated=(...)) from cce_core.api, or None."]
    out: list[str] = []
    for member in ("tests", "generated"):
        patterns = getattr(answer, member)
        if not isinstance(patterns, tuple):
            out.append(f"{label} FileConventions.{member} is a {type(patterns).__name__}; give a tuple of patterns.")
            continue
        for pattern in patterns:
            problem = pattern_problem(pattern)
            if problem is not None:
                out.append(f"{label} FileConventions.{member}: {problem} (see FileConventions in docs/plugins.md).")
    return out


def edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def suggestions(wrong: str, kinds: set[str], limit: int = 3) -> list[str]:
    """The nearest real node kinds, only those close enough to be a likely typo."""
    reach = len(wrong) // 3 + 2
    scored = sorted((edit_distance(wrong, k), k) for k in kinds)
    return [k for d, k in scored if d <= reach][:limit]


def grammar_problems(pack: LanguagePack) -> list[str]:
    """Layer 2: the grammar loads and knows every node kind the pack names."""
    label = f"[pack:{pack.name}]"
    grammar_name = pack.grammar_distribution or f"the {pack.name} grammar"
    try:
        language = pack.grammar()
    except Exception as exc:
        return [f'{label} grammar failed to load ({type(exc).__name__}: {exc}) — '
                f'install "{grammar_name}" at the pinned version.']
    named: set[str] = {
        kind
        for i in range(language.node_kind_count)
        if language.node_kind_is_named(i) and (kind := language.node_kind_for_id(i))
    }
    out: list[str] = []
    members = ("function_types", "class_types", "import_node_types", "body_node_types", "doc_node_types",
               "member_node_types")
    for member in members:
        for kind in getattr(pack, member):
            if kind not in named:
                near = suggestions(kind, named)
                hint = " Did you mean: " + ", ".join(f'"{s}"' for s in near) + "?" if near else ""
                out.append(f'{label} {member}: "{kind}" is not a node kind in {grammar_name}.{hint}')
    out.extend(_import_pattern_problems(pack, language, label, grammar_name))
    return out


def _import_pattern_problems(pack: LanguagePack, language: Any, label: str, grammar_name: str) -> list[str]:
    """The pack's ``import_pattern`` compiles against its grammar and captures ``@import``."""
    pattern = pack.import_pattern.strip() if isinstance(pack.import_pattern, str) else ""
    if not pattern:
        return []
    from tree_sitter import Query

    try:
        query = Query(language, pattern)
    except Exception as exc:
        return [f"{label} import_pattern does not compile against {grammar_name} ({type(exc).__name__}: {exc}); "
                "the chunker would fall back to extract_imports in a second walk of every file."]
    if "import" not in {query.capture_name(i) for i in range(query.capture_count)}:
        return [f"{label} import_pattern captures no @import node; end the pattern with @import."]
    return []


def hook_name_problems(plugin: Any, label: str) -> list[str]:
    """Hook implementations the engine would silently never call: a misspelled name, or a missing marker.

    pluggy registers a ``@hookimpl`` function under whatever name it has, and
    ignores an unmarked one, so ``cce_register_pack`` (no ``s``) or a
    ``cce_register_packs`` without ``@hookimpl`` would leave a plugin doing
    nothing with no word said. Any public ``cce_*`` callable of the plugin is
    checked against the hook specifications.
    """
    known = hook_names()
    marker = f"{PROJECT_NAME}_impl"
    out: list[str] = []
    for name in sorted(dir(plugin)):
        value = getattr(plugin, name, None)
        # pluggy registers a marked function under whatever attribute name holds it, so a marked
        # function stored as ``_helper`` is a hook named ``_helper`` too.
        marked = callable(value) and hasattr(value, marker)
        if not (marked or (name.startswith("cce_") and callable(value))):
            continue
        if name not in known:
            near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
            hint = f' — did you mean "{near[0]}"?' if near else f" — the hooks are: {', '.join(sorted(known))}"
            out.append(f'plugin "{label}" implements unknown hook "{name}"{hint}')
        elif not marked:
            out.append(f'plugin "{label}" defines {name} without @hookimpl, so it is never called — '
                       "decorate it with cce_core.api.hookimpl")
    return out


def hook_names() -> frozenset[str]:
    """The names of every hook in the contract."""
    return frozenset(n for n in vars(CceHookSpecs) if n.startswith("cce_"))


def document_chunker_problems(chunker: object, registered: list[DocumentChunker]) -> list[str]:
    """The registration check of one document chunker against the chunkers already registered."""
    if not isinstance(chunker, DocumentChunker):
        kind = f"{type(chunker).__module__}.{type(chunker).__qualname__}"
        return [f"[document:?] {kind} does not subclass cce_core.api.DocumentChunker; register an instance of a "
                "DocumentChunker subclass."]
    name = chunker.name if isinstance(chunker.name, str) else ""
    label = f"[document:{name or '?'}]"
    out: list[str] = []
    if not name.strip():
        out.append(f"{label} name is empty; give the document chunker a unique lowercase name.")
    elif not _PACK_NAME.fullmatch(name):
        out.append(f'{label} name "{name}" may hold only a-z, 0-9, "_", "-" and "+", starting with a lowercase '
                   "letter.")
    formats = chunker.formats
    if not isinstance(formats, tuple) or not formats:
        out.append(f'{label} formats must be a non-empty tuple of format names, e.g. ("{name or "markdown"}",).')
        formats = ()
    for fmt in formats:
        if not isinstance(fmt, str) or not _PACK_NAME.fullmatch(fmt):
            out.append(f'{label} format {fmt!r} may hold only a-z, 0-9, "_", "-" and "+", starting with a lowercase '
                       "letter; it names the distribution to install (cce-pack-FORMAT).")
    if len(set(formats)) != len(formats):
        out.append(f"{label} formats lists the same format twice; list each once.")
    extensions = chunker.extensions
    if not isinstance(extensions, tuple):
        out.append(f'{label} extensions must be a tuple of extensions such as ".md".')
        extensions = ()
    for ext in extensions:
        if not isinstance(ext, str) or not ext.startswith(".") or len(ext) < 2 or ext != ext.lower() \
                or "." in ext[1:] or any(ch in ext for ch in "/\\") or ext != ext.strip():
            out.append(f"{label} extension {ext!r} must be a lowercase final extension with a leading dot, "
                       'e.g. ".md".')
    if len(set(extensions)) != len(extensions):
        out.append(f"{label} extensions lists the same extension twice; list each once.")
    if not callable(getattr(chunker, "chunk_document", None)):
        out.append(f"{label} chunk_document must be a method; see docs/plugins.md.")
    for other in registered:
        owner = other.distribution or "?"
        if other.name == name:
            out.append(f'{label} name is already registered by distribution "{owner}"; each document chunker '
                       "name must be unique.")
        for fmt in formats:
            if fmt in other.formats:
                out.append(f'{label} format "{fmt}" already claimed by document chunker "{other.name}" '
                           f'(distribution "{owner}"); each format maps to exactly one chunker — uninstall one.')
        for ext in extensions:
            if ext in other.extensions:
                out.append(f'{label} extension "{ext}" already claimed by document chunker "{other.name}" '
                           f'(distribution "{owner}"); uninstall one.')
    return out


# Texts no document chunker may choke on: empty, blank, binary noise, a lone
# line without a newline, CRLF, non-ASCII, and nesting past any parser's depth.
DOCUMENT_ODD_INPUTS: tuple[str, ...] = (
    "",
    "   \n\n\t\n",
    "\x00\x01\x02\ufffd\x7f",
    "no newline at the end",
    "line one\r\nline two\r\n",
    "caf\u00e9 \u4f60\u597d \U0001f600\n",
    ">" * 300 + " deep\n",
    "".join("  " * i + "- item\n" for i in range(300)),
)


def _section_problems(label: str, what: str, sections: object) -> list[str]:
    if not isinstance(sections, list):
        return [f"{label} chunk_document returned {type(sections).__name__} for {what}; return a list of "
                "DocumentSection."]
    out: list[str] = []
    for section in sections:
        if not isinstance(section, DocumentSection):
            out.append(f"{label} chunk_document returned a {type(section).__name__} for {what}; return "
                       "cce_core.api.DocumentSection records.")
            break
        if section.start_line < 1 or section.end_line < section.start_line:
            out.append(f"{label} section {section.chunk_id} of {what} spans lines {section.start_line}-"
                       f"{section.end_line}; lines are 1-based and end_line >= start_line.")
        if not section.content:
            out.append(f"{label} section {section.chunk_id} of {what} is empty; leave empty sections out.")
        if not re.fullmatch(r"[0-9a-f]{16}", section.chunk_id):
            out.append(f"{label} chunk_id {section.chunk_id!r} of {what} is not 16 lowercase hex digits.")
    return out


def document_behaviour_problems(chunker: DocumentChunker, budget: int = 400) -> list[str]:
    """The chunker on its own sample (when it has one) and on :data:`DOCUMENT_ODD_INPUTS`.

    Every call must return well-formed :class:`DocumentSection` records, raise
    nothing, and give the same answer twice; the sample must give at least one
    section.
    """
    label = f"[document:{chunker.name or '?'}]"
    cases = [("its sample", chunker.sample)] if chunker.sample else []
    cases += [(f"odd input #{i}", text) for i, text in enumerate(DOCUMENT_ODD_INPUTS)]
    out: list[str] = []
    for what, text in cases:
        try:
            first = chunker.chunk_document("sample", text, budget)
            again = chunker.chunk_document("sample", text, budget)
        except Exception as exc:  # third-party code under test
            out.append(f"{label} chunk_document raised {type(exc).__name__}: {exc} on {what}; it must never raise.")
            continue
        problems = _section_problems(label, what, first)
        out += problems
        if not problems and first != again:
            out.append(f"{label} chunk_document gave two different answers for {what}; it must be deterministic.")
        if what == "its sample" and not problems and not first:
            out.append(f"{label} its sample gave no section; ship a sample with at least one section.")
    return out
