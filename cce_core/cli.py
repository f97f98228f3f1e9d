"""The ``cce`` command line: parse arguments, call the library, render.

No ranking or indexing logic lives here. Every failure a user can cause ends
as one ``error: ...`` line on stderr and a non-zero exit, never a traceback
(set ``CCE_DEBUG=1`` to see one while developing).
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Annotated

import click
import typer

from . import __version__
from .errors import CceError
from .hookspecs import EmbedderError

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


def _host():
    from .plugins import default_host

    host = default_host()
    host.require_healthy()
    return host


def _require_dir(path: Path) -> Path:
    if not path.exists():
        raise CceError(f"no such directory: {path}")
    if not path.is_dir():
        raise CceError(f"not a directory: {path}")
    return path


def _store_for_read(store: Path | None, dir_: Path | None) -> Path:
    from .store import default_store_path

    return store if store is not None else default_store_path(dir_ if dir_ is not None else Path("."))


def _searcher(store_path: Path):
    from .plugins import host_for_embedder
    from .retrieval import Searcher
    from .store import load_store

    data = load_store(store_path)
    # A search needs the embedder that built the store, not the language packs.
    host = host_for_embedder(data.embedder or "hash")
    host.require_healthy()
    return Searcher(data, _embedder_for(host, data))


def _embedder_for(host, data):
    """The embedder that built ``data``, checked to be reachable and set to the same model."""
    embedder_name = data.embedder or "hash"
    embedder = host.embedder(embedder_name)
    healthy = getattr(embedder, "healthy", None)
    if healthy is not None and not healthy():
        message = getattr(sys.modules.get(type(embedder).__module__), "search_unreachable_message", None)
        raise CceError(message(embedder) if message
                       else f'the "{embedder_name}" embedder that built this index is unavailable')
    built_with = str(data.meta.get("embed_model", "") or "")
    configured = str(getattr(embedder, "model", "") or "")
    if built_with != configured:
        raise CceError(f'this index was built with the {embedder_name} model "{built_with}" but the embedder is now '
                       f'set to "{configured}" — re-index, or configure the model the index was built with')
    return embedder


@app.command()
def index(
    directory: Annotated[Path | None, typer.Argument(help="Repository to index (the workspace root with "
                                                     "--workspace, default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Store file (default: DIR/.cce/index.cce).")] = None,
    embedder: Annotated[str, typer.Option(help="Embedder: hash (default) or any installed one, e.g. ollama.")] = "hash",
    allow_secrets: Annotated[
        bool, typer.Option("--allow-secrets", help="Index sensitive files and keep secrets verbatim (unsafe).")
    ] = False,
    no_metrics: Annotated[
        bool, typer.Option("--no-metrics", help="Do not append an index event to the metrics log.")
    ] = False,
    workspace: Annotated[
        bool, typer.Option("--workspace", help="Index every member of the workspace at DIRECTORY into its own store.")
    ] = False,
) -> None:
    """Walk DIRECTORY, chunk every file, embed the chunks and save the index."""
    from .index_runs import index_one
    from .store import default_store_path

    if workspace:
        _index_workspace(directory if directory is not None else Path("."), embedder, allow_secrets, no_metrics)
        return
    if directory is None:
        raise CceError("index requires a directory (or pass --workspace)")
    _require_dir(directory)
    host = _host()
    emb = _index_embedder(host, embedder)
    if allow_secrets:
        typer.echo(
            "warning: --allow-secrets set — secret protection is DISABLED; sensitive files will be indexed "
            "and secrets stored verbatim",
            err=True,
        )
    store_path = store if store is not None else default_store_path(directory)
    _data, stats = index_one(directory, store_path, host, emb, protect_secrets=not allow_secrets,
                             log_metrics=not no_metrics)
    typer.echo(f"Indexed {directory}")
    typer.echo(f"  files indexed     : {stats.files_indexed}")
    typer.echo(f"  files skipped     : {stats.files_skipped}")
    typer.echo(f"  sensitive skipped : {stats.sensitive_skipped}")
    typer.echo(f"  total chunks      : {stats.total_chunks}")
    typer.echo(f"  embedder          : {emb.name}")
    typer.echo(f"  store             : {store_path}")
    typer.echo(f"  elapsed           : {stats.seconds:.3f}s")


def _index_embedder(host, name: str):
    emb = host.embedder(name)
    healthy = getattr(emb, "healthy", None)
    if healthy is not None and not healthy():
        message = getattr(sys.modules.get(type(emb).__module__), "index_unreachable_message", None)
        raise CceError(message(emb) if message else f'the "{name}" embedder is unavailable')
    return emb


def _index_workspace(root: Path, embedder: str, allow_secrets: bool, no_metrics: bool) -> None:
    """Index each member exactly as ``cce index MEMBER`` would, then write the member graph."""
    from .index_runs import MemberRun, check_member_dirs, index_workspace
    from .workspace import graph_path, load_manifest

    if not root.is_dir():
        raise CceError(f"not a directory: {root}")
    manifest = load_manifest(root)  # before plugin discovery: a bad manifest fails fast
    check_member_dirs(root, manifest)
    host = _host()
    emb = _index_embedder(host, embedder)
    if allow_secrets:
        typer.echo("warning: --allow-secrets set — secret protection is DISABLED for every member", err=True)
    typer.echo(f"Indexing workspace: {manifest.name}")

    def report(run: MemberRun) -> None:
        shown = os.path.join(str(root), run.path, *run.store_path.relative_to(root / run.path).parts)
        counts = f"files {run.stats.files_indexed:>4} · chunks {run.stats.total_chunks:>4}"
        typer.echo(f"  {run.name:<16} {counts} · {shown}")

    _manifest, graph, runs = index_workspace(root, host, emb, protect_secrets=not allow_secrets,
                                             log_metrics=not no_metrics, on_member=report)
    total_files = sum(r.stats.files_indexed for r in runs)
    total_chunks = sum(r.stats.total_chunks for r in runs)
    typer.echo(f"workspace totals: files {total_files} · chunks {total_chunks}")
    typer.echo(f"cross-member edges ({len(graph.edges)}) → {graph_path(root)}")


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in words or identifiers.")],
    directory: Annotated[Path | None, typer.Argument(help="Indexed directory, or the workspace root with "
                                                     "--workspace (same as --dir).")] = None,
    dir_: Annotated[Path | None, typer.Option("--dir", help="Indexed directory (default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Store file (overrides --dir).")] = None,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="How many results.")] = 10,
    no_graph: Annotated[bool, typer.Option("--no-graph", help="Skip import-graph expansion.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    no_metrics: Annotated[
        bool, typer.Option("--no-metrics", help="Do not append a search event to the metrics log.")
    ] = False,
    workspace: Annotated[
        bool, typer.Option("--workspace", help="Search every member of the workspace at DIRECTORY as one index.")
    ] = False,
    package: Annotated[
        str | None, typer.Option("--package", help="With --workspace: only these members (comma-separated names "
                                                   "or package: values).")
    ] = None,
) -> None:
    """Rank the indexed chunks for QUERY."""
    import time

    from .textrules import format6, tokenize

    if not tokenize(query):
        raise CceError("the query has no searchable words — give letters, digits or identifiers to look for")
    if package is not None and not workspace:
        raise CceError("--package scopes a workspace search — add --workspace")
    if workspace:
        root = directory if directory is not None else dir_ if dir_ is not None else Path(".")
        _search_workspace(query, root, package, top_k, not no_graph, as_json)
        return
    store_path = _store_for_read(store, dir_ or directory)
    searcher = _searcher(store_path)
    started = time.perf_counter()
    results = searcher.search(query, top_k=top_k, graph=not no_graph)
    latency_ms = (time.perf_counter() - started) * 1000.0
    query_id = None
    if not no_metrics:
        query_id = _log_search_event(searcher.store, store_path, results, query, top_k, not no_graph, latency_ms)
    if as_json:
        body = {"query_id": query_id, "results": [r.as_json() for r in results]}
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        return
    if not results:
        typer.echo("(no results)")
    for r in results:
        c = r.chunk
        first_line = c.content.split("\n", 1)[0].removesuffix("\r")[:80].strip()
        typer.echo(f"{r.rank:>2}. [{format6(r.score)}] {c.file_path}:{c.start_line}-{c.end_line} "
                   f"({c.chunk_type}/{c.kind})\n    {first_line}")
    if query_id is not None:
        typer.echo(f"query-id: {query_id}  ·  rate with: cce feedback {query_id} --helpful|--not-helpful")


def _search_workspace(query: str, root: Path, package: str | None, top_k: int, graph: bool, as_json: bool) -> None:
    """One ranking over the union of the members; like the reference, it records no metrics."""
    from .federation import (
        FederatedSearcher,
        check_same_embedder,
        combined_store,
        federated_search,
        load_member_stores,
        parse_scope,
    )
    from .workspace import load_graph_or_empty, load_manifest

    manifest = load_manifest(root)
    scope = parse_scope(package)
    members = load_member_stores(root, manifest, scope)
    check_same_embedder(members)
    ws_graph = load_graph_or_empty(root, manifest)
    union = combined_store(members)
    host = _host()
    embedder = _embedder_for(host, members[0].data) if members else host.embedder("hash")
    results = federated_search(FederatedSearcher(union, embedder, ws_graph), members, query, top_k, graph)
    if as_json:
        from .metrics import new_event_id

        body = {"query_id": new_event_id(), "results": [r.as_json() for r in results]}
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        return
    if not results:
        typer.echo("(no results)")
    for r in results:
        typer.echo(r.human_line())


def _log_search_event(data, store_path: Path, results, query: str, top_k: int, graph: bool,
                      latency_ms: float) -> str | None:
    """Append the search event beside the store; its id, or None when the write failed."""
    from .metrics import MetricsWriter, metrics_beside
    from .savings import build_search_record

    record = build_search_record(results, data.file_tokens, query, top_k, graph, data.embedder or "hash",
                                 latency_ms, source="cli")
    return MetricsWriter(metrics_beside(store_path)).log_search(record)


@app.command()
def stats(
    directory: Annotated[Path | None, typer.Argument(help="Indexed directory (same as --dir).")] = None,
    dir_: Annotated[Path | None, typer.Option("--dir", help="Indexed directory (default: .).")] = None,
    store: Annotated[Path | None, typer.Option(help="Store file (overrides --dir).")] = None,
    workspace: Annotated[
        bool, typer.Option("--workspace", help="Per-member statistics of the workspace at DIRECTORY.")
    ] = False,
) -> None:
    """Summarise an index: chunks, files, tokens, and counts by language and kind."""
    from collections import Counter

    from .store import load_store

    if workspace:
        _stats_workspace(directory if directory is not None else dir_ if dir_ is not None else Path("."))
        return

    store_path = _store_for_read(store, dir_ or directory)
    data = load_store(store_path)
    n = len(data.chunks)
    total_tokens = sum(c.token_count for c in data.chunks)
    by_lang = Counter(c.language for c in data.chunks)
    by_kind = Counter(c.kind for c in data.chunks)
    typer.echo(f"Store: {store_path}")
    typer.echo(f"  chunks         : {n}")
    typer.echo(f"  files          : {len(data.files)}")
    typer.echo(f"  avg token/chunk: {(total_tokens / n if n else 0.0):.1f}")
    typer.echo(f"  store size     : {data.size_bytes} bytes")
    typer.echo(f"  embedder       : {data.embedder}")
    typer.echo("  by language:")
    for lang in sorted(by_lang):
        typer.echo(f"    {lang:<12}: {by_lang[lang]}")
    typer.echo("  by kind:")
    for kind in sorted(by_kind):
        typer.echo(f"    {kind:<20}: {by_kind[kind]}")


def _stats_workspace(root: Path) -> None:
    from .federation import load_member_stores, workspace_stats
    from .workspace import edge_line, load_graph_or_empty, load_manifest

    manifest = load_manifest(root)
    members = load_member_stores(root, manifest, None)
    graph = load_graph_or_empty(root, manifest)
    typer.echo(f"workspace: {manifest.name}")
    total_files = total_chunks = 0
    for s in workspace_stats(members):
        total_files += s.files
        total_chunks += s.chunks
        typer.echo(f"  {s.name} (package {s.package})")
        typer.echo(f"    files : {s.files}")
        typer.echo(f"    chunks: {s.chunks}")
        for kind, n in s.by_kind.items():
            typer.echo(f"      {kind:<18}: {n}")
    typer.echo(f"totals: files {total_files} · chunks {total_chunks}")
    typer.echo(f"edges ({len(graph.edges)}):")
    for e in graph.edges:
        typer.echo(edge_line(e))


@app.command()
def packs(
    validate: Annotated[bool, typer.Option("--validate", help="Run all three validator layers.")] = False,
) -> None:
    """List the installed language packs, or validate them."""
    from importlib.metadata import PackageNotFoundError, version

    from .plugins import default_host
    from .validators import validate_all

    host = default_host()
    if validate:
        startup, reports = validate_all(host)
        for problem in startup:
            typer.echo(problem)
        failed = 0
        for report in reports:
            if report.ok:
                typer.echo(f"[pack:{report.name}] ok")
            else:
                failed += 1
                for d in report.diagnostics:
                    typer.echo(d)
        if startup or failed:
            raise CceError(f"{failed + len(startup)} problem(s) found — see the diagnostics above")
        typer.echo(f"all {len(reports)} packs passed validation")
        return

    def dist_version(name: str) -> str:
        try:
            return version(name) if name else "?"
        except PackageNotFoundError:
            return "?"

    for problem in host.startup_problems():
        typer.echo(f"warning: {problem}", err=True)
    registered = host.packs.packs
    typer.echo(f"Registered language packs ({len(registered)}):")
    if not registered:
        typer.echo("  (none installed — every file indexes as one module chunk; pip install cce-pack-<language>)")
    for p in registered:
        try:
            kinds = str(p.grammar().node_kind_count)
        except Exception:
            kinds = "?"
        grammar = f"{p.grammar_distribution} {dist_version(p.grammar_distribution)}" if p.grammar_distribution else "?"
        typer.echo(
            f"  {p.name:<12} {','.join(p.extensions):<24} {len(p.function_types)} fn / {len(p.class_types)} class "
            f"types · grammar {grammar} ({kinds} node kinds) · from {p.distribution or '?'} "
            f"{dist_version(p.distribution)}"
        )
    typer.echo(f"pack_set_id: {host.packs.pack_set_id}")


@app.command()
def conformance(
    fixture_dir: Annotated[Path, typer.Argument(help="Directory to chunk (e.g. samples).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the JSON.")] = Path(
        "conformance.json"),
) -> None:
    """Write the cross-engine conformance JSON for FIXTURE_DIR."""
    from .conformance import conformance_json
    from .store import atomic_write

    _require_dir(fixture_dir)
    text = conformance_json(fixture_dir, _host())
    try:
        atomic_write(output, text.encode("utf-8"))
    except OSError as exc:
        raise CceError(f"could not write {output}: {exc.strerror or exc}") from exc
    typer.echo(f"wrote {output}")


@app.command()
def bench(
    repo_dir: Annotated[Path, typer.Argument(help="Repository checkout to benchmark (indexed whole, like cce index).")],
    lang: Annotated[
        str | None, typer.Option(help="Labeled query set from cce_core/data/bench_queries.json (default: flask set).")
    ] = None,
    name: Annotated[str | None, typer.Option(help="Corpus label for the report (default per --lang).")] = None,
    commit: Annotated[str | None, typer.Option(help="Commit to record (default: git HEAD of REPO_DIR).")] = None,
    queries: Annotated[Path | None, typer.Option(help="JSON query set to use instead of the built-in one.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Also write a Markdown report here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of the summary.")] = False,
) -> None:
    """Index REPO_DIR in memory and measure recall, token savings and latency."""
    from .bench import run_bench
    from .store import atomic_write

    _require_dir(repo_dir)
    host = _host()
    report = run_bench(repo_dir, lang=lang, name=name, commit=commit, queries_file=queries, host=host,
                       embedder=host.embedder("hash"))
    if output is not None:
        try:
            atomic_write(output, report.markdown().encode("utf-8"))
        except OSError as exc:
            raise CceError(f"could not write {output}: {exc.strerror or exc}") from exc
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
        return
    for line in report.summary_lines():
        typer.echo(line)
    if output is not None:
        typer.echo(f"  wrote        : {output}")


def _register_extra_commands() -> None:
    from .commands import register_all

    register_all(app)


_register_extra_commands()


def _app_for(args: list[str]) -> typer.Typer:
    """The app to build: only the sub-command being run when argv names one.

    Turning a typer app into click commands inspects every command's signature
    and evaluates its annotations (tens of milliseconds for all of them); a
    one-shot ``cce search`` needs just its own. Help, completion and anything
    unrecognised get the whole app, so usage errors read the same.
    """
    name = args[0] if args and not args[0].startswith("-") else None
    if name is None:
        return app
    from typer.main import get_command_name

    slim = copy.copy(app)
    for info in app.registered_commands:
        if (info.name or get_command_name(info.callback.__name__ if info.callback else "")) == name:
            slim.registered_commands, slim.registered_groups = [info], []
            return slim
    for group in app.registered_groups:
        if (group.name or (group.typer_instance.info.name if group.typer_instance else None)) == name:
            slim.registered_commands, slim.registered_groups = [], [group]
            return slim
    return app


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
    command = typer.main.get_command(_app_for(args))
    try:
        command.main(args=args, prog_name="cce", standalone_mode=False)
    except (CceError, EmbedderError) as exc:
        _fail(str(exc), 1)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:  # usage errors: bad option, missing argument, bad value
        _fail(exc.format_message(), exc.exit_code)
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
