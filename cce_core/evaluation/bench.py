"""``cce bench``: measure indexing speed, search latency, recall and token savings on a real checkout.

The repository is indexed whole and in memory, the same way ``cce index``
builds a store (same walker, chunker, redaction and embedder; nothing is
written to disk), and the build is timed. A labeled query set is then run,
each query five times through ``Searcher.search(top_k=10, graph=False)``.

What is measured
----------------
* **Latency**: only the in-process search call; p50 and p95 are nearest-rank
  percentiles over every sample of every query.
* **Recall@k**: the share of queries for which at least one of the first k
  results has a ``file_path`` containing one of the query's expected
  substrings.
* **Token savings**: per query, ``1 - served / baseline`` where ``served`` is
  the sum of the ``token_count`` of the ten returned chunks and ``baseline``
  is the ``cce.tokens/v1`` count of each distinct result file read raw from
  disk, summed; the figure is the mean over queries, as a percentage. A
  query whose baseline is zero (no results) does not enter that mean.
* **Dropped queries**: a query none of whose expected substrings occurs in
  any indexed path cannot be answered by this corpus; it is left out of
  every figure and listed in the report.

Query sets
----------
The built-in sets live in ``cce_core/data/bench_queries.json`` and are picked
with ``--lang`` (python, ruby, rust, typescript, c; the file's ``default``
entry when none is given). ``--queries FILE`` replaces them with a JSON list
of objects::

    [
      {"query": "where are blueprints registered", "expected": ["blueprints"]},
      {"query": "url routing and rule mapping", "expected": ["app", "blueprints"]}
    ]

``expected`` holds path substrings, any one of which makes a hit (a single
string is accepted too). Recall and savings are deterministic for a given
checkout; the timings depend on the machine.
"""

from __future__ import annotations

import functools
import json
import math
import platform
import sys
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from cce_core import __version__
from cce_core.foundation.errors import CceError
from cce_core.foundation.git_facts import head_sha
from cce_core.foundation.textrules import estimate_tokens_bytes, plain_sum, round6

TOP_K = 10
REPEATS = 5
QUERY_SET_RESOURCE = ("data", "bench_queries.json")


@dataclass(frozen=True)
class LabeledQuery:
    query: str
    expected: tuple[str, ...]

    def matches(self, file_path: str) -> bool:
        return any(sub and sub in file_path for sub in self.expected)


@dataclass
class QueryOutcome:
    query: str
    expected: tuple[str, ...]
    first_hit_rank: int | None  # 1-based rank of the first matching result, None if no result matched
    served_tokens: int
    baseline_tokens: int
    result_files: list[str]

    @property
    def savings(self) -> float | None:
        if self.baseline_tokens <= 0:
            return None
        return 1.0 - self.served_tokens / self.baseline_tokens

    def hit_at(self, k: int) -> bool:
        return self.first_hit_rank is not None and self.first_hit_rank <= k


@dataclass
class BenchReport:
    corpus: str
    lang: str
    commit: str
    query_source: str
    files: int
    chunks: int
    index_seconds: float
    latencies_ms: list[float]
    outcomes: list[QueryOutcome]
    dropped: list[LabeledQuery] = field(default_factory=list)
    embedder: str = "hash"
    ranking: str = "family"  # the profile that ranked; a family report keeps the other engines' keys

    # -- derived figures -------------------------------------------------
    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.index_seconds if self.index_seconds > 0 else 0.0

    @property
    def query_p50_ms(self) -> float:
        return nearest_rank(sorted(self.latencies_ms), 50.0)

    @property
    def query_p95_ms(self) -> float:
        return nearest_rank(sorted(self.latencies_ms), 95.0)

    def recall_at(self, k: int) -> float:
        if not self.outcomes:
            return 0.0
        return sum(1 for o in self.outcomes if o.hit_at(k)) / len(self.outcomes)

    @property
    def recall_at_5(self) -> float:
        return self.recall_at(5)

    @property
    def recall_at_10(self) -> float:
        return self.recall_at(10)

    @property
    def token_savings_pct(self) -> float:
        ratios = [s for s in (o.savings for o in self.outcomes) if s is not None]
        if not ratios:
            return 0.0
        return plain_sum(ratios) / len(ratios) * 100.0

    # -- renderings ------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "cce.bench/v1",
            "corpus": self.corpus,
            "lang": self.lang,
            "commit": self.commit,
            "query_set": self.query_source,
            "engine": "cce-python",
            "engine_version": __version__,
            "runtime": runtime_label(),
            "machine": machine_label(),
            "embedder": self.embedder,
            **({"ranking": self.ranking} if self.ranking != "family" else {}),
            "files": self.files,
            "chunks": self.chunks,
            "index_seconds": round6(self.index_seconds),
            "chunks_per_second": round6(self.chunks_per_second),
            "top_k": TOP_K,
            "repeats": REPEATS,
            "query_p50_ms": round6(self.query_p50_ms),
            "query_p95_ms": round6(self.query_p95_ms),
            "recall_at_5": round6(self.recall_at_5),
            "recall_at_10": round6(self.recall_at_10),
            "token_savings_pct": round6(self.token_savings_pct),
            "queries_used": len(self.outcomes),
            "queries_dropped": len(self.dropped),
            "dropped": [{"query": q.query, "expected": list(q.expected)} for q in self.dropped],
            "per_query": [
                {
                    "query": o.query,
                    "expected": list(o.expected),
                    "first_hit_rank": o.first_hit_rank,
                    "served_tokens": o.served_tokens,
                    "baseline_tokens": o.baseline_tokens,
                    "savings": None if o.savings is None else round6(o.savings),
                }
                for o in self.outcomes
            ],
        }

    def summary_lines(self) -> list[str]:
        lines = [
            f"Benchmark finished ({self.corpus}, {self.lang}, commit {self.commit}):",
            f"  files/chunks : {self.files}/{self.chunks}",
            f"  index        : {self.index_seconds:.3f}s ({self.chunks_per_second:.1f} chunks/s)",
            f"  latency      : p50 {self.query_p50_ms:.3f}ms  p95 {self.query_p95_ms:.3f}ms",
            f"  recall@5/@10 : {self.recall_at_5 * 100:.1f}% / {self.recall_at_10 * 100:.1f}%",
            f"  token savings: {self.token_savings_pct:.1f}%",
            f"  queries      : {len(self.outcomes)} used, {len(self.dropped)} dropped",
        ]
        for q in self.dropped:
            lines.append(f"    dropped    : {q.query!r} (no indexed path contains {' or '.join(q.expected)})")
        return lines

    def markdown(self) -> str:
        rows = [
            ("Corpus", self.corpus),
            ("Commit", f"`{self.commit}`"),
            ("Query set", f"{self.lang} ({self.query_source})"),
            ("Engine", f"cce-python {__version__} on {runtime_label()}"),
            ("Machine", machine_label()),
            ("Embedder", self.embedder),
            ("Files indexed", str(self.files)),
            ("Chunks", str(self.chunks)),
            ("Index time", f"{self.index_seconds:.3f} s ({self.chunks_per_second:.1f} chunks/s)"),
            ("Search latency p50 / p95", f"{self.query_p50_ms:.3f} ms / {self.query_p95_ms:.3f} ms"),
            ("Recall@5", f"{self.recall_at_5 * 100:.1f}%"),
            ("Recall@10", f"{self.recall_at_10 * 100:.1f}%"),
            ("Mean token savings", f"{self.token_savings_pct:.1f}%"),
            ("Queries used / dropped", f"{len(self.outcomes)} / {len(self.dropped)}"),
        ]
        out = ["# cce bench report", "", "| Measure | Value |", "|---|---|"]
        out += [f"| {k} | {v} |" for k, v in rows]
        out += [
            "",
            f"Method: the checkout was indexed whole and in memory, exactly as `cce index` would, then each "
            f"labeled query ran {REPEATS} times with top-{TOP_K} results and import-graph expansion off. "
            "Latency counts the search call alone.",
            "",
            "## What the numbers say",
            "",
            "The default hash embedder has no notion of meaning: it scores the words a query shares with "
            "the code, so recall here measures how well the query vocabulary lines up with identifiers and "
            "paths, not semantic understanding. Token savings compare the ten chunks a search hands back "
            "with the whole files those chunks come from; the gap is what an agent avoids reading when it "
            "takes the snippets instead of opening every file. Recall and savings depend only on the "
            "checkout and the query set, so any engine of the family should print the same values for the "
            "same commit; index time and latency belong to this machine and this Python.",
        ]
        if self.dropped:
            out += ["", "Dropped queries (no indexed path contains an expected substring):", ""]
            out += [f"- \"{q.query}\" → {', '.join(q.expected)}" for q in self.dropped]
        return "\n".join(out) + "\n"


# -- query sets --------------------------------------------------------------

@functools.cache
def _load_builtin() -> dict[str, Any]:
    folder, name = QUERY_SET_RESOURCE
    text = resources.files("cce_core").joinpath(folder).joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)


def builtin_languages() -> list[str]:
    return list(_load_builtin()["sets"])


def default_language() -> str:
    """The query set used when no ``--lang`` is given (the family's historical default)."""
    return str(_load_builtin()["default"])


def builtin_query_set(lang: str | None) -> tuple[str, list[LabeledQuery]]:
    """(default corpus name, queries) of the built-in set for ``lang`` (``None``: the default set)."""
    sets = _load_builtin()["sets"]
    if lang is None:
        lang = default_language()
    entry = sets.get(lang)
    if entry is None:
        raise CceError(f'unknown --lang "{lang}" (valid: {", ".join(sets)})')
    return entry["corpus"], _parse_queries(entry["queries"], "built-in set " + lang)


def load_queries_file(path: Path) -> list[LabeledQuery]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CceError(f"no such queries file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CceError(f"could not read queries file {path}: {exc}") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CceError(f"queries file {path} is not valid JSON: {exc.msg} (line {exc.lineno})") from exc
    return _parse_queries(data, f"queries file {path}")


def _parse_queries(data: Any, where: str) -> list[LabeledQuery]:
    if not isinstance(data, list) or not data:
        raise CceError(f'{where}: expected a non-empty JSON list of {{"query": ..., "expected": [...]}} objects')
    out: list[LabeledQuery] = []
    for n, item in enumerate(data, 1):
        if not isinstance(item, dict):
            raise CceError(f"{where}: entry {n} is not an object")
        query = item.get("query")
        expected = item.get("expected")
        if isinstance(expected, str):
            expected = [expected]
        if not isinstance(query, str) or not query.strip():
            raise CceError(f'{where}: entry {n} needs a non-empty "query" string')
        if (not isinstance(expected, list) or not expected
                or not all(isinstance(e, str) for e in expected) or not any(expected)):
            raise CceError(f'{where}: entry {n} needs "expected": a list of path substrings')
        out.append(LabeledQuery(query, tuple(expected)))
    return out


# -- environment ---------------------------------------------------------------

def detect_commit(repo_dir: Path) -> str:
    """HEAD's sha of ``repo_dir``, or ``unknown`` when it is no checkout (or git does not answer in 30 s)."""
    return head_sha(repo_dir, timeout=30) or "unknown"


def runtime_label() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}"


def machine_label() -> str:
    return f"{sys.platform} / {platform.machine() or 'unknown'}"


def nearest_rank(sorted_values: list[float], pct: float) -> float:
    """The nearest-rank percentile of an ascending list (0.0 when empty)."""
    if not sorted_values:
        return 0.0
    rank = math.ceil(pct / 100.0 * len(sorted_values))
    return sorted_values[min(max(rank - 1, 0), len(sorted_values) - 1)]


def whole_file_tokens(repo_dir: Path, rel_path: str) -> int:
    """``cce.tokens/v1`` of the file as it is on disk (unredacted); 0 when unreadable."""
    try:
        raw = (repo_dir / rel_path).read_bytes()
        raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return 0
    return estimate_tokens_bytes(len(raw))


# -- the run -------------------------------------------------------------------

def run_bench(
    repo_dir: Path,
    *,
    lang: str | None,
    name: str | None,
    commit: str | None,
    queries_file: Path | None,
    host: Any,
    embedder: Any,
    profile: str = "family",
) -> BenchReport:
    from cce_core.indexing.indexer import build_index
    from cce_core.retrieval.searcher import Searcher

    lang = default_language() if lang is None else lang
    default_name, queries = builtin_query_set(lang)  # validates --lang even when --queries is given
    query_source = f"built-in:{lang}"
    if queries_file is not None:
        queries = load_queries_file(queries_file)
        query_source = str(queries_file)
        default_name = Path(repo_dir).resolve().name
    corpus = name or default_name
    repo_dir = Path(repo_dir)
    if not repo_dir.is_dir():
        raise CceError(f"not a directory: {repo_dir}")
    sha = commit or detect_commit(repo_dir)

    started = time.perf_counter()
    store, stats = build_index(repo_dir, host, embedder, protect_secrets=True)
    index_seconds = time.perf_counter() - started

    indexed_paths = [f.path for f in store.files]
    used = [q for q in queries if any(q.matches(p) for p in indexed_paths)]
    dropped = [q for q in queries if q not in used]
    if not used:
        raise CceError(f"none of the {len(queries)} queries has an expected file in {repo_dir}; nothing to measure")

    # A result's token count is looked up by chunk id (first chunk with that id), as the family does.
    tokens_by_id: dict[str, int] = {}
    for c in store.chunks:
        tokens_by_id.setdefault(c.chunk_id, c.token_count)
    file_tokens: dict[str, int] = {}

    searcher = Searcher(store, embedder, profile=profile, source_root=str(repo_dir))
    latencies: list[float] = []
    outcomes: list[QueryOutcome] = []
    for q in used:
        results = []
        for _ in range(REPEATS):
            t0 = time.perf_counter_ns()
            results = searcher.search(q.query, top_k=TOP_K, graph=False)
            latencies.append((time.perf_counter_ns() - t0) / 1e6)
        first_hit = next((i for i, r in enumerate(results, 1) if q.matches(r.chunk.file_path)), None)
        served = sum(tokens_by_id.get(r.chunk.chunk_id, 0) for r in results)
        distinct = sorted({r.chunk.file_path for r in results})
        for path in distinct:
            if path not in file_tokens:
                file_tokens[path] = whole_file_tokens(repo_dir, path)
        baseline = sum(file_tokens[p] for p in distinct)
        outcomes.append(QueryOutcome(q.query, q.expected, first_hit, served, baseline,
                                     [r.chunk.file_path for r in results]))

    return BenchReport(
        corpus=corpus,
        lang=lang,
        commit=sha,
        query_source=query_source,
        files=stats.files_indexed,
        chunks=stats.total_chunks,
        index_seconds=index_seconds,
        latencies_ms=latencies,
        outcomes=outcomes,
        dropped=dropped,
        embedder=embedder.name,
        ranking=profile,
    )
