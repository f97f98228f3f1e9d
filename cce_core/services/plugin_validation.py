"""``cce packs --validate``' one call: every installed language pack and document chunker put through its validators.

The start-up problems (a plugin that did not load, two packs claiming one
extension, hooks nobody calls) come first, then one report per pack (all
three layers) and one per document chunker. Judging the outcome — how many
problems, which exit status — is the front-end's; the counting rule is here
so each front-end counts alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cce_core.authoring.validate import PackReport


@dataclass(frozen=True)
class PluginValidation:
    """Start-up problems, then a report per language pack and per document chunker."""

    startup_problems: list[str]
    packs: list[PackReport]
    document_chunkers: list[PackReport]

    @property
    def problem_count(self) -> int:
        """Start-up problems plus the packs and document chunkers that failed."""
        failed = sum(not report.ok for report in (*self.packs, *self.document_chunkers))
        return len(self.startup_problems) + failed


def validate_plugins() -> PluginValidation:
    """Discover every installed plugin and validate its packs and document chunkers."""
    from cce_core.authoring.validate import validate_all, validate_documents
    from cce_core.plugins.host import default_host

    host = default_host()
    startup, packs = validate_all(host)
    return PluginValidation(startup, packs, validate_documents(host))
