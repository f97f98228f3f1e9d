"""The ``cce`` command line: parse arguments, call the library, render.

No ranking or indexing logic lives here. Every failure a user can cause ends
as one ``error: ...`` line on stderr and a non-zero exit, never a traceback
(set ``CCE_DEBUG=1`` to see one while developing).
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import click
import typer

from cce_core import __version__
from cce_core.cli.startup_gc import defer_collection, settle_before_exit
from cce_core.foundation.errors import CceError
from cce_core.hookspecs import EmbedderError

app = typer.Typer(
    name="cce",
    help="cce — a local code context engine: index a repository, then search it by meaning and keywords.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"cce {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", "-V", help="Print the version and exit.", callback=_version_callback,
                           is_eager=True)
    ] = False,
) -> None:
    """cce — a local code context engine for AI coding agents."""


def _app_for(args: list[str]) -> typer.Typer:
    """The app with the commands this run needs registered.

    Every command is a module of :mod:`cce_core.cli.commands` named after it.
    When argv names one, only that module is imported and registered: turning a
    typer app into click commands inspects every command's signature (tens of
    milliseconds for all of them), and a one-shot ``cce search`` needs just its
    own. Help and anything unrecognised get every command, so usage errors and
    the command list read the same as always.
    """
    from cce_core.cli.commands import register_all, register_one

    name = args[0] if args and not args[0].startswith("-") else None
    if name is None or not register_one(app, name):
        register_all(app)
    return app


def build_command(args: list[str]) -> click.Group:
    """The click command tree for ``args``: the commands it needs, with their help text polished."""
    from cce_core.cli.usage_text import polish

    command = typer.main.get_command(_app_for(args))
    polish(command)
    return command  # type: ignore[return-value]  # the root app has a callback, so it is a group


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):  # fast path: no plugin discovery, no typer
        sys.stdout.write(f"cce {__version__}\n")
        return
    if not args:
        args = ["--help"]
    # One query is one matrix-vector product: OpenBLAS's thread pool only costs
    # start-up time here (about 50 ms). A value the user set is left alone.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # main is the whole life of a cce process: the cyclic collector waits out its
    # start-up and skips its exit (about 30 ms of CPU; see startup_gc).
    defer_collection()
    try:
        _run(args)
    finally:
        settle_before_exit()


def _run(args: list[str]) -> None:
    """Build the command tree ``args`` needs and run it; every failure becomes one ``error:`` line."""
    command = build_command(args)
    try:
        # Outside standalone mode typer returns, rather than raises, the exit status of a command that
        # ended through typer.Exit, and of a KeyboardInterrupt (130): it must not become a silent exit 0.
        status = command.main(args=args, prog_name="cce", standalone_mode=False)
        if status == 130:
            raise KeyboardInterrupt
        if isinstance(status, int) and not isinstance(status, bool) and status != 0:
            sys.exit(status)
    except (CceError, EmbedderError) as exc:
        _fail(str(exc), 1)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:  # usage errors: bad option, missing argument, bad value
        from cce_core.cli.usage_text import usage_error_text

        _fail(usage_error_text(exc), exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        _fail("interrupted", 130)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as exc:  # the last line of defence: never show a traceback to a user
        if os.environ.get("CCE_DEBUG"):
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (set CCE_DEBUG=1 for details)", 1)


def _fail(message: str, code: int) -> None:
    first, *_ = message.strip().splitlines() or [""]
    sys.stderr.write(f"error: {first}\n")
    sys.stderr.flush()
    sys.exit(code)


if __name__ == "__main__":
    main()
