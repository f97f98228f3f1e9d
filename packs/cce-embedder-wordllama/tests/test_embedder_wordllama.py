"""The wordllama embedder: its text rule, determinism, offline index + search, its identity and refusals.

Needs the plugin installed with its one command (``pip install
packs/cce-embedder-wordllama``, which pulls the ``wordllama`` weights carrier);
the module is skipped otherwise. Nothing is built on first use, so every test
is quick. Run with ``python -m pytest packs/cce-embedder-wordllama/tests``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

wordllama_plugin = pytest.importorskip("cce_embedder_wordllama")
if importlib.util.find_spec("wordllama") is None:  # pragma: no cover - depends on the environment
    pytest.skip("the wordllama weights carrier is not installed", allow_module_level=True)

from cce_embedder_wordllama import (  # noqa: E402
    EMBED_DIM,
    MAX_PIECES,
    MODEL_ID,
    WordLlamaEmbedder,
    split_identifiers,
    usable_token,
)
from cce_embedder_wordllama.weights import MODEL_DIR_ENV  # noqa: E402

from cce_core.api import Embedder, EmbedderError  # noqa: E402

CCE = shutil.which("cce", path=str(Path(sys.executable).parent)) or shutil.which("cce")

# Loaded into every `cce` subprocess of the offline tests: any attempt to open a
# socket is written to a log and refused.
_NO_NETWORK = '''
import os, socket
_log = os.environ["CCE_TEST_NET_LOG"]
def _refuse(*args, **kwargs):
    with open(_log, "a", encoding="utf-8") as handle:
        handle.write(repr(args[:2]) + "\\n")
    raise OSError("network disabled by the test")
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
'''


@pytest.fixture(autouse=True, scope="module")
def _caches(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    patch = pytest.MonkeyPatch()
    if "CCE_CACHE_DIR" not in os.environ:
        patch.setenv("CCE_CACHE_DIR", str(tmp_path_factory.mktemp("cce-cache")))
    patch.delenv(MODEL_DIR_ENV, raising=False)
    yield
    patch.undo()


@pytest.fixture(scope="module")
def emb(_caches: None) -> WordLlamaEmbedder:
    e = WordLlamaEmbedder()
    assert e.healthy()
    return e


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


# -- the text rule ---------------------------------------------------------------


def test_identifier_split() -> None:
    assert split_identifiers("sendFile max_content_length HTTPServer") == "send File max content length HTTP Server"


def test_which_tokens_count() -> None:
    assert usable_token("▁def") and usable_token("File") and usable_token("2")
    assert not usable_token("▁▁") and not usable_token("):") and not usable_token("<0x0A>")
    assert not usable_token("<s>") and not usable_token(None)


def test_declares_itself() -> None:
    e = WordLlamaEmbedder()
    assert isinstance(e, Embedder)
    assert (e.name, e.model, e.dim) == ("wordllama", MODEL_ID, EMBED_DIM)


def test_constructor_reads_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path / "nowhere"))
    e = WordLlamaEmbedder()  # `cce packs` builds it without a model
    assert e.size_bytes is None
    assert not e.healthy()
    assert "nowhere" in e.unavailable_message("index")
    with pytest.raises(EmbedderError, match="missing"):
        e.embed_query("anything")


def test_loading_writes_nothing_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    # stdout may be an MCP transport; there is no one-time build to report either.
    e = WordLlamaEmbedder()
    e.embed_query("open the config file")
    assert capsys.readouterr() == ("", "")


# -- vectors ------------------------------------------------------------------------


def test_shapes_zero_rows_and_norms(emb: WordLlamaEmbedder) -> None:
    out = emb.embed_batch(["open the config file", "", "(){};  \n\t", "x"])
    assert out.shape == (4, EMBED_DIM) and out.dtype == np.float64
    assert not out[1].any() and not out[2].any()  # nothing usable: a zero row
    assert np.allclose(np.linalg.norm(out[[0, 3]], axis=1), 1.0)
    assert emb.embed_batch([]).shape == (0, EMBED_DIM)


def test_deterministic_and_batch_independent(emb: WordLlamaEmbedder) -> None:
    texts = [f"def handler_{i}(request):\n    return retry(payment, attempts={i})" for i in range(300)]
    first = emb.embed_batch(texts)
    assert np.array_equal(first, emb.embed_batch(texts))
    assert np.array_equal(first[257], emb.embed_batch(texts[257:258])[0])
    assert np.array_equal(first[5], emb.embed_query(texts[5]))
    fresh = WordLlamaEmbedder()
    assert np.array_equal(first[:10], fresh.embed_batch(texts[:10]))


def test_identifiers_meet_their_words(emb: WordLlamaEmbedder) -> None:
    # Without the split, `max_content_length` is cut into `max`, `content`, `length` pieces that are
    # word-continuations (no leading space), other rows of the table than the words in prose.
    assert np.array_equal(emb.embed_query("max_content_length"), emb.embed_query("max content length"))
    assert np.array_equal(emb.embed_query("sendFile"), emb.embed_query("send File"))


def test_truncates_at_the_window(emb: WordLlamaEmbedder) -> None:
    head = " database" * MAX_PIECES  # one token per word
    assert np.array_equal(emb.embed_query(head), emb.embed_query(head + " template rendering" * 50))


def test_paraphrases_are_closer_than_unrelated_text(emb: WordLlamaEmbedder) -> None:
    query = emb.embed_query("try the card charge again when it fails")
    close = emb.embed_query("def retry_payment(attempts): re-attempt a declined credit card transaction")
    far = emb.embed_query("render the html template with jinja variables")
    assert cos(query, close) > cos(query, far)


# -- the installed cce, offline -----------------------------------------------------

cli = pytest.mark.skipif(CCE is None, reason="the cce command is not installed")


def offline_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "nonet"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_NO_NETWORK, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update({
        "PYTHONPATH": str(site),
        "CCE_TEST_NET_LOG": str(tmp_path / "net.log"),
        "HF_HUB_OFFLINE": "1",
        "PIP_NO_INDEX": "1",
        "PIP_INDEX_URL": "http://192.0.2.1:9/simple",  # TEST-NET-1: unroutable
        "http_proxy": "http://192.0.2.1:9",
        "https_proxy": "http://192.0.2.1:9",
        "NO_PROXY": "",
    })
    return env


def run_cce(env: dict[str, str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    assert CCE is not None
    return subprocess.run([CCE, *map(str, args)], env=env, capture_output=True, text=True, timeout=300, check=False)


BILLING = '''def charge_card(card, amount):
    """Bill the customer's card."""
    return gateway.bill(card, amount)


def retry_declined(card, amount, attempts=3):
    """Try the charge again after the bank refuses it."""
    for _ in range(attempts):
        if charge_card(card, amount):
            return True
    return False
'''


def make_project(root: Path) -> Path:
    project = root / "project"
    project.mkdir()
    (project / "billing.py").write_text(BILLING, encoding="utf-8")
    (project / "pages.py").write_text(
        "def render_page(template, **values):\n    \"\"\"Fill the HTML layout with values.\"\"\"\n"
        "    return template.format(**values)\n", encoding="utf-8")
    (project / "settings.py").write_text(
        "def read_settings(path):\n    \"\"\"Load key value options from a file.\"\"\"\n"
        "    return dict(line.split('=', 1) for line in open(path))\n", encoding="utf-8")
    return project


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


@cli
def test_offline_index_and_search(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    env = offline_env(tmp_path)
    store = project / ".cce" / "index.cce"
    indexed = run_cce(env, "index", project, "--embedder", "wordllama", "--no-metrics")
    assert indexed.returncode == 0, indexed.stderr
    assert "embedder          : wordllama" in indexed.stdout

    found = run_cce(env, "search", "attempt the payment once more after the bank says no", "--store", store, "--json")
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert results and results[0]["file_path"] == "billing.py", results

    listed = run_cce(env, "packs")
    assert listed.returncode == 0, listed.stderr
    (row,) = [line for line in listed.stdout.splitlines() if line.strip().startswith("wordllama ") and "model" in line]
    assert f"model {MODEL_ID}" in row and f"dim {EMBED_DIM}" in row and "size 16.4 MB" in row, row

    log = tmp_path / "net.log"
    assert not log.exists() or log.read_text() == "", f"something reached for the network: {log.read_text()}"


@cli
def test_the_store_records_the_identity(tmp_path: Path) -> None:
    # Name and width as the engine reads them back; the model is checked by the refusal test below.
    project = make_project(tmp_path)
    env = offline_env(tmp_path)
    store = project / ".cce" / "index.cce"
    assert run_cce(env, "index", project, "--embedder", "wordllama", "--no-metrics").returncode == 0
    stats = run_cce(env, "stats", "--store", store)
    assert stats.returncode == 0 and "embedder       : wordllama" in stats.stdout, stats.stdout
    doctor = run_cce(env, "doctor", "--store", store)
    assert "(embedder wordllama)" in doctor.stdout and f"wordllama/{EMBED_DIM}" in doctor.stdout, doctor.stdout


@cli
def test_search_refuses_when_the_model_is_gone(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    env = offline_env(tmp_path)
    assert run_cce(env, "index", project, "--embedder", "wordllama", "--no-metrics").returncode == 0
    env[MODEL_DIR_ENV] = str(tmp_path / "no-model")
    refused = run_cce(env, "search", "bill the card", "--store", project / ".cce" / "index.cce")
    assert "built with the wordllama embedder" in one_error_line(refused)


@cli
def test_search_refuses_another_model(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    env = offline_env(tmp_path)
    assert run_cce(env, "index", project, "--embedder", "wordllama", "--no-metrics").returncode == 0
    # Pretend a later release changed the recipe: the stored vectors must not be compared with new ones.
    (tmp_path / "nonet" / "sitecustomize.py").write_text(
        _NO_NETWORK + "import cce_embedder_wordllama\n"
        "cce_embedder_wordllama.WordLlamaEmbedder.model = 'wordllama-l2-supercat-256/v0'\n",
        encoding="utf-8")
    refused = run_cce(env, "search", "bill the card", "--store", project / ".cce" / "index.cce")
    line = one_error_line(refused)
    assert f'wordllama model "{MODEL_ID}"' in line and "re-index" in line, line


@cli
def test_index_refuses_when_the_model_is_gone(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    env = offline_env(tmp_path)
    env[MODEL_DIR_ENV] = str(tmp_path / "no-model")
    refused = run_cce(env, "index", project, "--embedder", "wordllama", "--no-metrics")
    assert "the wordllama embedder cannot start" in one_error_line(refused)
    assert not (project / ".cce" / "index.cce").exists()


def test_a_table_smaller_than_the_vocabulary_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from cce_embedder_wordllama.weights import TOKENIZER_FILE, WEIGHTS_FILE, model_root

    real = model_root()
    (tmp_path / "tokenizers").mkdir()
    (tmp_path / "weights").mkdir()
    shutil.copy(real / TOKENIZER_FILE, tmp_path / TOKENIZER_FILE)
    # A valid safetensors file holding a 10-row table.
    header = json.dumps({"embedding.weight": {"dtype": "F16", "shape": [10, EMBED_DIM],
                                              "data_offsets": [0, 10 * EMBED_DIM * 2]}}).encode()
    (tmp_path / WEIGHTS_FILE).write_bytes(len(header).to_bytes(8, "little") + header + bytes(10 * EMBED_DIM * 2))
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    e = WordLlamaEmbedder()
    assert not e.healthy()
    assert "only 10 rows" in e.unavailable_message("index")
