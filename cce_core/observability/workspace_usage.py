"""Which metrics logs a workspace's numbers come from, and how they combine.

``cce dashboard --workspace`` and ``cce usage --workspace`` both report over
the same set of logs, so the rule lives here once:

* every member's own log, ``<member dir>/.cce/metrics.jsonl``, in manifest
  order — these count in the roll-up and each one is also its member's
  ``by_package`` row;
* the workspace-root log, ``<root>/.cce/metrics.jsonl``, where searches that
  span members (the agent's ``cce mcp --workspace``) are recorded — it counts
  in the roll-up (totals, ``by_source``, recent searches) but belongs to no
  single package, so it never feeds ``by_package``. When a member *is* the
  root (path ``.``) that log is already a member log and is read only once.

Reading is fail-open like every metrics reader: a missing or unreadable log is
an empty one. The manifest is not: no manifest or a broken one is the
workspace module's error.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_core.observability.metrics import METRICS_FILE, STORE_DIR, Event, MetricsLog, read_log


@dataclass(frozen=True)
class MemberLog:
    """One member's metrics log: the member's name and package, and where its log lives."""

    name: str
    package: str
    metrics_path: Path  # <member>/.cce/metrics.jsonl


@dataclass(frozen=True)
class WorkspaceLogs:
    """The members' logs and the root log of one workspace."""

    root: Path
    members: tuple[MemberLog, ...]
    root_log: Path

    @property
    def root_is_member(self) -> bool:
        """True when some member's log is the root log itself (a member at path ``.``)."""
        target = _same_path_key(self.root_log)
        return any(_same_path_key(m.metrics_path) == target for m in self.members)

    def read(self) -> WorkspaceRead:
        member_logs = [read_log(m.metrics_path) for m in self.members]
        root = None if self.root_is_member else read_log(self.root_log)
        return WorkspaceRead(self, member_logs, root)


@dataclass(frozen=True)
class WorkspaceRead:
    """One snapshot of every log of a workspace, read together."""

    logs: WorkspaceLogs
    member_logs: list[MetricsLog]
    root_log: MetricsLog | None  # None when a member already owns the root log

    def _all(self) -> list[MetricsLog]:
        return self.member_logs + ([self.root_log] if self.root_log is not None else [])

    @property
    def events(self) -> int:
        return sum(len(log.events) for log in self._all())

    @property
    def skipped(self) -> int:
        return sum(int(log.skipped) for log in self._all())

    def rollup_events(self) -> list[Event]:
        """Member events in manifest order, then the root log's."""
        out: list[Event] = []
        for log in self._all():
            out.extend(log.events)
        return out

    def package_events(self) -> list[tuple[str, list[Event]]]:
        return [(m.package, list(log.events)) for m, log in zip(self.logs.members, self.member_logs, strict=True)]


def _same_path_key(path: Path) -> str:
    # Component equality: "root/./.cce/metrics.jsonl" and "root/.cce/metrics.jsonl" are one file.
    return os.path.normpath(os.path.abspath(path))


def workspace_logs(root: Path) -> WorkspaceLogs:
    """The logs of the workspace at ``root`` (raises the workspace module's errors for a bad manifest)."""
    from cce_core.workspace.manifest import load_manifest

    manifest = load_manifest(root)
    members = tuple(MemberLog(m.name, m.package, Path(root) / m.path / STORE_DIR / METRICS_FILE)
                    for m in manifest.members)
    return WorkspaceLogs(Path(root), members, Path(root) / STORE_DIR / METRICS_FILE)


def workspace_aggregate(snapshot: WorkspaceRead, now_secs: int, price: float,
                        keep: Any = None) -> dict[str, Any]:
    """The roll-up aggregate plus ``by_package`` for one snapshot.

    ``keep`` (optional) filters a list of events before aggregation — ``cce
    usage --since`` — and is applied to the roll-up and to every member alike.
    """
    from cce_core.observability.aggregate import aggregate

    def window(events: Sequence[Event]) -> list[Event]:
        return list(events) if keep is None else keep(events)

    packages = [(name, window(evs)) for name, evs in snapshot.package_events()]
    return aggregate(window(snapshot.rollup_events()), now_secs, price, packages=packages)
