"""``cce usage``: who searched, how often, and what it saved, over a time window.

This module adds no accounting of its own. It takes the events of a metrics
log, drops the ones older than the ``--since`` cutoff, hands the rest to
:func:`cce_core.observability.aggregate` (the same numbers the dashboard shows)
and re-shapes that result into one of two fixed outputs:

* a human block, laid out to the byte::

    CCE usage — all time
      agent (mcp) : 2 searches · saved ~16,500 tok (88%) · quality 0.79 · 58 ms avg
      human (cli) : 1 searches · saved ~ 2,100 tok (81%) · quality 0.74 · 12 ms avg
      recent (newest first)
        mcp  09:58  "how does the payment flow create a new case"  5 hits  ~8.6k saved

* a ``cce.usage/v1`` JSON object whose top-level keys keep a fixed order and
  whose ``by_source`` block is the aggregate's, keys sorted.

``--workspace`` reads a whole workspace instead (every member's log plus the
workspace-root log, see :mod:`cce_core.observability.workspace_usage`): the human block
gains ``  by package`` rows between the split and the recent queries, and the
JSON a ``by_package`` list (members only, keys sorted) before ``recent``.

Nothing here reads the clock: every function takes ``now_secs`` from the
caller, so the same log and the same ``now`` always give the same bytes.

``--since`` takes a relative span (``<digits><m|h|d|w>``, any case, greater
than zero; ``w`` is seven days) counted back from ``now``, an ISO UTC instant
(``2026-07-01T09:00:00Z``) or a bare date (midnight UTC). ``--source``
(``mcp``, ``cli`` or ``all``, any case) only changes which split lines and
recent rows the human block shows; ``cli`` means every source that is not
``mcp``. The JSON always carries both splits and the whole recent list.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cce_core.foundation.errors import CceError
from cce_core.foundation.textrules import UNICODE_WHITESPACE, round_half_away
from cce_core.observability.metrics import Event, dumps_json, format_iso, parse_iso

SCHEMA = "cce.usage/v1"
DEFAULT_PRICE = 3.00
RECENT_HUMAN_LIMIT = 10
QUERY_MAX_CHARS = 44
SOURCES = ("all", "mcp", "cli")

_UNIT_SECONDS = {"m": 60, "h": 3_600, "d": 86_400, "w": 7 * 86_400}
_I64_MAX = (1 << 63) - 1
_U64_LIMIT = 1 << 64
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


# --------------------------------------------------------------------------- flags


@dataclass(frozen=True)
class SinceCut:
    """The start of the window: events with ``ts < cutoff_secs`` are left out.

    ``relative`` is the lowercased span (``"24h"``) when one was given; the
    header then reads ``last 24h (since …)`` instead of ``since …``.
    """

    cutoff_secs: int
    relative: str | None = None

    @property
    def cutoff_iso(self) -> str:
        return format_iso(self.cutoff_secs)


def _since_error(spec: str) -> CceError:
    return CceError(f"invalid --since value {debug_quote(spec)} — use a relative duration (90m, 24h, 7d, 4w) "
                    f"or an ISO UTC instant/date (2026-07-01T09:00:00Z, 2026-07-01)")


_TZ_SUFFIX = re.compile(r"(?:[Zz]|([+-])([0-9]{2})(?::?([0-9]{2}))?)?")


def parse_instant(text: str) -> int | None:
    """A user-typed ISO instant → epoch seconds, stricter than the log reader's :func:`parse_iso`.

    The date must exist (no 2026-02-31 rolling into March) and whatever follows
    the seconds must be empty, ``Z`` or an offset ``±HH``, ``±HHMM``, ``±HH:MM``,
    which is applied (``09:45:00+09:00`` is ``00:45:00Z``). Fractional seconds,
    other text and non-ASCII suffixes are refused (None).
    """
    secs = parse_iso(text)
    raw = text.encode("utf-8", "surrogatepass")
    if secs is None or not raw[:4].isdigit() or not raw[5:7].isdigit() or not raw[8:10].isdigit():
        return None
    year, month, day = int(raw[:4]), int(raw[5:7]), int(raw[8:10])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day > (29 if leap else 28) if month == 2 else day > (30 if month in (4, 6, 9, 11) else 31):
        return None
    suffix = raw[19:]
    if not suffix.isascii():
        return None
    tz = _TZ_SUFFIX.fullmatch(suffix.decode("ascii"))
    if tz is None:
        return None
    sign, hours, minutes = tz.groups()
    if sign is None:
        return secs
    if int(hours) > 23 or int(minutes or 0) > 59:
        return None
    offset = int(hours) * 3600 + int(minutes or 0) * 60
    return secs - offset if sign == "+" else secs + offset


def parse_since(spec: str, now_secs: int) -> SinceCut:
    """Resolve a ``--since`` value against ``now_secs``; anything unrecognised is a :class:`CceError`."""
    text = spec.strip(UNICODE_WHITESPACE)
    if not text:
        raise _since_error(spec)
    lowered = text.translate(_ASCII_LOWER)
    unit, digits = lowered[-1], lowered[:-1]
    if unit in _UNIT_SECONDS and digits and all("0" <= c <= "9" for c in digits):
        significant = digits.lstrip("0")
        span = int(significant) * _UNIT_SECONDS[unit] if 0 < len(significant) <= 19 else 0
        # Zero is no window at all; a span past 64-bit seconds is no instant anyone can mean.
        if not 0 < span <= _I64_MAX:
            raise _since_error(spec)
        return SinceCut(now_secs - span, lowered)
    secs = parse_instant(text)
    if secs is None and len(text.encode("utf-8", "surrogatepass")) == 10:
        secs = parse_instant(text + "T00:00:00Z")
    if secs is None:
        raise _since_error(spec)
    return SinceCut(secs)


def parse_source(value: str) -> str:
    """``all``, ``mcp`` or ``cli`` from a ``--source`` value (any case, surrounding space ignored)."""
    wanted = value.strip(UNICODE_WHITESPACE).translate(_ASCII_LOWER)
    if wanted not in SOURCES:
        raise CceError(f"invalid --source value {debug_quote(wanted)} — use mcp, cli, or all")
    return wanted


def debug_quote(text: str) -> str:
    """``text`` in double quotes with the escapes the reference's error messages use.

    Quotes and backslashes get a backslash; tab, CR, LF and NUL their short
    forms; control, format, separator (other than the plain space), private-use,
    unassigned and combining characters become ``\\u{hex}``. The result is
    always a single line.
    """
    out = ['"']
    for ch in text:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        elif _needs_unicode_escape(ch):
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_SHORT_ESCAPES = {"\t": "\\t", "\r": "\\r", "\n": "\\n", "\0": "\\0", "\\": "\\\\", '"': '\\"'}


def _needs_unicode_escape(ch: str) -> bool:
    cp = ord(ch)
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"):
        return True
    # Grapheme extenders: combining marks, ZWNJ, halfwidth sound marks, skin-tone modifiers, tags.
    return (category in ("Mn", "Me") or cp == 0x200C or cp in (0xFF9E, 0xFF9F)
            or 0x1F3FB <= cp <= 0x1F3FF or 0xE0020 <= cp <= 0xE007F)


def filter_since(events: Iterable[Event], cutoff_secs: int) -> list[Event]:
    """Events at or after the cutoff, in log order; ``unknown`` events always stay (they count for nothing)."""
    return [e for e in events
            if e.kind == "unknown" or (e.ts_secs is not None and e.ts_secs >= cutoff_secs)]


# --------------------------------------------------------------------------- reading the aggregate


def _at(value: Any, *path: str) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _count(value: Any) -> int:
    """A non-negative integer, or 0 for anything else (floats and booleans included)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _U64_LIMIT:
        return value
    return 0


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --------------------------------------------------------------------------- number forms


def thousands(n: int) -> str:
    """``38628`` → ``38,628``."""
    return f"{n:,}"


def short_tokens(n: int) -> str:
    """Below 1,000 as is; below 100,000 as ``8.6k``; above that whole thousands, rounded down (``310k``)."""
    if n < 1_000:
        return str(n)
    if n < 100_000:
        return f"{n / 1000.0:.1f}k"
    return f"{n // 1000}k"


def _percent(ratio: float) -> int:
    """A ratio as a whole percent, saturating at the 64-bit bounds (infinity included) and 0 for NaN."""
    scaled = ratio * 100.0
    if math.isnan(scaled):
        return 0
    if math.isfinite(scaled):
        scaled = round_half_away(scaled)
    return int(max(min(scaled, _I64_MAX), -_I64_MAX - 1))


def _fixed(x: float, places: int) -> str:
    return "NaN" if math.isnan(x) else f"{x:.{places}f}"


# --------------------------------------------------------------------------- human block


def window_label(since: SinceCut | None) -> str:
    if since is None:
        return "all time"
    if since.relative is not None:
        return f"last {since.relative} (since {since.cutoff_iso})"
    return f"since {since.cutoff_iso}"


def _clock(ts: str) -> str:
    """``HH:MM`` taken from bytes 11–16 of the timestamp, or ``--:--`` when they are not there."""
    raw = ts.encode("utf-8", "surrogatepass")

    def boundary(i: int) -> bool:
        return i == len(raw) or (raw[i] & 0xC0) != 0x80

    if len(raw) < 16 or not (boundary(11) and boundary(16)):
        return "--:--"
    return raw[11:16].decode("utf-8", "surrogatepass")


def _short_query(query: str) -> str:
    if len(query) <= QUERY_MAX_CHARS:
        return query
    return query[:QUERY_MAX_CHARS - 1] + "…"


def _shows(source_filter: str, source: str) -> bool:
    if source_filter == "mcp":
        return source == "mcp"
    if source_filter == "cli":
        return source != "mcp"
    return True


def _package_lines(agg: dict[str, Any]) -> list[str]:
    """The ``  by package`` rows (no latency column); nothing when the aggregate has no packages."""
    rows = _at(agg, "by_package")
    if not isinstance(rows, list) or not rows:
        return []
    names = [_text(_at(r, "package")) for r in rows]
    counts = [_count(_at(r, "searches")) for r in rows]
    saved = [thousands(_count(_at(r, "tokens_saved"))) for r in rows]
    # The name column is as wide as the longest name in UTF-8 bytes, padded in characters (the reference's way).
    pw = max(len(n.encode("utf-8", "surrogatepass")) for n in names)
    cw = max(len(str(c)) for c in counts)
    tw = max(len(t) for t in saved)
    out = ["  by package"]
    for r, name, count, tok in zip(rows, names, counts, saved, strict=True):
        out.append(f"    {name:<{pw}} : {count:>{cw}} searches · saved ~{tok:>{tw}} tok "
                   f"({_percent(_number(_at(r, 'mean_savings_ratio')))}%) · "
                   f"quality {_fixed(_number(_at(r, 'mean_top_score')), 2)}")
    return out


def render_human(agg: dict[str, Any], since: SinceCut | None, source_filter: str = "all",
                 workspace: bool = False) -> str:
    """The human block for an aggregate (as returned by ``aggregate()``), ending in a newline.

    ``workspace`` adds the by-package rows (whatever ``--source`` says: packages have no split).
    """
    lines = [f"CCE usage — {window_label(since)}"]
    if _count(_at(agg, "totals", "searches")) == 0:
        lines.append("  no searches in this window")
        return "\n".join(lines) + "\n"

    splits = []
    for tag, label in (("mcp", "agent (mcp)"), ("cli", "human (cli)")):
        if source_filter in ("all", tag):
            row = _at(agg, "by_source", tag)
            splits.append((label, _count(_at(row, "searches")), thousands(_count(_at(row, "tokens_saved"))),
                           _percent(_number(_at(row, "mean_savings_ratio"))),
                           _number(_at(row, "mean_top_score")), _number(_at(row, "mean_latency_ms"))))
    sw = max(len(str(s[1])) for s in splits)
    tw = max(len(s[2]) for s in splits)
    for label, searches, saved, pct, quality, latency in splits:
        lines.append(f"  {label} : {searches:>{sw}} searches · saved ~{saved:>{tw}} tok ({pct}%) · "
                     f"quality {_fixed(quality, 2)} · {_fixed(latency, 0)} ms avg")
    if workspace:
        lines.extend(_package_lines(agg))

    recent = _at(agg, "recent_searches")
    rows = [r for r in (recent if isinstance(recent, list) else [])
            if _shows(source_filter, _text(_at(r, "source")))]
    if rows:
        lines.append("  recent (newest first)")
        shown = rows[:RECENT_HUMAN_LIMIT]
        queries = [_short_query(_text(_at(r, "query"))) for r in shown]
        hits = [str(_count(_at(r, "result_count"))) for r in shown]
        qw = max(len(q) for q in queries) + 2
        hw = max(len(h) for h in hits)
        for r, q, h in zip(shown, queries, hits, strict=True):
            quoted = f'"{q}"'
            lines.append(f"    {_text(_at(r, 'source')):<3}  {_clock(_text(_at(r, 'ts')))}  {quoted:<{qw}}  "
                         f"{h:>{hw}} hits  ~{short_tokens(_count(_at(r, 'tokens_saved')))} saved")
        if len(rows) > len(shown):
            lines.append(f"    … ({len(rows) - len(shown)} more; --json for all)")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- cce.usage/v1


def _sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted_keys(v) for v in value]
    return value


def usage_json(agg: dict[str, Any], now_secs: int, since: SinceCut | None,
               source_filter: str = "all", workspace: bool = False) -> dict[str, Any]:
    """The ``cce.usage/v1`` object, keys in their published order (``by_package`` only for a workspace)."""
    recent = _at(agg, "recent_searches")
    until = format_iso(now_secs)
    body = {
        "schema": SCHEMA,
        "generated_ts": until,
        "window": {"since": since.cutoff_iso if since is not None else None, "until": until},
        "source_filter": source_filter,
        "totals": {
            "searches": _count(_at(agg, "totals", "searches")),
            "tokens_saved": _count(_at(agg, "totals", "tokens_saved")),
            "mean_savings_ratio": _number(_at(agg, "totals", "mean_savings_ratio")),
            "mean_top_score": _number(_at(agg, "totals", "mean_top_score")),
        },
        "by_source": _sorted_keys(_at(agg, "by_source")),
        "by_package": _sorted_keys(_at(agg, "by_package")),
        "recent": [
            {
                "ts": _text(_at(r, "ts")),
                "source": _text(_at(r, "source")),
                "query": _text(_at(r, "query")),
                "result_count": _count(_at(r, "result_count")),
                "tokens_saved": _count(_at(r, "tokens_saved")),
            }
            for r in (recent if isinstance(recent, list) else [])
        ],
    }
    if not workspace:
        del body["by_package"]
    return body


def render_json(agg: dict[str, Any], now_secs: int, since: SinceCut | None, source_filter: str = "all",
                workspace: bool = False) -> str:
    return dumps_pretty(usage_json(agg, now_secs, since, source_filter, workspace)) + "\n"


def dumps_pretty(value: Any) -> str:
    """Two-space pretty JSON in the given key order (struct order), laid out like the reference."""
    return dumps_json(value, pretty=True)


# --------------------------------------------------------------------------- the whole projection


def render(events: Sequence[Event], now_secs: int, since: SinceCut | None, source_filter: str = "all",
           as_json: bool = False, price: float = DEFAULT_PRICE) -> str:
    """Filter ``events`` to the window, aggregate them and render the chosen form."""
    from cce_core.observability.aggregate import aggregate

    kept = filter_since(events, since.cutoff_secs) if since is not None else list(events)
    agg = aggregate(kept, now_secs, price)
    if as_json:
        return render_json(agg, now_secs, since, source_filter)
    return render_human(agg, since, source_filter)


def render_workspace(logs: Any, now_secs: int, since: SinceCut | None, source_filter: str = "all",
                     as_json: bool = False, price: float = DEFAULT_PRICE) -> str:
    """``cce usage --workspace``: the same projection over a workspace's logs (a ``WorkspaceLogs``)."""
    from cce_core.observability.workspace_usage import workspace_aggregate

    keep = (lambda evs: filter_since(evs, since.cutoff_secs)) if since is not None else None
    agg = workspace_aggregate(logs.read(), now_secs, price, keep)
    if as_json:
        return render_json(agg, now_secs, since, source_filter, workspace=True)
    return render_human(agg, since, source_filter, workspace=True)


def project(events: Sequence[Event], now_secs: int, *, since: str | None = None, source: str = "all",
            as_json: bool = False, price: float = DEFAULT_PRICE) -> str:
    """``cce usage`` as a pure function: raw flag values in, output text out (flag errors raise CceError)."""
    source_filter = parse_source(source)
    cut = parse_since(since, now_secs) if since is not None else None
    return render(events, now_secs, cut, source_filter, as_json, price)
