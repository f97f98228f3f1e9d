"""``cce update [--check]`` against a loopback stub of the package index's JSON API (no network)."""

from __future__ import annotations

import ast
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import REPO_ROOT, run_cce

from cce_core.maintenance.updates import (
    CORE_DISTRIBUTION,
    Installed,
    UpdateCheck,
    installed_distributions,
    is_newer,
    version_key,
)

PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")


class StubIndex:
    """name → latest version; names it does not hold answer 404, like PyPI for an unpublished plugin."""

    def __init__(self) -> None:
        self.versions: dict[str, str] = {}
        self.requests: list[str] = []


@pytest.fixture
def index() -> Iterator[tuple[StubIndex, str]]:
    stub = StubIndex()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            stub.requests.append(self.path)
            parts = self.path.strip("/").split("/")
            version = stub.versions.get(parts[0]) if len(parts) == 2 and parts[1] == "json" else None
            if version is None:
                self.send_error(404)
                return
            body = json.dumps({"info": {"name": parts[0], "version": version}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def update(url: str | None, *args: str, env_url: str | None = None):
    env = {k: "" for k in PROXY_VARS}
    env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1,localhost"
    if env_url is not None:
        env["CCE_INDEX_URL"] = env_url
    extra = ["--index-url", url] if url is not None else []
    return run_cce("update", *args, *extra, env=env, timeout=60)


def installed() -> list[Installed]:
    return installed_distributions()


def core_version() -> str:
    return next(i.version for i in installed() if i.name == CORE_DISTRIBUTION)


def test_a_newer_core_exits_10_and_names_the_pip_command(index: tuple[StubIndex, str]) -> None:
    stub, url = index
    stub.versions = {i.name: i.version for i in installed()}
    stub.versions[CORE_DISTRIBUTION] = "999.0.0"
    done = update(url, "--check")
    assert done.returncode == 10, done.stdout + done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == "update available:"
    assert lines[1].split() == [CORE_DISTRIBUTION, core_version(), "->", "999.0.0"]
    assert lines[2].startswith("upgrade with: ") and lines[2].endswith(" -m pip install --upgrade cce-core")
    assert done.stderr == ""
    assert sorted(stub.requests) == sorted(f"/{i.name}/json" for i in installed())


def test_nothing_newer_is_up_to_date_and_exit_0(index: tuple[StubIndex, str]) -> None:
    stub, url = index
    stub.versions = {i.name: i.version for i in installed()}
    done = update(None, "--check", env_url=url)  # the URL from the environment
    assert done.returncode == 0, done.stdout + done.stderr
    plugins = len(installed()) - 1
    assert done.stdout == (f"up to date: cce-core {core_version()} and {plugins} plugin{'' if plugins == 1 else 's'} "
                           f"(checked against {url})\n")


def test_plugins_the_index_does_not_know_are_listed(index: tuple[StubIndex, str]) -> None:
    stub, url = index
    stub.versions = {CORE_DISTRIBUTION: core_version()}
    done = update(url, "--check")
    assert done.returncode == 0
    others = [i.name for i in installed() if i.name != CORE_DISTRIBUTION]
    if others:
        assert done.stdout.endswith(f"not on the index (installed from elsewhere): {', '.join(others)}\n")


def test_an_index_that_knows_none_of_them_checked_nothing(index: tuple[StubIndex, str]) -> None:
    # Nothing was compared, so nothing may be called up to date: one error line, exit 1 (docs/updates.md).
    _stub, url = index
    names = ", ".join(i.name for i in installed())
    for args in (("--check",), ()):
        done = update(url, *args)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "up to date" not in done.stdout
        assert done.stderr == (f"error: nothing could be checked: the package index at {url} knows none of the "
                               f"{len(installed())} installed cce distributions ({names}) — they were installed "
                               "from elsewhere; point --index-url (or CCE_INDEX_URL) at the index that has them\n")


def test_up_to_date_counts_only_what_was_checked(index: tuple[StubIndex, str]) -> None:
    stub, url = index
    others = [i for i in installed() if i.name != CORE_DISTRIBUTION]
    if not others:
        pytest.skip("no cce plugin is installed in this environment")
    stub.versions = {CORE_DISTRIBUTION: core_version(), others[0].name: others[0].version}
    done = update(url, "--check")
    assert done.returncode == 0
    assert done.stdout.startswith(f"up to date: cce-core {core_version()} and 1 plugin (checked against {url})\n")


def test_update_refuses_an_editable_install(index: tuple[StubIndex, str]) -> None:
    core = next(i for i in installed() if i.name == CORE_DISTRIBUTION)
    if core.editable_from is None:
        pytest.skip("cce-core is not an editable install in this environment")
    stub, url = index
    stub.versions = {CORE_DISTRIBUTION: "999.0.0"}
    done = update(url)
    assert done.returncode == 1
    assert done.stderr == (f"error: cce-core is an editable install from {core.editable_from} — update that "
                           "checkout (git pull), pip would replace it with a released copy\n")


def test_an_unreachable_index_is_one_error_line(tmp_path: Path) -> None:
    done = update("http://127.0.0.1:9", "--check")
    assert done.returncode == 1
    assert done.stderr.startswith("error: could not reach the package index at http://127.0.0.1:9")
    assert done.stderr.count("\n") == 1
    bad = update("file:///etc", "--check")
    assert bad.stderr == "error: the package index URL must be http(s): file:///etc\n"


def test_the_pip_command_uses_this_interpreter() -> None:
    core = Installed("cce-core", "0.1.0", None)
    check = UpdateCheck("http://x", [core], newer=[(core, "0.2.0")])
    args = check.pip_arguments()
    assert args[1:] == ["-m", "pip", "install", "--upgrade", "cce-core"]
    assert os.path.basename(args[0]).startswith("python")


@pytest.mark.parametrize(("newer", "older"), [
    ("0.3.0", "0.2.0"), ("0.10.0", "0.9.9"), ("1.0", "1.0rc1"), ("1.0rc1", "1.0b2"), ("1.0b1", "1.0a9"),
    ("1.0.post1", "1.0"), ("1.0a1", "1.0.dev1"), ("1.0.1", "1.0"), ("2", "1.9.9"),
])
def test_version_order(newer: str, older: str) -> None:
    assert is_newer(newer, older) and not is_newer(older, newer)


def test_equal_and_unparsable_versions_are_never_newer() -> None:
    assert not is_newer("0.2", "0.2.0") and version_key("0.2") == version_key("0.2.0")
    assert not is_newer("latest", "0.1.0") and version_key("latest") is None


def test_no_network_client_anywhere_else_in_the_engine() -> None:
    clients = ("urllib.request", "http.client", "requests", "httpx", "aiohttp")
    offenders = []
    for path in sorted((REPO_ROOT / "cce_core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == c or n.startswith(c + ".") for n in names for c in clients):
                offenders.append(str(path.relative_to(REPO_ROOT)))
    assert sorted(set(offenders)) == ["cce_core/maintenance/updates.py"]
