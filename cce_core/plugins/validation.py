"""The two checks a language pack can pass without chunking anything.

1. Structural lint: a name, lowercase dotted extensions, no extension claimed
   twice. Cheap; it runs every time a plugin host registers a pack.
2. Grammar binding: the grammar loads and every node kind the pack names
   exists in it (with "did you mean" suggestions by edit distance).

The third layer, behaviour (the pack chunks its own sample into what it
declares), needs the chunker and so lives above it, in
:mod:`cce_core.authoring.validate`. Every diagnostic names the pack, the
member, the problem and a fix.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from cce_core.hookspecs import PROJECT_NAME, CceHookSpecs, LanguagePack

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
    named = {
        language.node_kind_for_id(i)
        for i in range(language.node_kind_count)
        if language.node_kind_is_named(i) and language.node_kind_for_id(i)
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
    return out


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
