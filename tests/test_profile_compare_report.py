"""The profile comparison's report gives def@1 per query style: the identifier row is issue #20's measure."""

from __future__ import annotations

import json

from cce_core.evaluation.profile_compare import ProfileRun, render_human, render_json
from cce_core.evaluation.relevance import QueryScore


def _run(profile: str, hits: list[bool | None]) -> ProfileRun:
    styles: list[str | None] = ["identifier", "identifier", "identifier", "question"]
    scores = [QueryScore(f"q{i}", 10, 0.1, 1.0, 1.0, 0.2, 1, None) for i in range(len(styles))]
    return ProfileRun(profile, scores, styles, hits)


def test_def_at_1_is_counted_per_style_over_the_judged_cases_only():
    runs = [_run("family", [False, True, None, False]), _run("default", [True, True, None, True])]
    text = render_human(["a.jsonl"], "hash", runs)
    assert "  def@1 by style       family     default\n" in text
    assert "  identifier              1/2         2/2\n" in text
    assert "  question                0/1         1/1\n" in text
    body = json.loads(render_json(["a.jsonl"], "hash", runs))
    assert body["profiles"][1]["def_at_1_by_style"] == {"identifier": {"hits": 2, "judged": 2},
                                                        "question": {"hits": 1, "judged": 1}}


def test_no_def_at_1_block_when_no_case_names_a_definition():
    runs = [_run("family", [None] * 4), _run("default", [None] * 4)]
    assert "def@1 by style" not in render_human(["a.jsonl"], "hash", runs)
