"""`cce doctor` scans a stored knowledge corpus for secrets the redactor would remove (the reference's #144).

A store ingested before a facet was redacted, or edited by hand, keeps secrets
on disk, and a copy already pushed to a sync remote is not cleaned by a local
re-ingest. The doctor runs every stored text facet through the default
redaction profile; where the text would change, it names the facet (never the
value) as an advisory. A record id is an address that re-ingesting cannot
change, so a secret in one gets its own advisory, showing the id redacted.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run_cce

# Assembled at run time so no file of the repository holds the whole fake key.
FAKE_AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
FEED = (
    '{"id":"kn:1","title":"Login policy","body":"## Rule\\n\\nStore only a salted hash.","source":"handbook",'
    '"labels":["security"]}\n'
)


def ingested(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    root.mkdir()
    feed = tmp_path / "feed.jsonl"
    feed.write_text(FEED, encoding="utf-8")
    done = run_cce("knowledge", "index", feed, "--dir", root)
    assert done.returncode == 0, done.stderr
    snapshot = (root / ".cce" / "knowledge" / "current").read_text(encoding="utf-8").strip()
    return root, root / ".cce" / "knowledge" / f"{snapshot}.json"


def edit(store: Path, **changes: object) -> None:
    """Write secrets into the stored chunks behind the ingest's back (an old or tampered store)."""
    value = json.loads(store.read_text(encoding="utf-8"))
    for chunk in value["chunks"]:
        for key, text in changes.items():
            chunk[key] = text
    store.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def test_a_clean_store_has_no_secret_finding(tmp_path: Path) -> None:
    root, _store = ingested(tmp_path)
    done = run_cce("doctor", "--dir", root)
    assert done.returncode == 0, done.stdout
    assert "secret" not in done.stdout and "0 advisories" in done.stdout


def test_a_secret_in_a_facet_is_named_by_facet_never_by_value(tmp_path: Path) -> None:
    root, store = ingested(tmp_path)
    edit(store, title=f"Rotate leaked key {FAKE_AWS_KEY} now", labels=["security", f"key={FAKE_AWS_KEY}"])
    done = run_cce("doctor", "--dir", root)
    assert done.returncode == 0, done.stdout  # old, not corrupt: an advisory
    assert ("  advisory  the knowledge store holds text the redactor would remove, in: labels, title — it was "
            "ingested before that redaction (or edited since); re-ingest the feed, and if it was pushed, push "
            "again (a local re-ingest does not clean the copy on the remote)") in done.stdout
    assert FAKE_AWS_KEY not in done.stdout + done.stderr


def test_a_secret_in_a_record_id_gets_its_own_advisory_redacted(tmp_path: Path) -> None:
    root, store = ingested(tmp_path)
    edit(store, record_id=f"gh:{FAKE_AWS_KEY}")
    done = run_cce("doctor", "--dir", root)
    assert done.returncode == 0, done.stdout
    assert ("  advisory  knowledge record id `gh:[REDACTED:AWS_ACCESS_KEY]` holds something secret-shaped; a record "
            "id is an address, re-ingesting keeps it — fix the source that mints the ids") in done.stdout
    assert FAKE_AWS_KEY not in done.stdout + done.stderr
