"""The real-world A/B harness: recorded agent runs with cce off and on, graded and paired.

It never calls a model and never reads a clock. A run is graded against the
question's ground truth — a punt (a non-answer) first, then correct only if
every required substring appears — and only questions answered correctly in
*both* arms enter the paired cost comparison, so a cheaper wrong answer can
never count as a saving. Cost includes sub-agent cost.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cce_core.foundation.textrules import UNICODE_WHITESPACE, fields_once_hook, plain_sum, round2, round6

EVAL_NOTE = "real end-to-end A/B (cost-primary, correctness-gated, paired)"
PUNT_PHRASES = (
    "i don't know", "i do not know", "i cannot find", "i can't find", "couldn't find", "could not find",
    "unable to", "no information", "not sure", "cannot determine", "n/a", "no answer",
)
CONDITIONS = ("off", "on")

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    must_include: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunRecord:
    question_id: str
    condition: str  # "off" | "on"
    answer: str = ""
    cost_usd: float = 0.0
    subagent_cost_usd: float = 0.0
    punted: bool | None = None

    def total_cost(self) -> float:
        return self.cost_usd + self.subagent_cost_usd


@dataclass(frozen=True)
class ArmSummary:
    runs: int
    correct: int
    incorrect: int
    punts: int
    correct_cost_usd: float
    mean_correct_cost_usd: float


@dataclass(frozen=True)
class AbReport:
    questions: int
    off: ArmSummary
    on: ArmSummary
    paired_correct: int
    paired_off_cost_usd: float
    paired_on_cost_usd: float
    cost_delta_usd: float
    cost_saved_ratio: float
    skipped_runs: int
    note: str = EVAL_NOTE

    def as_json(self) -> dict[str, Any]:
        """The report in declaration order (nested arms included)."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            out[name] = dict(value.__dict__) if isinstance(value, ArmSummary) else value
        return out


# --------------------------------------------------------------------------- reading


class _BadLine(ValueError):
    pass


_KNOWN_FIELDS = frozenset({"id", "question", "must_include", "question_id", "condition", "answer", "cost_usd",
                           "subagent_cost_usd", "punted"})


_strict_object = fields_once_hook(_KNOWN_FIELDS)


def _reject_constant(name: str) -> Any:
    raise _BadLine(f"not JSON: {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _BadLine("number out of range")
    return value


def _decode(line: str) -> Any:
    return json.loads(line, object_pairs_hook=_strict_object, parse_constant=_reject_constant,
                      parse_float=_finite_float)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _question(obj: Any) -> Question:
    if not isinstance(obj, dict):
        raise _BadLine("not an object")
    ident, text = obj.get("id"), obj.get("question")
    needles = obj.get("must_include", [])
    if not isinstance(ident, str) or not isinstance(text, str):
        raise _BadLine("id and question are required strings")
    if not isinstance(needles, list) or not all(isinstance(n, str) for n in needles):
        raise _BadLine("must_include must be a list of strings")
    return Question(ident, text, tuple(needles))


def _run(obj: Any) -> RunRecord:
    if not isinstance(obj, dict):
        raise _BadLine("not an object")
    qid, cond = obj.get("question_id"), obj.get("condition")
    if not isinstance(qid, str) or not isinstance(cond, str):
        raise _BadLine("question_id and condition are required strings")
    condition = cond.strip(UNICODE_WHITESPACE).translate(_ASCII_LOWER)
    if condition not in CONDITIONS:
        raise _BadLine("condition must be 'off' or 'on'")
    answer = obj.get("answer", "")
    cost = obj.get("cost_usd", 0.0)
    sub = obj.get("subagent_cost_usd", 0.0)
    punted = obj.get("punted")
    if not isinstance(answer, str) or not _is_number(cost) or not _is_number(sub):
        raise _BadLine("answer must be a string and costs numbers")
    if punted is not None and not isinstance(punted, bool):
        raise _BadLine("punted must be a boolean")
    return RunRecord(qid, condition, answer, float(cost), float(sub), punted)


def _split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _parse_jsonl(text: str, build: Any) -> tuple[list[Any], int]:
    out: list[Any] = []
    skipped = 0
    for line in _split_lines(text):
        if not line.strip(UNICODE_WHITESPACE):
            skipped += 1  # a blank line counts as skipped, as in the reference
            continue
        try:
            out.append(build(_decode(line)))
        except (ValueError, RecursionError):
            skipped += 1
    return out, skipped


def parse_questions(text: str) -> tuple[list[Question], int]:
    return _parse_jsonl(text, _question)


def parse_runs(text: str) -> tuple[list[RunRecord], int]:
    return _parse_jsonl(text, _run)


# --------------------------------------------------------------------------- grading


def is_punt(answer: str) -> bool:
    """Whether ``answer`` is a non-answer: under three visible characters, or a punt phrase as a whole word.

    A phrase counts only where no ASCII letter or digit touches either end of
    it, so ``n/a`` inside ``common/auth.py`` is a path, not a punt (the
    reference's #106), while "N/A" or "it is n/a here" still are.
    """
    trimmed = answer.strip(UNICODE_WHITESPACE)
    if sum(1 for ch in trimmed if ch not in UNICODE_WHITESPACE) < 3:
        return True
    lower = trimmed.lower()
    return any(_has_bounded_phrase(lower, p) for p in PUNT_PHRASES)


def _is_ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _has_bounded_phrase(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` with no ASCII letter or digit right before or after it."""
    start = text.find(phrase)
    while start != -1:
        end = start + len(phrase)
        open_before = start == 0 or not _is_ascii_alnum(text[start - 1])
        open_after = end == len(text) or not _is_ascii_alnum(text[end])
        if open_before and open_after:
            return True
        start = text.find(phrase, start + 1)
    return False


def grade(question: Question, run: RunRecord) -> str:
    """``"punt"``, ``"incorrect"`` or ``"correct"``."""
    if run.punted is True or is_punt(run.answer):
        return "punt"
    lower = run.answer.lower()
    return "correct" if all(n.lower() in lower for n in question.must_include) else "incorrect"


class _Arm:
    def __init__(self) -> None:
        self.runs = self.correct = self.incorrect = self.punts = 0
        self.costs: list[float] = []

    def record(self, outcome: tuple[str, float] | None) -> None:
        if outcome is None:
            return
        verdict, cost = outcome
        self.runs += 1
        if verdict == "correct":
            self.correct += 1
            self.costs.append(cost)
        elif verdict == "incorrect":
            self.incorrect += 1
        else:
            self.punts += 1

    def finish(self) -> ArmSummary:
        total = plain_sum(self.costs)
        mean = round2(total / self.correct) if self.correct else 0.0
        return ArmSummary(self.runs, self.correct, self.incorrect, self.punts, round2(total), mean)


def evaluate(questions: Sequence[Question], runs: Sequence[RunRecord], skipped_runs: int) -> AbReport:
    by_key = {(r.question_id, r.condition): r for r in runs}  # a later duplicate wins
    by_id = {q.id: q for q in questions}
    off, on = _Arm(), _Arm()
    paired = 0
    paired_off: list[float] = []
    paired_on: list[float] = []
    for qid in sorted(by_id):
        q = by_id[qid]
        off_run, on_run = by_key.get((qid, "off")), by_key.get((qid, "on"))
        off_outcome = (grade(q, off_run), off_run.total_cost()) if off_run is not None else None
        on_outcome = (grade(q, on_run), on_run.total_cost()) if on_run is not None else None
        off.record(off_outcome)
        on.record(on_outcome)
        if off_outcome is not None and on_outcome is not None \
                and off_outcome[0] == "correct" and on_outcome[0] == "correct":
            paired += 1
            paired_off.append(off_outcome[1])
            paired_on.append(on_outcome[1])
    off_cost, on_cost = plain_sum(paired_off), plain_sum(paired_on)
    ratio = round6((off_cost - on_cost) / off_cost) if off_cost > 0.0 else 0.0
    return AbReport(len(questions), off.finish(), on.finish(), paired, round2(off_cost), round2(on_cost),
                    round2(off_cost - on_cost), ratio, skipped_runs)


def evaluate_texts(questions_text: str, runs_text: str) -> AbReport:
    questions, _ = parse_questions(questions_text)
    runs, skipped = parse_runs(runs_text)
    return evaluate(questions, runs, skipped)


def render_text(report: AbReport) -> str:
    def arm(name: str, a: ArmSummary) -> str:
        return (f"  {name:<4}: correct {a.correct}/{a.runs} runs · punts {a.punts} · incorrect {a.incorrect} · "
                f"correct_cost ${a.correct_cost_usd:.2f} · mean ${a.mean_correct_cost_usd:.2f}")

    lines = [
        f"CCE eval — {report.note}",
        f"  questions: {report.questions}   skipped runs: {report.skipped_runs}",
        arm("off", report.off),
        arm("on", report.on),
        f"  paired-correct (both arms): {report.paired_correct}",
        (f"  paired cost: off ${report.paired_off_cost_usd:.2f} · on ${report.paired_on_cost_usd:.2f} · "
         f"saved ${report.cost_delta_usd:.2f}  ({report.cost_saved_ratio * 100.0:.1f}%)"),
    ]
    return "\n".join(lines) + "\n"


def render_json(report: AbReport) -> str:
    from cce_core.observability.usage import dumps_pretty

    return dumps_pretty(report.as_json()) + "\n"
