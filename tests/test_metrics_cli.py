"""Process-level: index/search write events beside the store, feedback rates them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
from helpers import copy_tree, run_cce

from cce_core.observability.metrics import parse_iso, read_log

SEARCH_KEYS = {"baseline_tokens", "embedder", "empty", "event", "graph_enabled", "id", "latency_ms", "low_confidence",
               "mean_score", "query", "result_count", "savings", "savings_ratio", "schema", "served_tokens", "source",
               "tokens_saved", "top_k", "top_score", "ts"}
INDEX_KEYS = {"chunks", "duration_ms", "embedder", "event", "files_indexed", "full", "id", "index_bytes", "schema",
              "sensitive_skipped", "sha", "source", "ts"}
BUCKETS = {"retrieval", "chunk_compression", "grammar", "output", "memory", "turn_summarization",
           "progressive_disclosure"}


@pytest.fixture
def corpus(reference, tmp_path):
    return copy_tree(reference / "test" / "fixture" / "base", tmp_path / "base")


def _events(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def test_index_then_search_append_two_documented_events(corpus):
    assert run_cce("index", corpus).returncode == 0
    proc = run_cce("search", "hash password", "--dir", corpus, "--top-k", "3")
    assert proc.returncode == 0, proc.stderr
    log_path = corpus / ".cce" / "metrics.jsonl"
    index_ev, search_ev = _events(log_path)

    assert set(index_ev) == INDEX_KEYS
    assert (index_ev["event"], index_ev["schema"], index_ev["source"], index_ev["full"]) == (
        "index", "cce.metrics/v1", "local", True)
    assert (index_ev["files_indexed"], index_ev["chunks"], index_ev["embedder"]) == (3, 7, "hash")
    assert index_ev["index_bytes"] == (corpus / ".cce" / "index.cce").stat().st_size
    assert index_ev["sha"] is None  # not a git work tree
    assert index_ev["sensitive_skipped"] == 0 and index_ev["duration_ms"] > 0

    assert set(search_ev) == SEARCH_KEYS and set(search_ev["savings"]) == BUCKETS
    assert (search_ev["event"], search_ev["source"], search_ev["query"], search_ev["top_k"]) == (
        "search", "cli", "hash password", 3)
    assert search_ev["result_count"] == 3 and search_ev["graph_enabled"] is True
    assert search_ev["tokens_saved"] == search_ev["baseline_tokens"] - search_ev["served_tokens"]
    assert search_ev["savings"]["retrieval"] == {"saved_tokens": search_ev["tokens_saved"],
                                                 "baseline_tokens": search_ev["baseline_tokens"]}
    assert search_ev["savings"]["chunk_compression"] == {"saved_tokens": 0, "baseline_tokens": 0}
    assert search_ev["savings"]["grammar"]["baseline_tokens"] > 0
    assert parse_iso(search_ev["ts"]) is not None and re.fullmatch(r"[0-9a-f]{12}", search_ev["id"])
    assert search_ev["latency_ms"] >= 0

    # the human form ends with the id and how to rate it
    last = proc.stdout.rstrip("\n").split("\n")[-1]
    qid = search_ev["id"]
    assert last == f"query-id: {qid}  ·  rate with: cce feedback {qid} --helpful|--not-helpful"

    # every line is compact JSON with sorted keys
    for line in log_path.read_text(encoding="utf-8").split("\n")[:-1]:
        keys = list(json.loads(line))
        assert keys == sorted(keys) and ": " not in line.replace('"query":"hash password"', "")


def test_json_search_carries_the_event_id_and_feedback_resolves(corpus):
    assert run_cce("index", corpus).returncode == 0
    proc = run_cce("search", "refund", "--dir", corpus, "--json")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert list(body) == ["query_id", "results"] and proc.stdout.endswith("}\n")
    qid = body["query_id"]
    assert re.fullmatch(r"[0-9a-f]{12}", qid)
    assert _events(corpus / ".cce" / "metrics.jsonl")[-1]["id"] == qid

    fb = run_cce("feedback", qid, "--helpful", "--dir", corpus)
    assert fb.returncode == 0, fb.stderr
    assert fb.stderr == ""
    match = re.fullmatch(rf"recorded feedback \(helpful\) for {qid}  \[event ([0-9a-f]{{12}})\]\n", fb.stdout)
    assert match
    log = read_log(corpus / ".cce" / "metrics.jsonl")
    last = log.events[-1]
    assert (last.kind, last.target_id, last.helpful, last.note, last.id) == ("feedback", qid, True, "",
                                                                             match.group(1))

    from cce_core.observability.aggregate import aggregate
    recent = aggregate(log.events, parse_iso(last.ts) + 1)["recent_searches"]
    assert (recent[0]["id"], recent[0]["feedback"]) == (qid, "helpful")


def test_no_metrics_on_index_and_search_creates_no_log(corpus):
    assert run_cce("index", corpus, "--no-metrics").returncode == 0
    proc = run_cce("search", "payment", "--dir", corpus, "--no-metrics")
    assert proc.returncode == 0 and "query-id:" not in proc.stdout
    as_json = run_cce("search", "payment", "--dir", corpus, "--no-metrics", "--json")
    assert json.loads(as_json.stdout)["query_id"] is None
    assert not (corpus / ".cce" / "metrics.jsonl").exists()


def test_unknown_query_id_warns_but_records(corpus, tmp_path):
    log_path = tmp_path / "elsewhere" / "m.jsonl"
    proc = run_cce("feedback", "0123456789ab", "--not-helpful", "--note", "wrong file", "--metrics", log_path)
    assert proc.returncode == 0
    assert proc.stderr == f"warning: no search event with id 0123456789ab in {log_path}; recording anyway\n"
    assert proc.stdout.startswith("recorded feedback (not helpful) for 0123456789ab  [event ")
    (event,) = _events(log_path)
    assert (event["event"], event["target_id"], event["helpful"], event["note"]) == (
        "feedback", "0123456789ab", False, "wrong file")


@pytest.mark.parametrize("verdicts", [(), ("--helpful", "--not-helpful")])
def test_exactly_one_verdict_is_required(tmp_path, verdicts):
    log_path = tmp_path / "m.jsonl"
    proc = run_cce("feedback", "0123456789ab", *verdicts, "--metrics", log_path)
    assert proc.returncode == 1
    assert proc.stderr == "error: provide exactly one of --helpful or --not-helpful\n"
    assert not log_path.exists()


def test_feedback_write_failure_is_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = run_cce("feedback", "q", "--helpful", "--metrics", blocker / "m.jsonl")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == "error: could not write feedback to the metrics log"


def test_unwritable_metrics_never_fail_a_search(corpus):
    assert run_cce("index", corpus, "--no-metrics").returncode == 0
    (corpus / ".cce" / "metrics.jsonl").mkdir()  # a directory where the log should be
    proc = run_cce("search", "payment", "--dir", corpus, "--json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["query_id"] is None
    assert proc.stderr.startswith("warning: could not write metrics to ")


def test_index_event_records_git_head(corpus):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "x"]):
        subprocess.run(["git", "-C", str(corpus), *args], check=True, capture_output=True,
                       env={**os.environ, **env})
    head = subprocess.run(["git", "-C", str(corpus), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert run_cce("index", corpus).returncode == 0
    assert _events(corpus / ".cce" / "metrics.jsonl")[-1]["sha"] == head.strip()
