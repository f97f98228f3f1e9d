"""The six language packs, exercised as installed distributions.

Every pack here is found through the real ``cce`` entry-point group, ships the
shared sample, reproduces the reference engine's chunk ids on the shared
samples, and takes part in the engine's registry (extension lookup, clashes,
the import-override hook). What one pack does on its own (its import rule, its
sample's chunks, odd input) is tested with that pack: packs/cce-pack-NAME/tests.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from helpers import PackPlugin, installed_pack

from cce_core.foundation.errors import CceError
from cce_core.hookspecs import ENTRY_POINT_GROUP, hookimpl
from cce_core.indexing.chunker import Chunker
from cce_core.plugins.host import PluginHost

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
REFERENCE_DIR = Path(os.environ.get("CCE_REFERENCE_DIR", REPO.parent / "shared" / "reference"))

# pack name -> the sample file it ships (identical to the one in samples/)
SAMPLE_FILES = {
    "c": "c.c",
    "javascript": "javascript.js",
    "python": "python.py",
    "ruby": "ruby.rb",
    "rust": "rust.rs",
    "typescript": "typescript.ts",
}
PACK_NAMES = sorted(SAMPLE_FILES)
CONFORMANCE_FIELDS = ("file_path", "start_line", "end_line", "chunk_type", "kind", "chunk_id", "token_count")


@pytest.fixture(scope="module")
def chunker(host: PluginHost) -> Chunker:
    return Chunker(host)


# -- discovery ---------------------------------------------------------------


def test_every_pack_is_an_installed_entry_point():
    advertised = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    for name in PACK_NAMES:
        assert name in advertised, f"no `cce` entry point named {name!r}"
        assert advertised[name].value == f"cce_pack_{name}"
        assert advertised[name].dist is not None
        assert advertised[name].dist.name == f"cce-pack-{name}"


@pytest.mark.parametrize("name", PACK_NAMES)
def test_pack_registered_from_its_distribution(host, name):
    pack = installed_pack(host, name)
    assert pack.distribution == f"cce-pack-{name}"
    assert pack.grammar_distribution == f"tree-sitter-{name}"


def test_fresh_host_discovers_the_same_packs():
    fresh = PluginHost()
    assert fresh.startup_problems() == []
    assert fresh.packs.pack_set_id == "c,javascript,python,ruby,rust,typescript"


def test_pack_set_id(host):
    assert host.startup_problems() == []
    assert host.packs.pack_set_id == "c,javascript,python,ruby,rust,typescript"


# -- samples -----------------------------------------------------------------


@pytest.mark.parametrize("name", PACK_NAMES)
def test_shipped_sample_is_the_shared_sample(host, name):
    pack = installed_pack(host, name)
    assert pack.sample_name == SAMPLE_FILES[name]
    assert pack.sample == (SAMPLES / SAMPLE_FILES[name]).read_text(encoding="utf-8")


def _reference_chunks() -> list[dict]:
    path = REFERENCE_DIR / "conformance.json"
    if not path.is_file():
        pytest.skip(f"reference conformance.json not found at {path} (set CCE_REFERENCE_DIR to the reference fixtures)")
    return json.loads(path.read_text(encoding="utf-8"))["chunks"]


def test_samples_match_reference_conformance(chunker):
    reference = _reference_chunks()
    ours = []
    for sample in sorted(SAMPLES.iterdir()):
        if not sample.is_file():
            continue
        result = chunker.chunk_file(sample.name, sample.read_text(encoding="utf-8"))
        ours.extend({f: getattr(c, f) for f in CONFORMANCE_FIELDS} for c in result.chunks)
    ours.sort(key=lambda row: (row["file_path"], row["start_line"], row["chunk_id"]))
    assert len(reference) == 21
    assert ours == reference


@pytest.mark.parametrize("name", PACK_NAMES)
def test_each_language_matches_its_reference_rows(chunker, name):
    reference = [row for row in _reference_chunks() if row["file_path"] == SAMPLE_FILES[name]]
    assert reference, f"reference has no rows for {SAMPLE_FILES[name]}"
    text = (SAMPLES / SAMPLE_FILES[name]).read_text(encoding="utf-8")
    rows = [{f: getattr(c, f) for f in CONFORMANCE_FIELDS} for c in chunker.chunk_file(SAMPLE_FILES[name], text).chunks]
    rows.sort(key=lambda row: (row["start_line"], row["chunk_id"]))
    assert rows == reference


# -- registry ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("X.PY", "python"),
        ("pkg/mod.py", "python"),
        ("web/app.tsx", "typescript"),
        ("types.d.ts", "typescript"),
        ("lib/a.MJS", "javascript"),
        ("b.cjs", "javascript"),
        ("C.JSX", "javascript"),
        ("models/user.rb", "ruby"),
        ("src\\main.RS", "rust"),
        ("include/store.h", "c"),
        ("x.c", "c"),
        ("Makefile", None),
        (".gitignore", None),
        ("README.md", None),
    ],
)
def test_registry_resolves_by_lowercased_extension(host, path, expected):
    pack = host.packs.pack_for(path)
    assert (pack.name if pack else None) == expected


def test_duplicate_extension_is_rejected_with_a_helpful_message(host):
    ruby = installed_pack(host, "ruby")
    legacy = replace(ruby, name="ruby-legacy", extensions=(".rake", ".rb"), distribution="")
    fresh = PluginHost([(PackPlugin(ruby, legacy), "cce-pack-ruby")], entry_points=False)

    assert fresh.packs.names() == ["ruby"]
    assert fresh.startup_problems() == [
        '[pack:ruby-legacy] extension ".rb" already claimed by pack "ruby"; each extension maps to exactly one pack.'
        ' (installed by cce-pack-ruby; uninstall one)'
    ]
    # The pack that lost the clash claims nothing, not even its other extensions.
    assert fresh.packs.pack_for("tasks.rake") is None
    assert fresh.packs.pack_for("app.rb").name == "ruby"
    with pytest.raises(CceError, match=re.escape('extension ".rb" already claimed by pack "ruby"')):
        fresh.require_healthy()


def test_clash_between_two_plugins_keeps_one_pack_and_reports_the_other(host):
    ruby = installed_pack(host, "ruby")
    legacy = replace(ruby, name="ruby-legacy", distribution="")
    fresh = PluginHost(
        [(PackPlugin(ruby), "cce-pack-ruby"), (PackPlugin(legacy), "ruby-legacy-dist")], entry_points=False
    )
    # Which one wins depends on plugin call order; exactly one must, and the
    # problem must name the loser and the winner.
    (winner,) = fresh.packs.names()
    loser = ({"ruby", "ruby-legacy"} - {winner}).pop()
    (problem,) = fresh.startup_problems()
    assert problem.startswith(f'[pack:{loser}] extension ".rb" already claimed by pack "{winner}"')
    assert fresh.packs.pack_for("x.rb").name == winner


def test_duplicate_name_is_rejected(host):
    c = installed_pack(host, "c")
    twin = replace(c, extensions=(".cc",), distribution="")
    fresh = PluginHost([(PackPlugin(c, twin), "cce-pack-c")], entry_points=False)
    assert fresh.packs.names() == ["c"]
    assert any("name is already registered" in p for p in fresh.startup_problems())


def test_packs_register_on_a_fresh_host_without_entry_points(host):
    packs = [installed_pack(host, name) for name in PACK_NAMES]
    fresh = PluginHost([(PackPlugin(*packs), "bundle")], entry_points=False)
    assert fresh.startup_problems() == []
    assert fresh.packs.pack_set_id == "c,javascript,python,ruby,rust,typescript"


def test_import_override_hook_wins_over_the_pack(host):
    class _Override:
        @hookimpl
        def cce_extract_imports(self, language, root, source):
            return ["overridden"] if language == "rust" else None

    rust = installed_pack(host, "rust")
    c = installed_pack(host, "c")
    fresh = PluginHost([(PackPlugin(rust, c), "bundle"), (_Override(), "override")], entry_points=False)
    chunker = Chunker(fresh)
    assert chunker.chunk_file("a.rs", "use std::io;\n").imports == ["overridden"]
    assert chunker.chunk_file("a.c", "#include <stdio.h>\n").imports == ["stdio"]
