"""The first table build reports progress on stderr (it runs about a minute and used to say nothing).

No weights are needed: the encoder and the weights file are replaced by small
stand-ins, so this runs wherever the plugin's source is (installed or not).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest

try:
    from cce_embedder_minilm import table
except ImportError:  # not installed: import it from this checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from cce_embedder_minilm import table

VOCAB = 2500  # three batches of table.BUILD_BATCH (1024)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def small_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"\0" * 64)  # only fingerprinted
    monkeypatch.setattr(table, "read_safetensors",
                        lambda _path: {"embeddings.word_embeddings.weight": np.zeros((VOCAB, 4), dtype=np.float32)})
    monkeypatch.setattr(table, "forward", lambda _w, ids, _mask: np.ones((ids.shape[0], 4), dtype=np.float32))
    monkeypatch.setattr(table, "usable_rows", lambda _folder, rows: np.ones(rows, dtype=bool))
    monkeypatch.setenv(table.CACHE_ENV, str(tmp_path / "cache"))
    return folder


def test_the_build_reports_every_batch(small_model: Path) -> None:
    seen: list[tuple[int, int]] = []
    built = table.build_table(small_model, lambda done, total: seen.append((done, total)))
    assert built.shape == (VOCAB, 4)
    assert seen == [(1024, VOCAB), (2048, VOCAB), (VOCAB, VOCAB)]


def test_a_first_load_says_so_on_stderr_and_a_cached_one_says_nothing(small_model: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    table.load_table(small_model)
    out, err = capsys.readouterr()
    assert out == ""  # stdout may be an MCP transport
    lines = err.splitlines()
    assert len(lines) == 2, err
    assert lines[0] == (f"minilm: building the word-piece table, once (about a minute); cached in "
                        f"{table.cache_dir()}")
    assert lines[1].startswith("minilm: word-piece table built in ") and lines[1].endswith("s")
    table.load_table(small_model)
    assert capsys.readouterr() == ("", "")


def test_on_a_terminal_the_count_is_live() -> None:
    screen = _Terminal()
    ticks = iter([10.0, 75.5])
    report = table.BuildReport(Path("/cache"), stream=screen, clock=lambda: next(ticks))
    report.start()
    report.update(1024, 30522)
    report.update(30522, 30522)
    report.finish()
    assert screen.getvalue() == (
        "\rminilm: building the word-piece table, once: 1,024/30,522 pieces (3%)"
        "\rminilm: building the word-piece table, once: 30,522/30,522 pieces (100%)"
        "\r\x1b[Kminilm: word-piece table built in 65.5s\n")
