"""What the command line says about itself: help pages and the unknown-command error.

Why it exists: typer and click generate this text, and three things in it read
badly out of the box. Click 8.5 drops the help text of positional arguments
that typer 0.25 hands it (so ``cce index --help`` listed ``[DIRECTORY]`` with
no explanation), and once restored would list them twice; an option whose help already states its default gets typer's
``[default: ...]`` after it as well; the command list cuts each summary at a
fixed width, often mid-phrase. And a mistyped command was answered with two
suggestions, typer's and click's. :func:`polish` fixes the built command tree
in place, and :func:`usage_error_text` words a usage error, whatever the
installed click version.
"""

from __future__ import annotations

import difflib
import inspect
import re
from typing import Annotated, Any, get_args, get_origin

import click

# Only close spellings: "serch" suggests "search", not "bench" as well.
SUGGESTION_CUTOFF = 0.7
_NO_SUCH_COMMAND = re.compile(r"^No such command (?P<name>'[^']*'|\"[^\"]*\")")
# A sentence ends at a full stop followed by a space or the end, except after "e.g" and "i.e".
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)\.(?=\s|$)")


def first_sentence(help_text: str | None) -> str:
    """The first sentence of a command's help, on one line, without its full stop."""
    text = inspect.cleandoc(help_text or "").partition("\f")[0]
    paragraph = " ".join(text.split("\n\n", 1)[0].split())
    end = _SENTENCE_END.search(paragraph)
    return paragraph[: end.start()] if end else paragraph


def _argument_help(command: click.Command) -> dict[str, str]:
    """Parameter name → the help its ``typer.Argument(help=...)`` declares, read from the function."""
    from typer.models import ArgumentInfo

    callback = getattr(command, "callback", None)
    if callback is None:
        return {}
    try:
        signature = inspect.signature(inspect.unwrap(callback), eval_str=True)
    except (NameError, TypeError, ValueError, SyntaxError):
        return {}
    out: dict[str, str] = {}
    for name, parameter in signature.parameters.items():
        candidates: list[Any] = [parameter.default]
        if get_origin(parameter.annotation) is Annotated:
            candidates += list(get_args(parameter.annotation)[1:])
        for info in candidates:
            if isinstance(info, ArgumentInfo) and info.help:
                out[name] = info.help
    return out


def _arguments_listed_by_typer(_ctx: click.Context, _formatter: click.HelpFormatter) -> None:
    """Typer's option formatter already lists the arguments, under "Arguments"."""


def polish(command: click.Command) -> None:
    """Fix the help of ``command`` and everything under it (see the module docstring)."""
    lost = [p for p in command.params if isinstance(p, click.Argument) and not getattr(p, "help", None)]
    declared = _argument_help(command) if lost else {}
    for argument in lost:
        if argument.name in declared:
            argument.help = declared[argument.name]  # type: ignore[attr-defined]  # typer's arguments carry help
    if any(isinstance(p, click.Argument) for p in command.params) and hasattr(command, "format_arguments"):
        # Click 8.5 would list documented arguments a second time, as "Positional arguments".
        # An instance attribute standing in for the bound method (click's stub types the unbound one, with self).
        command.format_arguments = _arguments_listed_by_typer  # type: ignore[method-assign,assignment]
    for param in command.params:
        help_text = getattr(param, "help", None) or ""
        if "default" in help_text.lower() and hasattr(param, "show_default"):
            param.show_default = False  # the help says it already
    if isinstance(command, click.Group):
        if hasattr(command, "suggest_commands"):
            command.suggest_commands = False  # usage_error_text suggests, once
        for sub in command.commands.values():
            if not sub.short_help:
                # Given whole, the command list wraps it instead of cutting it at the column width.
                sub.short_help = first_sentence(sub.help)
            polish(sub)


def _quoted_list(names: list[str]) -> str:
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def usage_error_text(exc: click.ClickException) -> str:
    """The message of a usage error; an unknown command gets the close spellings, suggested once."""
    message = exc.format_message()
    found = _NO_SUCH_COMMAND.match(getattr(exc, "message", message))
    ctx = getattr(exc, "ctx", None)
    if found is None or ctx is None or not isinstance(ctx.command, click.Group):
        return message
    name = getattr(exc, "command_name", None) or found.group("name")[1:-1]
    visible = [n for n in ctx.command.list_commands(ctx)
               if (sub := ctx.command.get_command(ctx, n)) is not None and not sub.hidden]
    matches = difflib.get_close_matches(name, visible, n=3, cutoff=SUGGESTION_CUTOFF)
    text = f"No such command {name!r}."
    return f"{text} Did you mean {_quoted_list(matches)}?" if matches else text
