"""The adversarial secrets corpus, end to end: 99 formats planted in a repository, none may come back.

Issue #15 found 41 of 70 realistic fake secrets reaching the store and coming
back through ``cce search`` and MCP; issue #23 added 29 more that sat where no
key operator or prefix marked them (YAML block scalars, Dockerfile ``ENV``,
XML, command lines, netrc/htpasswd/pgpass lines, HTTP auth pairs, positional
client tokens, GCP key ids, Sentry DSNs). This test rebuilds such a corpus at run
time (tests/secret_formats.py; every value assembled from fragments), runs the
installed ``cce index`` with default settings (the strict profile), then looks
for every secret, and for its last characters, in the store's bytes, in
``cce search`` output, in MCP ``context_search`` / ``expand_chunk`` results and
in the metrics log. A second run with ``secrets.profile: family`` shows the
setting reaches the indexer (the family set leaks most of them, as the other
engines do).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import run_cce, store_bytes
from secret_formats import FORMATS, SecretFormat, tail

from cce_core.indexing.store import default_store_path, load_store

# Plain text that must survive in the store: proof the bytes are searchable, not compressed away.
CONTROLS = ("cluster0.ab1cd.mongodb.net", "EndpointSuffix=core.windows.net", "tgbotapi.NewBotAPI")
QUERIES = ("password", "secret key token", "authorization bearer basic", "api key client", "private key",
           "database url connection", "webhook slack", "auth token npm", "stripe billing", "aws credentials")


def write_corpus(root: Path) -> Path:
    for fmt in FORMATS:
        path = root / fmt.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fmt.text, encoding="utf-8", newline="")
    return root


def leaked(fmt: SecretFormat, haystack: str) -> bool:
    return fmt.secret in haystack or tail(fmt.secret) in haystack


def leaks_in(haystack: str) -> list[str]:
    return [fmt.name for fmt in FORMATS if leaked(fmt, haystack)]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = write_corpus(tmp_path_factory.mktemp("secrets") / "repo")
    done = run_cce("index", root)
    assert done.returncode == 0, done.stderr
    return root, done.stdout


def test_every_format_is_indexed_and_none_reaches_the_store(indexed):
    root, _stdout = indexed
    store_path = default_store_path(root)
    data = load_store(store_path)
    indexed_paths = {f.path for f in data.files}
    assert {fmt.path for fmt in FORMATS} <= indexed_paths  # the test is void unless every file was read
    raw = store_bytes(store_path).decode("utf-8", "replace")
    for control in CONTROLS:
        assert control in raw
    assert leaks_in(raw) == []
    contents = "\n".join(c.content for c in data.chunks)
    assert leaks_in(contents) == []


def test_index_reports_what_it_redacted_by_label(indexed):
    _root, stdout = indexed
    line = next(ln for ln in stdout.splitlines() if ln.startswith("  redacted          : "))
    match = re.fullmatch(r"  redacted          : (\d+) values \((.+)\)", line)
    assert match, line
    assert int(match[1]) >= len(FORMATS)
    by_label = dict(part.rsplit(" ", 1) for part in match[2].split(", "))
    assert sum(int(n) for n in by_label.values()) == int(match[1])
    for label in ("SECRET", "PRIVATE_KEY", "AWS_ACCESS_KEY", "GITHUB_TOKEN", "STRIPE_KEY", "AZURE_KEY"):
        assert label in by_label


def test_cce_search_output_holds_no_secret(indexed):
    root, _stdout = indexed
    for query in QUERIES:
        for extra in ((), ("--json",)):
            done = run_cce("search", query, "--dir", root, "--top-k", "40", *extra)
            assert done.returncode == 0, done.stderr
            assert leaks_in(done.stdout + done.stderr) == [], query


def test_mcp_results_hold_no_secret(indexed):
    pytest.importorskip("mcp", reason="the MCP SDK is not installed")
    from test_mcp import McpClient

    root, _stdout = indexed
    client = McpClient("--dir", root)
    try:
        seen = ""
        for query in QUERIES:
            for detail in ("full", "compact"):
                seen += client.text("context_search", {"query": query, "top_k": 40, "detail": detail})
        assert leaks_in(seen) == []
        assert "[REDACTED:" in seen  # the results did carry the planted files' text
        expanded = ""
        for chunk_id in sorted(set(load_store(default_store_path(root)).chunk_ids)):
            for scope in ("body", "file"):
                text, _is_error = client.call("expand_chunk", {"chunk_id": chunk_id, "scope": scope})
                expanded += text
        assert leaks_in(expanded) == []
        assert "[REDACTED:PRIVATE_KEY]" in expanded and "[REDACTED:SECRET]" in expanded
    finally:
        client.close()
    metrics = (root / ".cce" / "metrics.jsonl").read_text(encoding="utf-8")
    assert '"search"' in metrics or "search" in metrics
    assert leaks_in(metrics) == []


def test_family_profile_is_chosen_in_config(tmp_path):
    root = write_corpus(tmp_path / "repo")
    (root / ".cce").mkdir()
    (root / ".cce" / "config").write_text("secrets:\n  profile: family\n", encoding="utf-8")
    done = run_cce("index", root, "--no-metrics")
    assert done.returncode == 0, done.stderr
    data = load_store(default_store_path(root))
    assert data.meta["secrets_profile"] == "family"
    contents = "\n".join(c.content for c in data.chunks)
    # The family set keeps the other engines' gaps: most of the corpus survives it.
    assert len(leaks_in(contents)) >= 35
    assert "[REDACTED:AWS_ACCESS_KEY]" in contents
