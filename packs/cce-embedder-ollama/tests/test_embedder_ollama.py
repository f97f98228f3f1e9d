"""The Ollama embedder against a local stub server (no network).

Unit tests drive :class:`cce_embedder_ollama.OllamaEmbedder` directly; the
process-level tests at the bottom run the installed ``cce`` CLI in a
subprocess with ``CCE_OLLAMA_URL`` pointing at the stub. The stub server
(``ollama_stub_server.py``) sits beside this file. Run with
``python -m pytest packs/cce-embedder-ollama/tests``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import cce_embedder_ollama
import numpy as np
import pytest
from cce_embedder_ollama import (
    DEFAULT_MODEL,
    DEFAULT_URL,
    EMBED_BATCH_SIZE,
    MAX_INPUT_CHARS,
    OllamaEmbedder,
)

from cce_core.api import Embedder, EmbedderError, validate_plugin

# The stub server is a helper module beside this file, not an installed one.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
from ollama_stub_server import STUB_DIM, OllamaStub, closed_port_url, stub_vector  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _private_plugin_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Run alone, these tests still keep every cce's entry-point cache out of the user's ~/.cache."""
    if "CCE_CACHE_DIR" in os.environ:  # the core's conftest already set one for the session
        yield
        return
    patch = pytest.MonkeyPatch()
    patch.setenv("CCE_CACHE_DIR", str(tmp_path_factory.mktemp("cce-cache")))
    yield
    patch.undo()


@pytest.fixture
def stub() -> Iterator[OllamaStub]:
    with OllamaStub() as server:
        yield server


@pytest.fixture
def ollama_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("CCE_OLLAMA_URL", "CCE_OLLAMA_MODEL", "CCE_OLLAMA_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def embedder_for(stub: OllamaStub, **kwargs: object) -> OllamaEmbedder:
    return OllamaEmbedder(base_url=stub.url, model="stub-model", timeout=5, **kwargs)  # type: ignore[arg-type]


# -- configuration ---------------------------------------------------------------


def test_defaults_without_env(ollama_env: pytest.MonkeyPatch) -> None:
    emb = OllamaEmbedder()
    assert (emb.base_url, emb.model, emb.timeout) == (DEFAULT_URL, DEFAULT_MODEL, 60.0)
    assert DEFAULT_URL == "http://localhost:11434"
    assert DEFAULT_MODEL == "nomic-embed-text"
    assert emb.name == "ollama"
    assert EMBED_BATCH_SIZE == 64
    assert MAX_INPUT_CHARS == 2000
    assert isinstance(emb, Embedder)


def test_env_url_and_model_are_used(ollama_env: pytest.MonkeyPatch, stub: OllamaStub) -> None:
    ollama_env.setenv("CCE_OLLAMA_URL", stub.url + "/")
    ollama_env.setenv("CCE_OLLAMA_MODEL", "my-embedder")
    ollama_env.setenv("CCE_OLLAMA_TIMEOUT", "2.5")
    emb = OllamaEmbedder()
    assert emb.base_url == stub.url  # trailing slash dropped
    assert emb.model == "my-embedder"
    assert emb.timeout == 2.5
    emb.embed_batch(["hello"])
    assert stub.paths == ["/api/embed"]
    assert stub.requests == [{"model": "my-embedder", "input": ["hello"]}]


@pytest.mark.parametrize("raw", ["soon", "0", "-3", "nan", "inf"])
def test_bad_timeout_env_is_an_embedder_error(ollama_env: pytest.MonkeyPatch, raw: str) -> None:
    ollama_env.setenv("CCE_OLLAMA_TIMEOUT", raw)
    with pytest.raises(EmbedderError, match="CCE_OLLAMA_TIMEOUT must be a positive number"):
        OllamaEmbedder()


def test_the_validators_pass() -> None:
    report = validate_plugin(cce_embedder_ollama)
    assert report.packs == []  # an embedder plugin registers no language pack
    assert report.ok, "\n".join(report.diagnostics)


def test_registered_through_the_installed_entry_point(ollama_env: pytest.MonkeyPatch) -> None:
    from importlib.metadata import entry_points

    (ep,) = [ep for ep in entry_points(group="cce") if ep.name == "ollama"]
    assert ep.value == "cce_embedder_ollama"
    assert ep.dist is not None and ep.dist.name == "cce-embedder-ollama"
    registered: dict[str, Callable[[], Embedder]] = {}
    ep.load().cce_register_embedders(register=registered.setdefault)
    assert list(registered) == ["ollama"]
    assert isinstance(registered["ollama"](), OllamaEmbedder)


# -- the happy path ------------------------------------------------------------------


def test_vectors_shape_dtype_and_values(stub: OllamaStub) -> None:
    texts = ["def f(): pass", "class A: ...", "x"]
    out = embedder_for(stub).embed_batch(texts)
    assert out.dtype == np.float64
    assert out.shape == (3, STUB_DIM)
    assert out.tolist() == [stub_vector(t) for t in texts]


def test_batches_of_64(stub: OllamaStub) -> None:
    texts = [f"text number {i}" for i in range(150)]
    out = embedder_for(stub).embed_batch(texts)
    assert [len(batch) for batch in stub.inputs] == [64, 64, 22]
    assert [t for batch in stub.inputs for t in batch] == texts  # order kept
    assert out.tolist() == [stub_vector(t) for t in texts]


def test_inputs_are_truncated_to_2000_characters(stub: OllamaStub) -> None:
    long_ascii = "a" * 2500
    long_unicode = "é☃" * 1500  # characters, not bytes
    short = "b" * 2000
    embedder_for(stub).embed_batch([long_ascii, long_unicode, short])
    (sent,) = stub.inputs
    assert sent == [long_ascii[:2000], long_unicode[:2000], short]
    assert [len(t) for t in sent] == [2000, 2000, 2000]


def test_empty_texts_get_zero_rows_and_are_not_sent(stub: OllamaStub) -> None:
    emb = embedder_for(stub)
    out = emb.embed_batch(["", "alpha", "", "beta"])
    assert stub.inputs == [["alpha", "beta"]]
    assert out.shape == (4, STUB_DIM)
    assert not out[0].any() and not out[2].any()
    assert out[1].tolist() == stub_vector("alpha")
    assert out[3].tolist() == stub_vector("beta")


def test_all_empty_batch_learns_the_width_once(stub: OllamaStub) -> None:
    emb = embedder_for(stub)
    out = emb.embed_batch(["", ""])
    assert out.shape == (2, STUB_DIM) and not out.any()
    assert stub.inputs == [["ping"]]
    emb.embed_batch([""])
    assert len(stub.requests) == 1  # width is known now
    assert emb.embed_batch([]).shape == (0, STUB_DIM)


def test_embed_query(stub: OllamaStub) -> None:
    emb = embedder_for(stub)
    vec = emb.embed_query("find the parser")
    assert vec.shape == (STUB_DIM,) and vec.dtype == np.float64
    assert vec.tolist() == stub_vector("find the parser")
    assert not emb.embed_query("").any()


def test_healthy_when_the_stub_answers(stub: OllamaStub) -> None:
    emb = embedder_for(stub)
    assert emb.healthy() is True
    assert stub.requests == [{"model": "stub-model", "input": ["ping"]}]
    assert emb.last_error is None
    assert emb.dim == STUB_DIM


def test_a_proxy_setting_does_not_capture_a_local_server(ollama_env: pytest.MonkeyPatch, stub: OllamaStub) -> None:
    dead_proxy = closed_port_url()
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        ollama_env.setenv(name, dead_proxy)
    for name in ("no_proxy", "NO_PROXY"):
        ollama_env.delenv(name, raising=False)
    assert embedder_for(stub).healthy() is True


# -- failing loud ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("http500", r"HTTP 500: stub: the model runner crashed"),
        ("http404", r'HTTP 404: model "stub-model" not found, try pulling it first; run `ollama pull stub-model`'),
        ("badjson", r"the response is not JSON: '<html>definitely not json</html>'"),
        ("missing", r'the response has no "embeddings" list \(is stub-model an embedding model\?\)'),
        ("wrongcount", r"got 2 embedding\(s\) for 3 input\(s\)"),
        ("empty", r"embedding 0 is empty for a non-empty input"),
        ("ragged", r"embedding 1 has 9 dimensions, expected 8; vectors of one index must all have the same length"),
        ("notnumber", r"embedding 0 holds a value that is not a finite number"),
    ],
)
def test_each_bad_answer_is_an_embedder_error(stub: OllamaStub, mode: str, expected: str) -> None:
    stub.mode = mode
    emb = embedder_for(stub)
    with pytest.raises(EmbedderError, match=expected) as info:
        emb.embed_batch(["one", "two", "three"])
    message = str(info.value)
    assert message.startswith(f"Ollama embedding request to {stub.url}/api/embed (model stub-model) failed: ")
    assert info.value.__cause__ is None
    assert emb.last_error is not None and emb.last_error in message
    # The one-text health probe cannot be ragged; every other bad answer fails it too.
    assert emb.healthy() is (mode == "ragged")


def test_width_change_between_batches_is_an_error(stub: OllamaStub) -> None:
    stub.mode, stub.fail_after = "wide", 1
    with pytest.raises(EmbedderError, match="embedding 0 has 9 dimensions, expected 8"):
        embedder_for(stub).embed_batch([f"t{i}" for i in range(70)])
    assert [len(b) for b in stub.inputs] == [64, 6]


def test_failure_in_a_later_batch_raises(stub: OllamaStub) -> None:
    stub.mode, stub.fail_after = "http500", 2
    with pytest.raises(EmbedderError, match="HTTP 500"):
        embedder_for(stub).embed_batch([f"t{i}" for i in range(150)])
    assert [len(b) for b in stub.inputs] == [64, 64, 22]


def test_timeout_is_an_embedder_error(stub: OllamaStub) -> None:
    stub.mode, stub.delay = "slow", 2.0
    emb = OllamaEmbedder(base_url=stub.url, model="m", timeout=0.2)
    with pytest.raises(EmbedderError, match=r"no answer within 0\.2s; set CCE_OLLAMA_TIMEOUT to wait longer"):
        emb.embed_query("slowly")


def test_connection_refused(ollama_env: pytest.MonkeyPatch) -> None:
    url = closed_port_url()
    ollama_env.setenv("CCE_OLLAMA_URL", url)
    emb = OllamaEmbedder()
    with pytest.raises(EmbedderError, match=r"failed: connection refused$"):
        emb.embed_batch(["hello"])
    with pytest.raises(EmbedderError, match="connection refused"):
        emb.embed_query("hello")
    assert emb.healthy() is False
    assert emb.last_error == "connection refused"


def test_stopped_stub_refuses() -> None:
    with OllamaStub() as server:
        emb = embedder_for(server)
        assert emb.healthy() is True
    assert emb.healthy() is False
    with pytest.raises(EmbedderError, match="connection refused"):
        emb.embed_batch(["after the stop"])


def test_bad_url_scheme_is_an_embedder_error() -> None:
    for url in ("localhost:11434", "ftp://127.0.0.1:21", "http://", "http://127.0.0.1:port"):
        emb = OllamaEmbedder(base_url=url, model="m", timeout=1)
        with pytest.raises(
            EmbedderError, match=rf"bad CCE_OLLAMA_URL '{re.escape(emb.base_url)}': expected http://host:port$"
        ):
            emb.embed_batch(["x"])
        assert emb.healthy() is False


def test_unreachable_messages_name_url_model_and_cause() -> None:
    emb = OllamaEmbedder(base_url=closed_port_url(), model="nomic-embed-text", timeout=2)
    assert emb.healthy() is False
    index_msg = emb.unavailable_message("index")
    assert index_msg == (
        f"Ollama is unreachable at {emb.base_url} (connection refused) — refusing to index with "
        "--embedder ollama. Start Ollama (and `ollama pull nomic-embed-text`), or index with the default "
        "hash embedder (drop --embedder ollama)."
    )
    search_msg = emb.unavailable_message("search")
    assert search_msg.startswith(
        f"this index was built with the ollama embedder but Ollama is unreachable at {emb.base_url} "
        "(connection refused) — refusing to search across mismatched embedding spaces. Start Ollama"
    )
    assert search_msg.endswith("or re-index with the default hash embedder (`cce index <dir>`).")
    fresh = OllamaEmbedder(base_url="http://127.0.0.1:9", model="m")  # never probed: no cause to quote
    assert "unreachable at http://127.0.0.1:9 — refusing" in fresh.unavailable_message("index")


# -- process level: the installed `cce` CLI --------------------------------------------

CCE = shutil.which("cce", path=str(Path(sys.executable).parent)) or shutil.which("cce")


def _cli_ready() -> str | None:
    """Why the process-level tests cannot run (None when they can)."""
    if CCE is None:
        return "the `cce` console script is not installed"
    return None


cli = pytest.mark.skipif(_cli_ready() is not None, reason=str(_cli_ready()))

N_FUNCTIONS = 150  # > 2 batches of 64 chunks, so a mid-index failure is really mid-index


def make_project(root: Path) -> Path:
    project = root / "project"
    project.mkdir()
    lines: list[str] = []
    for i in range(N_FUNCTIONS):
        lines += [f"def handler_{i}(request):", f'    """Handle request kind {i}."""', f"    return request + {i}", ""]
    (project / "handlers.py").write_text("\n".join(lines), encoding="utf-8")
    (project / "auth.py").write_text(
        "def hash_password(password):\n    return password[::-1]\n\n\nclass Login:\n    def check(self, user):\n"
        "        return hash_password(user)\n",
        encoding="utf-8",
    )
    return project


def run_cce(
    *args: str | Path, url: str, cwd: Path, model: str = "stub-model", timeout: str = "10"
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCE_") or k == "CCE_CACHE_DIR"}
    env.update({"CCE_OLLAMA_URL": url, "CCE_OLLAMA_MODEL": model, "CCE_OLLAMA_TIMEOUT": timeout})
    assert CCE is not None
    return subprocess.run(
        [CCE, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def store_of(project: Path) -> Path:
    return project / ".cce" / "index.cce"


def assert_one_error_line(result: subprocess.CompletedProcess[str], *fragments: str) -> str:
    assert result.returncode != 0, result
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


@cli
def test_cli_lists_the_installed_embedder(tmp_path: Path, stub: OllamaStub) -> None:
    # The engine finds the plugin through its entry point and builds the embedder from the environment.
    result = run_cce("packs", "--json", url=stub.url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (row,) = [e for e in json.loads(result.stdout)["embedders"] if e["name"] == "ollama"]
    assert (row["distribution"], row["model"], row["problem"]) == ("cce-embedder-ollama", "stub-model", None)


@cli
def test_cli_index_stats_search_with_ollama(tmp_path: Path, stub: OllamaStub) -> None:
    project = make_project(tmp_path)
    result = run_cce("index", project, "--embedder", "ollama", url=stub.url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert store_of(project).is_file()
    embed_requests = [r for r in stub.requests if r.get("input") != ["ping"]]
    assert embed_requests, "the index run never asked the stub for vectors"
    assert all(len(r["input"]) <= 64 for r in stub.requests)
    assert all(r["model"] == "stub-model" for r in stub.requests)
    assert sum(len(r["input"]) for r in embed_requests) >= N_FUNCTIONS

    stats = run_cce("stats", "--dir", project, url=stub.url, cwd=tmp_path)
    assert stats.returncode == 0, stats.stderr

    before = len(stub.requests)
    found = run_cce("search", "hash password", "--dir", project, "--json", url=stub.url, cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    payload = json.loads(found.stdout)
    assert payload["results"], payload
    queried = [r["input"] for r in stub.requests[before:]]
    assert ["hash password"] in queried, queried


@cli
def test_cli_index_refuses_when_ollama_is_down(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    url = closed_port_url()
    result = run_cce("index", project, "--embedder", "ollama", url=url, cwd=tmp_path)
    assert_one_error_line(result, f"Ollama is unreachable at {url}", "ollama pull stub-model", "--embedder ollama")
    assert not store_of(project).exists()


@cli
def test_cli_index_failing_mid_run_leaves_no_store(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    with OllamaStub("http500", fail_after=2) as failing:  # the health probe and one batch succeed
        result = run_cce("index", project, "--embedder", "ollama", url=failing.url, cwd=tmp_path)
        assert len(failing.requests) >= 3, failing.inputs
    assert_one_error_line(result, "HTTP 500", failing.url)
    assert not store_of(project).exists()
    leftovers = list((project / ".cce").glob("*")) if (project / ".cce").exists() else []
    # The writers' lock file (index.cce.lock) stays by design; no store, segment or temp file may.
    assert not [p for p in leftovers if p.name.startswith("index") and p.suffix != ".lock"], leftovers


@cli
@pytest.mark.parametrize("mode", ["http500", "badjson", "wrongcount"])
def test_cli_failed_reindex_keeps_the_previous_store(tmp_path: Path, stub: OllamaStub, mode: str) -> None:
    project = make_project(tmp_path)
    first = run_cce("index", project, "--embedder", "ollama", url=stub.url, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = store_of(project).read_bytes()

    (project / "extra.py").write_text("def brand_new():\n    return 1\n", encoding="utf-8")
    # Unchanged files may be reused, so the new file's batch may be the only one: fail right after the probe.
    with OllamaStub(mode, fail_after=1) as failing:
        result = run_cce("index", project, "--embedder", "ollama", url=failing.url, cwd=tmp_path)
    assert_one_error_line(result, failing.url)
    assert store_of(project).read_bytes() == before


@cli
def test_cli_search_refuses_when_ollama_stopped(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    with OllamaStub() as server:
        built = run_cce("index", project, "--embedder", "ollama", url=server.url, cwd=tmp_path)
        assert built.returncode == 0, built.stderr
        url = server.url
    result = run_cce("search", "hash password", "--dir", project, url=url, cwd=tmp_path)
    assert_one_error_line(
        result,
        "this index was built with the ollama embedder but Ollama is unreachable at " + url,
        "refusing to search across mismatched embedding spaces",
        "cce index <dir>",
    )
    assert result.stdout == ""


@cli
def test_cli_search_embedder_failure_after_probe_is_a_plain_error(tmp_path: Path, stub: OllamaStub) -> None:
    project = make_project(tmp_path)
    assert run_cce("index", project, "--embedder", "ollama", url=stub.url, cwd=tmp_path).returncode == 0
    with OllamaStub("http500", fail_after=1) as failing:  # the health probe passes, the query embed fails
        result = run_cce("search", "hash password", "--dir", project, url=failing.url, cwd=tmp_path)
    line = assert_one_error_line(result, "HTTP 500", failing.url)
    assert "internal error" not in line


@cli
def test_cli_bad_timeout_is_a_plain_error(tmp_path: Path, stub: OllamaStub) -> None:
    project = make_project(tmp_path)
    result = run_cce("index", project, "--embedder", "ollama", url=stub.url, cwd=tmp_path, timeout="soon")
    line = assert_one_error_line(result, "CCE_OLLAMA_TIMEOUT must be a positive number of seconds")
    assert "internal error" not in line
    assert not store_of(project).exists()


@cli
def test_cli_reindex_with_another_model_reembeds_everything(tmp_path: Path, stub: OllamaStub) -> None:
    project = make_project(tmp_path)
    assert run_cce("index", project, "--embedder", "ollama", url=stub.url, cwd=tmp_path).returncode == 0
    stub.requests.clear()
    again = run_cce("index", project, "--embedder", "ollama", url=stub.url, cwd=tmp_path, model="other-model")
    assert again.returncode == 0, again.stderr
    sent = [t for r in stub.requests if r.get("input") != ["ping"] for t in r["input"]]
    assert len(sent) >= N_FUNCTIONS, "unchanged files kept the vectors of the previous model"


@cli
def test_cli_search_with_another_model_refuses(tmp_path: Path, stub: OllamaStub) -> None:
    project = make_project(tmp_path)
    assert run_cce("index", project, "--embedder", "ollama", url=stub.url, cwd=tmp_path).returncode == 0
    result = run_cce("search", "hash password", "--dir", project, url=stub.url, cwd=tmp_path, model="other-model")
    assert_one_error_line(result, "stub-model", "other-model")
