"""The full validation run behind `cce packs --validate` and `cce_core.api.validate_plugin`.

Layers 1 and 2 (structure, grammar binding) live with the plugin host in
:mod:`cce_core.plugins.validation`; layer 3, behaviour, chunks the pack's own
sample and so sits above the chunker. This module runs all three, and the
document chunkers' checks beside them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cce_core.hookspecs import LanguagePack
from cce_core.indexing.chunker import Chunker
from cce_core.plugins.host import PluginHost
from cce_core.plugins.validation import (
    document_behaviour_problems,
    document_chunker_problems,
    grammar_problems,
    structural_problems,
)
from cce_core.symbols.checks import symbol_problems


@dataclass
class PackReport:
    """One pack's verdict: ``ok`` when no layer found a problem."""

    name: str
    diagnostics: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.diagnostics


def behaviour_problems(pack: LanguagePack, host: PluginHost) -> list[str]:
    """Layer 3: the pack's sample chunks into what the pack declares."""
    label = f"[pack:{pack.name}]"
    chunker = Chunker(host)
    try:
        # The pack's own import extractor is under test here, not a plugin's override of it:
        # the required extract_imports (one_pass=False), then imports_from_nodes below.
        result = chunker.chunk_with_pack(pack, pack.sample_name, pack.sample, use_hooks=False, one_pass=False)
        one_pass = chunker.chunk_with_pack(pack, pack.sample_name, pack.sample, use_hooks=False)
    except Exception as exc:
        return [f"{label} chunking its sample raised {type(exc).__name__}: {exc}; check grammar() and the node kinds."]
    exp = pack.expected
    fns = sum(1 for c in result.chunks if c.chunk_type == "function")
    cls = sum(1 for c in result.chunks if c.chunk_type == "class")
    kinds = {c.kind for c in result.chunks}
    out: list[str] = []
    if fns < exp.min_functions:
        out.append(
            f"{label} produced {fns} function chunks from its sample, expected at least {exp.min_functions}; "
            f"function_types = {sorted(pack.function_types)} — add the node kind the sample's functions parse to."
        )
    if cls < exp.min_classes:
        out.append(
            f"{label} produced {cls} class chunks from its sample, expected at least {exp.min_classes}; "
            f"class_types = {sorted(pack.class_types)} — add the node kind the sample's classes parse to."
        )
    missing = [k for k in exp.kinds if k not in kinds]
    if missing:
        out.append(
            f"{label} sample produced no chunk of kind {', '.join(repr(k) for k in missing)}; "
            f"produced kinds {sorted(kinds)} — list that kind in function_types or class_types."
        )
    if list(result.imports) != list(exp.imports):
        out.append(
            f"{label} imports mismatch: extracted {list(result.imports)} but expected {list(exp.imports)} — "
            "return each module once, in first-seen order."
        )
    elif list(one_pass.imports) != list(result.imports):
        out.append(
            f"{label} imports_from_nodes gave {list(one_pass.imports)} on its sample but extract_imports gave "
            f"{list(result.imports)} — both must return the same names; build extract_imports on imports_from_nodes."
        )
    out.extend(symbol_problems(pack, host))  # the tags query compiles and finds the sample's definitions
    return out


def validate_pack(pack: LanguagePack, host: PluginHost) -> PackReport:
    report = PackReport(pack.name)
    report.diagnostics.extend(structural_problems(pack, []))
    report.diagnostics.extend(grammar_problems(pack))
    if report.ok:
        report.diagnostics.extend(behaviour_problems(pack, host))
    return report


def validate_all(host: PluginHost) -> tuple[list[str], list[PackReport]]:
    """Start-up problems (load failures, clashes, hooks that would never be called) and a report per pack."""
    return host.startup_problems() + host.advisory_problems(), [validate_pack(p, host) for p in host.packs.packs]


def validate_documents(host: PluginHost) -> list[PackReport]:
    """A report per registered document chunker: its structure, then its behaviour on its sample and odd input."""
    reports = []
    for chunker in host.document_chunkers.chunkers:
        report = PackReport(chunker.name)
        report.diagnostics.extend(document_chunker_problems(chunker, []))
        if report.ok:
            report.diagnostics.extend(document_behaviour_problems(chunker))
        reports.append(report)
    return reports


@dataclass
class PluginReport:
    """The verdict on one plugin: its hook names, its packs (all three layers) and its document chunkers."""

    name: str
    hook_problems: list[str] = field(default_factory=list)
    registration_problems: list[str] = field(default_factory=list)
    packs: list[PackReport] = field(default_factory=list)
    documents: list[PackReport] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[str]:
        return [*self.hook_problems, *self.registration_problems,
                *(d for pack in self.packs for d in pack.diagnostics),
                *(d for doc in self.documents for d in doc.diagnostics)]

    @property
    def ok(self) -> bool:
        return not self.diagnostics


def validate_plugin(plugin: Any, distribution: str = "") -> PluginReport:
    """Validate one plugin object (usually a pack's module) on its own, as a plugin's own tests do.

    Nothing installed is consulted: the plugin is registered on a fresh host,
    so a pack's tests pass or fail on the pack alone.
    """
    host = PluginHost([(plugin, distribution)], entry_points=False)
    return PluginReport(
        name=getattr(plugin, "__name__", None) or type(plugin).__name__,
        hook_problems=host.advisory_problems(),
        registration_problems=host.startup_problems(),
        packs=[validate_pack(pack, host) for pack in host.packs.packs],
        documents=validate_documents(host),
    )
