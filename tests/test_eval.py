"""`cce eval`: correctness-gated, paired A/B aggregation of recorded runs."""

from __future__ import annotations

import json

import pytest
from helpers import run_cce

from cce_core.evaluation.agent_runs import Question, RunRecord, evaluate, evaluate_texts, grade, is_punt, parse_runs

GOLDEN = (
    "CCE eval — real end-to-end A/B (cost-primary, correctness-gated, paired)\n"
    "  questions: 6   skipped runs: 0\n"
    "  off : correct 5/6 runs · punts 1 · incorrect 0 · correct_cost $2.45 · mean $0.49\n"
    "  on  : correct 6/6 runs · punts 0 · incorrect 0 · correct_cost $0.83 · mean $0.14\n"
    "  paired-correct (both arms): 5\n"
    "  paired cost: off $2.45 · on $0.67 · saved $1.78  (72.7%)\n"
)


@pytest.fixture
def example(reference):
    return reference / "eval" / "runs.example.jsonl", reference / "eval" / "questions.jsonl"


def test_text_golden(example):
    runs, questions = example
    proc = run_cce("eval", runs, "--questions", questions)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == GOLDEN


def test_json_is_in_struct_order(example):
    runs, questions = example
    proc = run_cce("eval", runs, "--questions", questions, "--json")
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert list(body) == ["questions", "off", "on", "paired_correct", "paired_off_cost_usd", "paired_on_cost_usd",
                          "cost_delta_usd", "cost_saved_ratio", "skipped_runs", "note"]
    assert list(body["off"]) == ["runs", "correct", "incorrect", "punts", "correct_cost_usd", "mean_correct_cost_usd"]
    assert (body["questions"], body["paired_correct"], body["off"]["punts"], body["on"]["correct"]) == (6, 5, 1, 6)
    assert body["cost_saved_ratio"] == 0.726531
    assert body["note"] == "real end-to-end A/B (cost-primary, correctness-gated, paired)"
    assert '\n  "off": {\n    "runs": 6,' in proc.stdout


def test_default_questions_path_is_relative_to_cwd(example, tmp_path):
    runs, questions = example
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "questions.jsonl").write_bytes(questions.read_bytes())
    proc = run_cce("eval", runs, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == GOLDEN


def test_missing_questions_file_is_one_error_line(example, tmp_path):
    runs, _ = example
    proc = run_cce("eval", runs, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == ("error: could not read questions eval/questions.jsonl: "
                           "No such file or directory (os error 2)\n")


def test_punt_detection():
    for answer in ("", "  ", "no", "I couldn't find the function anywhere.", "N/A"):
        assert is_punt(answer)
    assert not is_punt("It is defined in auth.py at hash_password.")


def test_a_punt_phrase_inside_a_path_is_not_a_punt():
    # Reference #106: "n/a" matched the middle of common/auth.py and graded correct answers as punts.
    assert not is_punt("hash_password is defined in common/auth.py at line 1.")
    assert not is_punt("See gen/api and main/app for the handler.")
    assert not is_punt("The client is built in src/n/api.py by make_client.")
    assert is_punt("The answer is n/a for this repo.")
    assert is_punt("(N/A)")
    assert is_punt("Sorry, I was unable to locate it.")
    q = Question("q1", "Q q1", ("auth.py", "hash_password"))
    assert grade(q, RunRecord("q1", "on", "hash_password is defined in common/auth.py at line 1.", 0.1)) == "correct"


def test_grading_is_gated_on_ground_truth_and_punts():
    q = Question("q1", "Q q1", ("auth.py", "hash_password"))
    assert grade(q, RunRecord("q1", "on", "See Auth.py -> hash_password()", 0.1)) == "correct"
    assert grade(q, RunRecord("q1", "on", "It is in auth.py somewhere", 0.1)) == "incorrect"
    assert grade(q, RunRecord("q1", "on", "See auth.py hash_password", 0.1, punted=True)) == "punt"


def test_bad_and_blank_run_lines_are_skipped_and_duplicates_last_win():
    text = ('{"question_id":"q1","condition":"OFF","answer":"auth.py","cost_usd":1.0}\n'
            "\n"
            "not json\n"
            '{"question_id":"q1","condition":"sideways","answer":"x"}\n'
            '{"question_id":"q1","condition":"off","answer":"auth.py","cost_usd":2.0,"subagent_cost_usd":0.5}\n'
            '{"question_id":"q1","condition":"on","answer":"auth.py","cost_usd":NaN}\n'
            '{"question_id":"q1","condition":"on","answer":"auth.py","cost_usd":0.5}\n')
    runs, skipped = parse_runs(text)
    assert skipped == 4 and len(runs) == 3
    report = evaluate([Question("q1", "Q", ("auth.py",))], runs, skipped)
    assert (report.paired_off_cost_usd, report.paired_on_cost_usd, report.cost_delta_usd) == (2.5, 0.5, 2.0)
    assert report.cost_saved_ratio == 0.8
    assert report.skipped_runs == 4


def test_no_pairs_means_zero_ratio():
    report = evaluate_texts('{"id":"q1","question":"Q","must_include":["x"]}\n', "")
    assert (report.questions, report.paired_correct, report.cost_saved_ratio) == (1, 0, 0.0)
    assert report.off.runs == 0 and report.off.mean_correct_cost_usd == 0.0
