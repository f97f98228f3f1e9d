"""`cce savings`: the seven-layer ledger from a metrics log, as text and as sorted JSON."""

from __future__ import annotations

import json

import pytest
from helpers import run_cce

from cce_core.cli.commands.savings import metrics_source
from cce_core.observability.pricing import builtin_table
from cce_core.observability.savings import BUCKET_NAMES

NOTE = "vs full-file baseline — not your real end-to-end agent cost"


@pytest.fixture
def sample(reference):
    return reference / "test" / "fixture" / "base" / "metrics_sample.jsonl"


def test_text_ledger_of_the_sample_log(sample):
    proc = run_cce("savings", "--metrics", sample)
    assert proc.returncode == 0, proc.stderr
    zero = "".join(f"  {name:<26}{0:>14}{0:>18}\n" for name in BUCKET_NAMES[1:])
    assert proc.stdout == (
        f"CCE savings ledger  ({NOTE})\n"
        f"  source : {sample}\n"
        "  pricing: cce.pricing/builtin-v1  (offline, embedded; edit cce_core/data/pricing.json to change)\n"
        "\n"
        "  layer                       saved_tokens   baseline_tokens\n"
        "  retrieval                          53000             70000\n"
        f"{zero}"
        "  --------------------------------------------------------\n"
        "  total                              53000             70000\n"
        "\n"
        "  estimated $ saved: $0.16  (default-model input rate)\n"
        "\n"
        '  This is the internal "vs full-file" figure, NOT your real agent cost.\n'
        "  For the real end-to-end delta, run the A/B eval harness: see eval/README.md.\n")


def test_json_ledger_has_every_bucket_and_sorted_keys(sample):
    proc = run_cce("savings", "--json", "--metrics", sample)
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    ledger = body["savings_by_layer"]
    assert ledger["retrieval"] == {"baseline_tokens": 70000, "saved_tokens": 53000}
    assert ledger["total"]["saved_tokens"] == 53000
    assert all(ledger[name] for name in BUCKET_NAMES)
    assert ledger["note"] == NOTE
    assert body["pricing_id"] == "cce.pricing/builtin-v1"
    assert body["estimated_dollars_saved"] == "0.16"
    assert body["source"] == str(sample)
    assert list(body) == ["estimated_dollars_saved", "pricing_id", "savings_by_layer", "source"]
    assert list(ledger) == sorted(ledger)
    assert proc.stdout.startswith('{\n  "estimated_dollars_saved": "0.16",\n') and proc.stdout.endswith("}\n")


def test_missing_log_is_a_clean_zero_ledger(tmp_path):
    proc = run_cce("savings", "--json", "--metrics", tmp_path / "metrics.jsonl")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert body["savings_by_layer"]["total"]["saved_tokens"] == 0
    assert body["estimated_dollars_saved"] == "0.00"


def test_source_path_is_spelled_like_the_reference():
    assert metrics_source(None, None, None) == "./.cce/metrics.jsonl"
    assert metrics_source(None, None, "proj/") == "proj/.cce/metrics.jsonl"
    assert metrics_source(None, "a/b/index.json", None) == "a/b/metrics.jsonl"
    assert metrics_source(None, "index.json", None) == "metrics.jsonl"
    assert metrics_source("m.jsonl", "x/index.json", "d") == "m.jsonl"


def test_builtin_price_table():
    table = builtin_table()
    assert table.id == "cce.pricing/builtin-v1"
    assert table.default_input_price_per_million() == 3.0
    assert list(table.models) == ["generic-frontier", "generic-mid", "generic-small"]
    assert (table.dollars_saved(1_000_000), table.dollars_saved(53_000), table.dollars_saved(0)) == (3.0, 0.16, 0.0)


def test_grammar_bucket_from_a_live_search(tmp_path):
    (tmp_path / "auth.py").write_text("def hash_password(pw):\n    return pw + 'salt'\n")
    (tmp_path / "payments.py").write_text("import auth\n\ndef process_payment(amount):\n    return amount\n")
    assert run_cce("index", tmp_path).returncode == 0
    search = run_cce("search", "hash password", "--dir", tmp_path)
    assert search.returncode == 0, search.stderr
    proc = run_cce("savings", "--json", "--dir", tmp_path)
    assert proc.returncode == 0, proc.stderr
    ledger = json.loads(proc.stdout)["savings_by_layer"]
    saved, baseline = ledger["grammar"]["saved_tokens"], ledger["grammar"]["baseline_tokens"]
    assert 0 < saved <= baseline
    assert ledger["total"]["saved_tokens"] >= saved


def test_the_cli_prints_the_library_report(sample):
    """`cce savings --json` is `savings_json(savings_report(events))`: the one computation the dashboard calls too."""
    from cce_core.observability.metrics import read_log
    from cce_core.observability.savings import savings_json, savings_report

    proc = run_cce("savings", "--json", "--metrics", sample)
    assert proc.returncode == 0, proc.stderr
    report = savings_report(read_log(sample).events)
    assert json.loads(proc.stdout) == savings_json(report, str(sample))
    assert (report.pricing_id, report.rate_per_million, report.dollars_saved) == ("cce.pricing/builtin-v1", 3.0, 0.16)


def test_a_report_at_another_rate_prices_the_same_ledger(sample):
    from cce_core.observability.metrics import read_log
    from cce_core.observability.savings import savings_report

    events = read_log(sample).events
    assert savings_report(events, 15.0).dollars_saved == 0.8  # 53,000 tokens at $15 per million
    assert savings_report(events, 15.0).ledger == savings_report(events).ledger
    assert savings_report([]).ledger["total"] == {"baseline_tokens": 0, "saved_tokens": 0}
