"""``cce eval RUNS``: grade recorded A/B agent runs, report the paired cost delta.

The grading is :mod:`cce_core.evaluation.agent_runs`.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cce_core.cli.commands import write_utf8


def register(app: Any) -> None:
    app.command(name="eval")(eval_runs)


def read_input(kind: str, path: str) -> str:
    """The UTF-8 text of an input file; an unreadable one is one `could not read <kind> <path>: ...` error."""
    from pathlib import Path

    from cce_core.foundation.errors import CceError

    try:
        return Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CceError(f"could not read {kind} {path}: stream did not contain valid UTF-8") from exc
    except OSError as exc:
        reason = f"{exc.strerror} (os error {exc.errno})" if exc.strerror and exc.errno else str(exc)
        raise CceError(f"could not read {kind} {path}: {reason}") from exc


def eval_runs(
    runs: Annotated[str, typer.Argument(metavar="RUNS", help="Recorded run outputs (JSONL).")],
    questions: Annotated[
        str, typer.Option(help="The question set with ground truth (JSONL).")
    ] = "eval/questions.jsonl",
    as_json: Annotated[bool, typer.Option("--json", help="Print the full report as JSON.")] = False,
) -> None:
    """Grade recorded off/on agent runs (correctness-gated, cost-primary, paired); no model is called."""
    from cce_core.evaluation.agent_runs import evaluate_texts, render_json, render_text

    question_text = read_input("questions", questions)
    run_text = read_input("runs", runs)
    report = evaluate_texts(question_text, run_text)
    text = render_json(report) if as_json else render_text(report)
    write_utf8(text)
