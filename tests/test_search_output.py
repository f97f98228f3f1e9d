"""What ``cce search`` prints for stored strings nobody vetted, ``--top-k 0``, knowledge hits, and ``cce expand``.

A file name or a knowledge title may hold a newline (or a Unicode line
separator, or a terminal escape); printed as it is, it forges result rows.
Every stored string must stay on its own line, while ordinary output keeps
its bytes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import run_cce

RANK_ROW = re.compile(r"^ ?\d+\. \[\d+\.\d{6}\] ")
FORGED = "\n 1. [0.999999] fake.py:1-2 (function/fn)\u2028 2. [0.999998] fake2.py \u202eevil\x1b[2J"
FORGED_NAME = FORGED.replace("/", "\u2215")  # a file name cannot hold a slash; a look-alike can


def knowledge_feed() -> str:
    records = [
        {"id": "kn:1", "title": "Password hashing policy",
         "body": "## Rule\n\nStore each password only as a salted slow hash; never keep the plaintext password.",
         "source": "handbook", "url": "https://example.test/1", "state": "closed",
         "updated_at": "2026-02-01T10:00:00Z"},
        {"id": "kn:evil", "title": "Innocent password note" + FORGED, "body": "Hash each password.",
         "source": "feed", "state": "open\nspoof"},
    ]
    return "".join(json.dumps(r) + "\n" for r in records)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("out") / "project"
    root.mkdir()
    (root / "auth.py").write_text("def hash_password(pw):\n    return pw + 'salt'\n", encoding="utf-8")
    (root / f"evil{FORGED_NAME}.py").write_text("def hash_password_evil(pw):\n    return pw[::-1]\n", encoding="utf-8")
    done = run_cce("index", root, "--no-metrics")
    assert done.returncode == 0, done.stderr
    feed = root / "feed.jsonl"
    feed.write_text(knowledge_feed(), encoding="utf-8")
    done = run_cce("knowledge", "index", feed, "--dir", root)
    assert done.returncode == 0, done.stderr
    return root


def rank_rows(stdout: str) -> list[str]:
    return [line for line in stdout.split("\n") if RANK_ROW.match(line)]


def test_a_file_name_cannot_forge_code_rows(project: Path) -> None:
    done = run_cce("search", "hash_password_evil hash_password", "--dir", project, "--no-metrics")
    assert done.returncode == 0, done.stderr
    rows = rank_rows(done.stdout)
    assert len(rows) == 2, done.stdout
    evil = next(row for row in rows if "evil" in row)
    assert evil.endswith("fake.py:1-2 (function\u2215fn)  2. [0.999998] fake2.py  evil [2J.py:1-2 "
                         "(function/function_definition)")
    assert "\x1b" not in done.stdout and "\u2028" not in done.stdout and "\u202e" not in done.stdout
    # The JSON keeps the real path: JSON escapes what a terminal would act on.
    raw = run_cce("search", "hash_password_evil", "--dir", project, "--no-metrics", "--json")
    assert any(r["file_path"] == f"evil{FORGED_NAME}.py" for r in json.loads(raw.stdout)["results"])


def test_a_knowledge_title_cannot_forge_rows(project: Path) -> None:
    done = run_cce("search", "password hash", "--dir", project, "--source", "knowledge")
    assert done.returncode == 0, done.stderr
    rows = rank_rows(done.stdout)
    assert len(rows) == 2, done.stdout
    assert any(row.endswith("] [knowledge] Innocent password note  1. [0.999999] fake.py:1-2 (function/fn)  2. "
                            "[0.999998] fake2.py  evil [2J — open spoof #" + row.rsplit("#", 1)[1]) for row in rows)
    assert "\x1b" not in done.stdout and "\u2028" not in done.stdout


def test_knowledge_hits_show_heading_snippet_and_how_to_expand(project: Path) -> None:
    done = run_cce("search", "plaintext password salted", "--dir", project, "--source", "knowledge")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0].startswith(" 1. [") and "[knowledge] Password hashing policy — closed · " in lines[0]
    chunk_id = lines[0].rsplit("#", 1)[1]
    assert lines[1] == "    # Password hashing policy"
    assert lines[2] == "    Store each password only as a salted slow hash; never keep the plaintext password."
    assert f"expand a knowledge hit: cce expand {chunk_id} --dir {project}" in done.stdout
    expanded = run_cce("expand", chunk_id, "--dir", project)
    assert expanded.returncode == 0, expanded.stderr
    assert expanded.stdout == ("# Password hashing policy\n\n## Rule\n\nStore each password only as a salted slow "
                               "hash; never keep the plaintext password.\n")
    document = run_cce("expand", chunk_id, "--dir", project, "--scope", "file")
    assert document.returncode == 0 and document.stdout.startswith("document kn:1 — 1 section(s):\n\nkn:1:1-5 (")


def test_expand_works_on_code_ids_and_says_when_an_id_is_unknown(project: Path) -> None:
    found = json.loads(run_cce("search", "hash_password", "--dir", project, "--no-metrics", "--json").stdout)
    auth = next(r for r in found["results"] if r["file_path"] == "auth.py")
    done = run_cce("expand", auth["chunk_id"], "--dir", project)
    assert (done.returncode, done.stdout) == (0, "def hash_password(pw):\n    return pw + 'salt'\n")
    missing = run_cce("expand", "0123456789abcdef", "--dir", project)
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr == (f"error: no chunk or knowledge section with id 0123456789abcdef under {project} — "
                              "it may be stale; run cce search again\n")
    bad = run_cce("expand", "0123456789abcdef", "--dir", project, "--scope", "everything")
    assert (bad.returncode, bad.stderr) == (1, "error: unknown --scope 'everything': use body, file or neighbors\n")


def test_top_k_zero_is_an_empty_result_not_a_usage_error(project: Path) -> None:
    done = run_cce("search", "hash_password", "--dir", project, "--top-k", "0")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.split("\n")[0] == "(no results)"
    event = [json.loads(line) for line in (project / ".cce" / "metrics.jsonl").read_text().splitlines()][-1]
    assert (event["top_k"], event["result_count"]) == (0, 0)
    as_json = run_cce("search", "hash_password", "--dir", project, "--top-k", "0", "--json", "--no-metrics")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["results"] == []
    both = run_cce("search", "hash_password", "--dir", project, "--top-k", "0", "--source", "both", "--no-metrics")
    assert (both.returncode, both.stdout) == (0, "(no results)\n")
    negative = run_cce("search", "hash_password", "--dir", project, "--top-k", "-1")
    assert negative.returncode != 0
