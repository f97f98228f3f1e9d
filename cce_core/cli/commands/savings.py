"""``cce savings``: the seven-layer token-savings ledger summed from the metrics log.

Every figure is an estimate against a full-file baseline, never the agent's
real end-to-end cost, and the output says so; the dollar figure uses the
embedded offline price table (:mod:`cce_core.observability.pricing`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from cce_core.cli.commands import write_utf8

if TYPE_CHECKING:
    from cce_core.observability.savings import SavingsReport

_ROW = "  {:<26}{:>14}{:>18}"


def register(app: Any) -> None:
    app.command(name="savings")(savings)


def _join(base: str, name: str) -> str:
    """``base/name`` the way the reference joins paths: no normalisation, no doubled separator."""
    if name.startswith("/") or not base:
        return name
    return base + name if base.endswith("/") else f"{base}/{name}"


def _parent(path: str) -> str | None:
    """The parent of ``path`` as the reference computes it (``None`` for a bare file name)."""
    trimmed = path.rstrip("/")
    if not trimmed:
        return None  # "/" has no parent
    cut = trimmed.rfind("/")
    if cut < 0:
        return "" if trimmed not in (".", "..") else None
    head = trimmed[:cut].rstrip("/")
    return head if head else "/"


def metrics_source(metrics: str | None, store: str | None, dir_: str | None) -> str:
    """The log path, spelled as the reference prints it: ``--metrics``, beside ``--store``, else ``DIR/.cce``."""
    if metrics is not None:
        return metrics
    if store is None:
        store = _join(_join(dir_ if dir_ is not None else ".", ".cce"), "index.json")
    parent = _parent(store)
    return _join(parent, "metrics.jsonl") if parent else "metrics.jsonl"


def render_text(ledger: dict[str, Any], source: str, table_id: str, dollars: float) -> str:
    from cce_core.observability.pricing import PRICING_DISPLAY_PATH
    from cce_core.observability.savings import BUCKET_NAMES, SAVINGS_NOTE

    lines = [
        f"CCE savings ledger  ({SAVINGS_NOTE})",
        f"  source : {source}",
        f"  pricing: {table_id}  (offline, embedded; edit {PRICING_DISPLAY_PATH} to change)",
        "",
        _ROW.format("layer", "saved_tokens", "baseline_tokens"),
    ]
    for name in BUCKET_NAMES:
        b = ledger[name]
        lines.append(_ROW.format(name, b["saved_tokens"], b["baseline_tokens"]))
    lines.append("  " + "-" * 56)
    total = ledger["total"]
    lines.append(_ROW.format("total", total["saved_tokens"], total["baseline_tokens"]))
    lines += [
        "",
        f"  estimated $ saved: ${dollars:.2f}  (default-model input rate)",
        "",
        '  This is the internal "vs full-file" figure, NOT your real agent cost.',
        "  For the real end-to-end delta, run the A/B eval harness: see eval/README.md.",
    ]
    return "\n".join(lines) + "\n"


def render_json(report: SavingsReport, source: str) -> str:
    from cce_core.observability.savings import savings_json
    from cce_core.observability.usage import dumps_pretty

    return dumps_pretty(savings_json(report, source)) + "\n"


def savings(
    directory: Annotated[str | None, typer.Argument(metavar="[DIR]", help="Project directory (same as --dir).")]
    = None,
    dir_: Annotated[str | None, typer.Option("--dir", help="Project directory (default: .).")] = None,
    store: Annotated[str | None, typer.Option(help="Read the metrics log next to this store file.")] = None,
    metrics: Annotated[str | None, typer.Option(help="Read this metrics.jsonl (overrides --store/--dir).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ledger as JSON (sorted keys).")] = False,
) -> None:
    """Print the seven-layer savings ledger, its totals and an offline $ estimate (vs full-file baseline)."""
    from pathlib import Path

    from cce_core.cli.shared import require_dir
    from cce_core.services.metrics_logs import savings_of_log

    dir_ = dir_ if dir_ is not None else directory
    if dir_ is not None and metrics is None and store is None:
        require_dir(Path(dir_))  # the log is read from DIR/.cce: a typo is named, not read as an empty log
    source = metrics_source(metrics, store, dir_)
    report = savings_of_log(Path(source))
    if as_json:
        text = render_json(report, source)
    else:
        text = render_text(report.ledger, source, report.pricing_id, report.dollars_saved)
    write_utf8(text)
