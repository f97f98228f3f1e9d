"""How the indexing commands show a run: the progress bar and the summary lines they share.

Rendering only: the runs themselves (a project, a workspace, a watch pass, the
metrics event) are the indexing services in :mod:`cce_core.services`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from cce_core.indexing.indexer import IndexStats


class progress_bar:
    """A rich progress bar on a terminal; silence when output is piped."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Callable[[int, int], None] | None:
        if not sys.stdout.isatty():
            return None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TimeElapsedColumn(), transient=True)
        self._bar.__enter__()
        self._task = self._bar.add_task(self.label, total=None)

        def update(done: int, total: int) -> None:
            self._bar.update(self._task, completed=done, total=total)

        return update

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def skip_reason_line(stats: IndexStats) -> str | None:
    """``  skip reasons      : *.jsonl log 1 · not UTF-8 2`` — the counted skips by walker reason, or None."""
    from cce_core.indexing.walker import SkipReason

    parts = [f"{r.label} {stats.skip_counts[r.value]}" for r in SkipReason
             if r.tally in ("skipped", "walk_errors") and stats.skip_counts.get(r.value)]
    return f"  skip reasons      : {' · '.join(parts)}" if parts else None


def redaction_line(stats: IndexStats) -> str | None:
    """``  redacted          : 3 values (SECRET 2, AWS_ACCESS_KEY 1)`` — what the redactor replaced, or None.

    Counts cover the files read this run; files reused unchanged from the previous
    store were redacted when they were first indexed and are not re-read.
    """
    total = sum(stats.redactions.values())
    if not total:
        return None
    ordered = sorted(stats.redactions.items(), key=lambda kv: (-kv[1], kv[0]))
    by_label = ", ".join(f"{label} {n}" for label, n in ordered)
    noun = "value" if total == 1 else "values"
    reused = f" · in files read this run ({stats.reused_files} unchanged not re-read)" if stats.reused_files else ""
    return f"  redacted          : {total} {noun} ({by_label}){reused}"


def walk_error_warning(stats: IndexStats, member: str | None = None) -> str | None:
    """The stderr warning when directories could not be read (their files are missing from the store)."""
    if not stats.walk_errors:
        return None
    plural = "directory" if stats.walk_errors == 1 else "directories"
    scope = f" in member '{member}'" if member else ""
    return (f"warning: {stats.walk_errors} {plural}{scope} could not be read; files under them were NOT "
            "indexed — the index may be incomplete and may differ across machines")
