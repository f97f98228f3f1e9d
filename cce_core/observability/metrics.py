"""The local metrics log: one JSON object per line in ``metrics.jsonl``.

Writing is fail-open (a metrics problem never fails a search or an index run);
reading is forgiving in exactly the way the other engines are, so every engine
reports the same event and skipped-line counts for the same file:

* a blank line, a line that is not JSON, or a ``search``/``index``/``feedback``
  object whose ``ts`` is missing or unparseable is *skipped*;
* any other JSON value (an unknown event name, a non-object) is kept as an
  ``unknown`` event;
* fields are coerced like a strict JSON reader would: counts must be
  non-negative integers, ratios accept any number, flags must be booleans,
  text must be strings — anything else reads as the zero value.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cce_core.observability.savings import Bucket, buckets_from_event, buckets_json, search_buckets

METRICS_FILE = "metrics.jsonl"
METRICS_SCHEMA = "cce.metrics/v1"
STORE_DIR = ".cce"

_U64_LIMIT = 1 << 64
_I64_MIN = -(1 << 63)
# A stricter JSON reader gives up past this nesting depth; lines it rejects are skipped here too.
_MAX_DEPTH = 127


# --------------------------------------------------------------------------- paths


def metrics_beside(store_path: Path) -> Path:
    """The log that lives next to a store file."""
    return Path(store_path).parent / METRICS_FILE


def resolve_metrics_path(metrics: Path | None, store: Path | None, dir_: Path | None) -> Path:
    """``--metrics`` wins, then the store's directory, then ``DIR/.cce``, then ``./.cce``."""
    if metrics is not None:
        return Path(metrics)
    if store is not None:
        return metrics_beside(Path(store))
    base = Path(dir_) if dir_ is not None else Path(".")
    return base / STORE_DIR / METRICS_FILE


# --------------------------------------------------------------------------- time


def _days_from_civil(y: int, m: int, d: int) -> int:
    # Howard Hinnant's proleptic-Gregorian day count; // and % are floor ops in
    # Python, so the era arithmetic is written with explicit truncation.
    y = y - 1 if m <= 2 else y
    era = _trunc_div(y if y >= 0 else y - 399, 400)
    yoe = y - era * 400
    mp = m - 3 if m > 2 else m + 9
    doy = _trunc_div(153 * mp + 2, 5) + d - 1
    doe = yoe * 365 + _trunc_div(yoe, 4) - _trunc_div(yoe, 100) + doy
    return era * 146097 + doe - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    z = days + 719468
    era = _trunc_div(z if z >= 0 else z - 146096, 146097)
    doe = z - era * 146097
    yoe = _trunc_div(doe - _trunc_div(doe, 1460) + _trunc_div(doe, 36524) - _trunc_div(doe, 146096), 365)
    y = yoe + era * 400
    doy = doe - (365 * yoe + _trunc_div(yoe, 4) - _trunc_div(yoe, 100))
    mp = _trunc_div(5 * doy + 2, 153)
    d = doy - _trunc_div(153 * mp + 2, 5) + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _parse_int_field(raw: bytes) -> int | None:
    """An integer the way a strict systems-language parser reads one: optional sign, ASCII digits only."""
    body = raw[1:] if raw[:1] in (b"+", b"-") else raw
    if not body or not all(0x30 <= b <= 0x39 for b in body):
        return None
    value = int(body)
    return -value if raw[:1] == b"-" else value


def parse_iso(text: str) -> int | None:
    """``YYYY-MM-DDTHH:MM:SS`` (anything after it ignored, always UTC) → epoch seconds.

    Deliberately hand-rolled: positions are byte offsets, the separator at
    offset 10 is not checked, day 31 is accepted in every month and rolls over,
    and second 60 is allowed.
    """
    b = text.encode("utf-8", "surrogatepass")
    if len(b) < 19 or b[4] != 0x2D or b[7] != 0x2D or b[13] != 0x3A or b[16] != 0x3A:
        return None
    fields = [_parse_int_field(b[s:e]) for s, e in ((0, 4), (5, 7), (8, 10), (11, 13), (14, 16), (17, 19))]
    parts = [f for f in fields if f is not None]
    if len(parts) != len(fields):
        return None
    year, month, day, hour, minute, sec = parts
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        return None
    if hour > 23 or minute > 59 or sec > 60:
        return None
    return _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + sec


def format_iso(secs: int) -> str:
    """Epoch seconds → ``YYYY-MM-DDTHH:MM:SSZ`` (UTC)."""
    days, rem = divmod(int(secs), 86400)
    y, m, d = _civil_from_days(days)
    return f"{y:04d}-{m:02d}-{d:02d}T{rem // 3600:02d}:{rem % 3600 // 60:02d}:{rem % 60:02d}Z"


def date_str(secs: int) -> str:
    """The UTC calendar date of ``secs`` as ``YYYY-MM-DD``."""
    y, m, d = _civil_from_days(int(secs) // 86400)
    return f"{y:04d}-{m:02d}-{d:02d}"


def now_secs() -> int:
    return int(time.time())


# --------------------------------------------------------------------------- reading


@dataclass
class Event:
    """One parsed line of the log. Fields a kind does not carry keep their zero value."""

    kind: str  # "search" | "index" | "feedback" | "unknown"
    position: int  # index among the log's events (file order)
    ts_secs: int | None = None
    ts: str = ""
    id: str = ""
    # search
    query: str = ""
    result_count: int = 0
    tokens_saved: int = 0
    baseline_tokens: int = 0
    served_tokens: int = 0
    savings_ratio: float = 0.0
    top_score: float = 0.0
    mean_score: float = 0.0
    empty: bool = False
    low_confidence: bool = False
    latency_ms: float = 0.0
    source: str = ""
    savings: dict[str, Bucket] = field(default_factory=dict)
    knowledge_results: int = 0  # absent in code-only events and in other engines' logs
    # index
    sha: str | None = None
    sensitive_skipped: int = 0
    files_indexed: int = 0
    chunks: int = 0
    # feedback
    target_id: str = ""
    helpful: bool = False
    note: str = ""
    # the decoded JSON value, for readers that need a field not listed above
    raw: Any = field(default=None, repr=False, compare=False)


@dataclass
class MetricsLog:
    events: list[Event] = field(default_factory=list)
    skipped: int = 0

    @property
    def event_count(self) -> int:
        return len(self.events)


class _Reject(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _Reject(name)


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Reject(text)
    return value


def _parse_int(text: str) -> int | float:
    value = int(text)
    if text.startswith("-") and value == 0:
        return -0.0  # a negative zero is a float to a strict reader
    if value >= _U64_LIMIT or value < _I64_MIN:
        try:
            return float(value)
        except OverflowError:
            raise _Reject(text) from None  # out of range for a double: the strict reader refuses the line
    return value


def _acceptable(value: Any, depth: int = 0) -> bool:
    """Reject what a strict reader rejects but Python's json accepts: lone surrogates, deep nesting."""
    if isinstance(value, str):
        return not any(0xD800 <= ord(ch) <= 0xDFFF for ch in value) if not value.isascii() else True
    if isinstance(value, dict):
        if depth >= _MAX_DEPTH:
            return False
        return all(_acceptable(k, depth) and _acceptable(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        if depth >= _MAX_DEPTH:
            return False
        return all(_acceptable(v, depth + 1) for v in value)
    return True


def decode_line(line: str) -> tuple[bool, Any]:
    """``(True, value)`` for a line a strict JSON reader accepts, else ``(False, None)``."""
    try:
        value = json.loads(line, parse_constant=_reject_constant, parse_float=_parse_float, parse_int=_parse_int)
    except (ValueError, RecursionError):
        return False, None
    if not _acceptable(value):
        return False, None
    return True, value


def as_u64(obj: Any, key: str) -> int:
    v = obj.get(key) if isinstance(obj, dict) else None
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < _U64_LIMIT:
        return v
    return 0


def as_f64(obj: Any, key: str) -> float:
    v = obj.get(key) if isinstance(obj, dict) else None
    if isinstance(v, bool) or not isinstance(v, int | float):
        return 0.0
    return float(v)


def as_bool(obj: Any, key: str) -> bool:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, bool) else False


def as_str(obj: Any, key: str) -> str:
    v = obj.get(key) if isinstance(obj, dict) else None
    return v if isinstance(v, str) else ""


def _source_or(raw: str, default: str) -> str:
    return default if not raw.strip() else raw


def _event_from(value: Any, position: int) -> Event | None:
    """The event a decoded line stands for; None when the line must be skipped."""
    kind = value.get("event") if isinstance(value, dict) else None
    if kind not in ("search", "index", "feedback"):
        return Event(kind="unknown", position=position, raw=value)
    ts = value.get("ts")
    secs = parse_iso(ts) if isinstance(ts, str) else None
    if secs is None:
        return None
    ev = Event(kind=kind, position=position, ts_secs=secs, ts=ts, id=as_str(value, "id"), raw=value)
    if kind == "search":
        ev.query = as_str(value, "query")
        ev.result_count = as_u64(value, "result_count")
        ev.tokens_saved = as_u64(value, "tokens_saved")
        ev.baseline_tokens = as_u64(value, "baseline_tokens")
        ev.served_tokens = as_u64(value, "served_tokens")
        ev.savings_ratio = as_f64(value, "savings_ratio")
        ev.top_score = as_f64(value, "top_score")
        ev.mean_score = as_f64(value, "mean_score")
        ev.empty = as_bool(value, "empty")
        ev.low_confidence = as_bool(value, "low_confidence")
        ev.latency_ms = as_f64(value, "latency_ms")
        ev.source = _source_or(as_str(value, "source"), "cli")
        ev.savings = buckets_from_event(value)
        ev.knowledge_results = as_u64(value, "knowledge_results")
    elif kind == "index":
        sha = value.get("sha")
        ev.sha = sha if isinstance(sha, str) else None
        ev.source = _source_or(as_str(value, "source"), "local")
        ev.sensitive_skipped = as_u64(value, "sensitive_skipped")
        ev.files_indexed = as_u64(value, "files_indexed")
        ev.chunks = as_u64(value, "chunks")
    else:
        ev.target_id = as_str(value, "target_id")
        ev.helpful = as_bool(value, "helpful")
        ev.note = as_str(value, "note")
    return ev


def split_log_lines(text: str) -> list[str]:
    """Lines split on ``\\n`` only (one trailing ``\\r`` dropped, no phantom last line)."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def parse_log(text: str) -> MetricsLog:
    log = MetricsLog()
    for line in split_log_lines(text):
        if not line.strip():
            log.skipped += 1
            continue
        ok, value = decode_line(line)
        if not ok:
            log.skipped += 1
            continue
        ev = _event_from(value, len(log.events))
        if ev is None:
            log.skipped += 1
        else:
            log.events.append(ev)
    return log


def read_log(path: Path) -> MetricsLog:
    """Parse the log at ``path``; a missing, unreadable or non-UTF-8 file is an empty log."""
    try:
        data = Path(path).read_bytes()
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return MetricsLog()
    return parse_log(text)


# --------------------------------------------------------------------------- writing


def json_float(x: float) -> str:
    """Shortest round-trip text of ``x`` laid out the way the reference's JSON writer lays it out.

    Both pick the same shortest digits; they differ only in when they switch to
    exponent form and how they spell the exponent (``1e-7`` rather than ``1e-07``).
    Non-finite numbers become ``null``.
    """
    if not math.isfinite(x):
        return "null"
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    text = repr(x)
    sign = ""
    if text.startswith("-"):
        sign, text = "-", text[1:]
    mantissa, _, exp_text = text.partition("e")
    exp = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = whole + frac
    # value = 0.digits-without-leading-zeros * 10**point
    stripped = digits.lstrip("0")
    point = len(whole) + exp - (len(digits) - len(stripped))
    digits = stripped.rstrip("0")
    n = len(digits)
    k = point - n  # value = digits * 10**k
    if k >= 0 and point <= 16:
        body = digits + "0" * k + ".0"
    elif 0 < point <= 16:
        body = digits[:point] + "." + digits[point:]
    elif -5 < point <= 0:
        body = "0." + "0" * (-point) + digits
    elif n == 1:
        body = f"{digits}e{point - 1}"
    else:
        body = f"{digits[0]}.{digits[1:]}e{point - 1}"
    return sign + body


def dumps_json(value: Any, *, pretty: bool = False, sort_keys: bool = False, indent: str = "") -> str:
    """JSON as the reference's writer lays it out: non-ASCII kept, its float layout, compact or 2-space pretty."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json_float(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    inner = indent + "  "
    if isinstance(value, dict):
        items = sorted(value.items()) if sort_keys else list(value.items())
        parts = [(json.dumps(str(k), ensure_ascii=False), dumps_json(v, pretty=pretty, sort_keys=sort_keys,
                                                                      indent=inner)) for k, v in items]
        if not pretty:
            return "{" + ",".join(f"{k}:{v}" for k, v in parts) + "}"
        if not parts:
            return "{}"
        return "{\n" + ",\n".join(f"{inner}{k}: {v}" for k, v in parts) + "\n" + indent + "}"
    if isinstance(value, list | tuple):
        rendered = [dumps_json(v, pretty=pretty, sort_keys=sort_keys, indent=inner) for v in value]
        if not pretty:
            return "[" + ",".join(rendered) + "]"
        if not rendered:
            return "[]"
        return "[\n" + ",\n".join(inner + r for r in rendered) + "\n" + indent + "]"
    raise TypeError(f"cannot serialize {type(value).__name__}")


def dumps_compact(value: Any) -> str:
    """Compact JSON with sorted object keys: one metrics line."""
    return dumps_json(value, sort_keys=True)


_id_counter = itertools.count()


def new_event_id() -> str:
    """12 lowercase hex characters, unique per process call."""
    seed = f"{time.time_ns()}-{next(_id_counter)}-{os.getpid()}"
    return hashlib.sha256(seed.encode("ascii")).hexdigest()[:12]


@dataclass
class SearchRecord:
    """Everything a ``search`` event says about one query (the writer adds schema, ts and id)."""

    query: str
    top_k: int
    graph_enabled: bool
    embedder: str
    result_count: int
    baseline_tokens: int
    served_tokens: int
    tokens_saved: int
    savings_ratio: float
    top_score: float
    mean_score: float
    empty: bool
    low_confidence: bool
    latency_ms: float
    source: str = "cli"
    chunk_baseline_tokens: int = 0  # these four: the chunk and grammar `savings` buckets beside the file-level ones
    chunk_saved_tokens: int = 0
    grammar_baseline_tokens: int = 0
    grammar_saved_tokens: int = 0
    # Knowledge sections served beside the code results (`source: both`); written only when
    # non-zero, so a code-only event keeps the family's exact bytes.
    knowledge_results: int = 0
    # The ranking profile that answered; the family's events carry no such field, as the other engines'.
    ranking: str = "family"


@dataclass
class IndexRecord:
    files_indexed: int
    chunks: int
    index_bytes: int
    duration_ms: float
    embedder: str
    full: bool = True
    sha: str | None = None
    source: str = "local"
    sensitive_skipped: int = 0


class MetricsWriter:
    """Appends events to one log. Disabled → writes nothing and returns no ids.

    ``clock`` returns the current time (epoch seconds or an ISO string);
    ``ids`` returns a fresh event id. Both exist so tests can pin them.
    """

    def __init__(self, path: Path, enabled: bool = True,
                 clock: Callable[[], int | str] | None = None, ids: Callable[[], str] | None = None) -> None:
        self.path = Path(path)
        self.enabled = enabled
        self._clock = clock or now_secs
        self._ids = ids or new_event_id

    def _now_iso(self) -> str:
        now = self._clock()
        return now if isinstance(now, str) else format_iso(int(now))

    def _header(self, event: str) -> tuple[str, dict[str, Any]]:
        event_id = self._ids()
        return event_id, {"schema": METRICS_SCHEMA, "event": event, "ts": self._now_iso(), "id": event_id}

    def log_search(self, record: SearchRecord) -> str | None:
        if not self.enabled:
            return None
        event_id, obj = self._header("search")
        obj.update({
            "query": record.query,
            "top_k": int(record.top_k),
            "graph_enabled": bool(record.graph_enabled),
            "embedder": record.embedder,
            "result_count": int(record.result_count),
            "baseline_tokens": int(record.baseline_tokens),
            "served_tokens": int(record.served_tokens),
            "tokens_saved": int(record.tokens_saved),
            "savings_ratio": float(record.savings_ratio),
            "savings": buckets_json(search_buckets(
                (record.tokens_saved, record.baseline_tokens),
                (record.chunk_saved_tokens, record.chunk_baseline_tokens),
                (record.grammar_saved_tokens, record.grammar_baseline_tokens),
            )),
            "top_score": float(record.top_score),
            "mean_score": float(record.mean_score),
            "empty": bool(record.empty),
            "low_confidence": bool(record.low_confidence),
            "latency_ms": float(record.latency_ms),
            "source": record.source,
        })
        if record.knowledge_results:
            obj["knowledge_results"] = int(record.knowledge_results)
        if record.ranking != "family":
            obj["ranking"] = record.ranking
        return event_id if self._append(obj) else None

    def log_index(self, record: IndexRecord) -> str | None:
        if not self.enabled:
            return None
        event_id, obj = self._header("index")
        obj.update({
            "files_indexed": int(record.files_indexed),
            "chunks": int(record.chunks),
            "index_bytes": int(record.index_bytes),
            "duration_ms": float(record.duration_ms),
            "embedder": record.embedder,
            "full": bool(record.full),
            "sha": record.sha,
            "source": record.source,
            "sensitive_skipped": int(record.sensitive_skipped),
        })
        return event_id if self._append(obj) else None

    def log_feedback(self, target_id: str, helpful: bool, note: str = "") -> str | None:
        if not self.enabled:
            return None
        event_id, obj = self._header("feedback")
        obj.update({"target_id": target_id, "helpful": bool(helpful), "note": note})
        return event_id if self._append(obj) else None

    def _append(self, obj: dict[str, Any]) -> bool:
        try:
            line = (dumps_compact(obj) + "\n").encode("utf-8")
            parent = self.path.parent
            if str(parent) not in ("", "."):
                parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        except (OSError, ValueError, TypeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            sys.stderr.write(f"warning: could not write metrics to {self.path}: {reason}\n")
            sys.stderr.flush()
            return False
        return True
