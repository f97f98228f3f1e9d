"""``cce corpus serve [--dir D] [--port N] [--host H] [--token-file F] [--top-k N]``: the knowledge store over HTTP.

A loopback-only, read-only ``GET /docs?service=NAME`` for a triage service on
the same machine; every request must carry ``Authorization: Bearer <token>``
(the token from ``--token-file`` or ``CCE_CORPUS_TOKEN``). The route itself is
:mod:`cce_core.knowledge.corpus_server`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def serve(
    dir_: Annotated[Path, typer.Option("--dir", help="Project root whose .cce/knowledge/ store is served "
                                                     "(default: .).", show_default=False)] = Path("."),
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on (0 = any free port, printed at "
                                                             "start).")] = 8799,
    host: Annotated[str, typer.Option(help="Loopback address to listen on: 127.0.0.1, ::1 or localhost; any "
                                           "other address is refused.")] = "127.0.0.1",
    token_file: Annotated[Path | None, typer.Option(
        "--token-file", help="File holding the bearer token clients must send (keeps it out of the process "
                             "list); default: the CCE_CORPUS_TOKEN environment variable.")] = None,
    top_k: Annotated[int, typer.Option("--top-k", min=0, help="Most docs in one answer.")] = 10,
) -> None:
    """Serve GET /docs?service=NAME from the knowledge store on loopback, bearer token required, until Ctrl-C."""
    from cce_core.cli.startup_gc import start_work
    from cce_core.services.corpus import open_corpus_server

    opened = open_corpus_server(dir_, host, port, token_file, top_k)
    server = opened.server
    try:
        print(f"cce corpus serve: serving {server.url}?service=…  (loopback only, read-only, bearer token "
              "required)", flush=True)
        print(f"knowledge store : {dir_ / '.cce' / 'knowledge'} ({opened.sections} sections)",
              flush=True)
        print("press Ctrl-C to stop.", flush=True)
        start_work()  # a server lives on: collect as usual from here (see startup_gc)
        server.serve_forever()
    except KeyboardInterrupt:
        print("\ncce corpus serve: stopped.", flush=True)
    finally:
        server.close()


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Serve the knowledge corpus to other local programs.", no_args_is_help=True)
    group.command("serve")(serve)
    app.add_typer(group, name="corpus")
