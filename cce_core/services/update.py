"""Update the installation: compare the installed cce distributions with the package index, then upgrade.

The comparison report is handed to the caller as soon as it exists (the user
reads it before pip runs); a check that compared nothing is an error, not a
guess of "up to date".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class UpdateOutcome:
    update_available: bool
    pip_status: int | None  # None: pip did not run (nothing newer, or only a check)


def update_installation(index_url: str | None, *, check_only: bool,
                        on_report: Callable[[str], None]) -> UpdateOutcome:
    from cce_core.maintenance.updates import check_updates, run_upgrade

    result = check_updates(index_url)
    nothing = result.nothing_checked()
    if nothing is not None:
        raise nothing  # no comparison happened
    on_report(result.render())
    if not result.update_available or check_only:
        return UpdateOutcome(result.update_available, None)
    return UpdateOutcome(True, run_upgrade(result))
