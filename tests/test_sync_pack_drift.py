"""Pack-set drift that changes no file's chunks is a note; drift that does is caught (issue #19 defect 4).

Installing a language pack changes ``pack_set_id``. That matters only for the
files the pack claims (they were module chunks before) or, for a pack that is
gone, the files it chunked. A store with none of those files is exactly what
this installation would build, so ``cce doctor`` notes the difference and
passes; a store with some fails the doctor, is refused by ``cce sync pull``
(``--force`` installs it anyway) and is named once by ``cce search``.

A throwaway pack ``zz`` (the C pack's grammar under another name, claiming
``.zz``) is installed for one process at a time through ``PYTHONPATH``: the dev
virtualenv's own set of packs never changes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import REPO_ROOT, git, run_cce
from test_sync_cli import bare_remote, cce, env, ok, one_error, source_repo

from cce_core.indexing.pack_drift import pack_drift
from cce_core.indexing.store import load_store
from cce_core.plugins.host import default_host

__all__ = ["env"]  # fixtures, imported so that pytest finds them here

SAMPLES = REPO_ROOT / "samples"
ZZ_SOURCE = "struct Point { int x; };\n\nint area(int w, int h) {\n    return w * h;\n}\n"


@pytest.fixture(scope="module")
def zz_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("zz-site")
    (site / "cce_pack_zz").mkdir()
    (site / "cce_pack_zz" / "__init__.py").write_text(
        "import dataclasses\n"
        "from cce_core.api import hookimpl\n"
        "from cce_pack_c import PACK as _C\n"
        "PACK = dataclasses.replace(_C, name='zz', extensions=('.zz',), sample_name='sample.zz', distribution='')\n"
        "@hookimpl\n"
        "def cce_register_packs(register):\n"
        "    register(PACK)\n", encoding="utf-8")
    info = site / "cce_pack_zz-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cce-pack-zz\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[cce]\nzz = cce_pack_zz\n", encoding="utf-8")
    return site


def with_zz(base: dict[str, str] | None, site: Path) -> dict[str, str]:
    """An environment in which the `zz` pack is installed (for that process only)."""
    import os

    merged = dict(base if base is not None else os.environ)
    merged["PYTHONPATH"] = str(site)
    merged["CCE_NO_PLUGIN_CACHE"] = "1"
    return merged


def indexed(tmp_path: Path, name: str, extra: dict[str, str] | None = None, env: dict[str, str] | None = None) -> Path:
    root = tmp_path / name
    shutil.copytree(SAMPLES, root)
    for rel, text in (extra or {}).items():
        (root / rel).write_text(text, encoding="utf-8")
    done = run_cce("index", root, "--no-metrics", env=env)
    assert done.returncode == 0, done.stderr
    return root


def test_the_zz_pack_loads_only_where_it_is_asked_for(zz_site: Path) -> None:
    done = run_cce("packs", env=with_zz(None, zz_site))
    assert "pack_set_id: c,javascript,python,ruby,rust,typescript,zz" in done.stdout, done.stdout + done.stderr
    assert "zz" not in default_host().packs.pack_set_id


# --------------------------------------------------------------------------- cce doctor


def test_an_unrelated_pack_is_a_note_not_a_failure(tmp_path: Path, zz_site: Path) -> None:
    root = indexed(tmp_path, "proj")
    done = run_cce("doctor", "--dir", root, env=with_zz(None, zz_site))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout
    assert ("  advisory  packs differ from the build (`c,javascript,python,ruby,rust,typescript` → "
            "`c,javascript,python,ruby,rust,typescript,zz`), but no file of this store is chunked differently — "
            "nothing to re-index") in done.stdout
    # And the other way: built with the pack, checked without it, no file of its language.
    built_with = indexed(tmp_path, "built-with", env=with_zz(None, zz_site))
    assert run_cce("doctor", "--dir", built_with).returncode == 0


def test_a_pack_that_changes_files_fails_the_doctor(tmp_path: Path, zz_site: Path) -> None:
    root = indexed(tmp_path, "proj", {"shapes.zz": ZZ_SOURCE})
    done = run_cce("doctor", "--dir", root, env=with_zz(None, zz_site))
    assert done.returncode == 1
    assert ("  FAIL      chunker changed: the store was built with packs `c,javascript,python,ruby,rust,typescript`, "
            "this installation has `c,javascript,python,ruby,rust,typescript,zz` — 1 file is chunked differently "
            "(shapes.zz); re-index to realign") in done.stdout
    # A pack that is gone: its files were chunked by it.
    built_with = indexed(tmp_path, "built-with", {"shapes.zz": ZZ_SOURCE}, env=with_zz(None, zz_site))
    gone = run_cce("doctor", "--dir", built_with)
    assert gone.returncode == 1 and "1 file is chunked differently (shapes.zz)" in gone.stdout


def test_pack_drift_names_the_files_it_changes(host) -> None:
    data = load_store_of_samples(host)
    none = pack_drift("c,javascript,python,ruby,rust,typescript", host.packs, data)
    assert none is None
    # Built without the C pack: c.c was a module chunk then, this installation chunks it.
    added = pack_drift("javascript,python,ruby,rust,typescript", host.packs, data)
    assert added is not None and added.affected == ["c.c"]
    # Built with a pack this installation lacks, but no file of it: nothing changes.
    harmless = pack_drift("c,cobol,javascript,python,ruby,rust,typescript", host.packs, data)
    assert harmless is not None and harmless.affected == []


def load_store_of_samples(host):
    from cce_core.indexing.indexer import build_index

    data, _ = build_index(SAMPLES, host, host.embedder("hash"))
    return data


# --------------------------------------------------------------------------- cce sync pull and cce search


def _published(env: dict[str, str], tmp_path: Path, zz_site: Path, files: dict[str, str]) -> tuple[str, Path, str]:
    url = bare_remote(env, tmp_path / "cache.git")
    tree = tmp_path / "tree"
    shutil.copytree(SAMPLES, tree)
    for rel, text in files.items():
        (tree / rel).write_text(text, encoding="utf-8")
    src = source_repo(env, tmp_path / "src", tree=tree)
    ok(cce(env, src, "sync", "init", "--remote", url, "--no-lfs"))
    # The publisher has the zz pack installed (CI with one more pack than this machine).
    pushed = cce(with_zz(env, zz_site), src, "sync", "push")
    assert pushed.returncode == 0, pushed.stderr
    return url, src, git(env, src, "rev-parse", "HEAD")


def test_a_pull_whose_pack_drift_changes_nothing_notes_it(env: dict[str, str], tmp_path: Path,
                                                          zz_site: Path) -> None:
    url, src, _sha = _published(env, tmp_path, zz_site, {})
    consumer = tmp_path / "consumer"
    git(env, tmp_path, "clone", "-q", str(src), str(consumer))
    ok(cce(env, consumer, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "example.com__acme__demo"))
    pulled = ok(cce(env, consumer, "sync", "pull"))
    assert ("  packs    : note — built with `c,javascript,python,ruby,rust,typescript,zz`, this installation has "
            "`c,javascript,python,ruby,rust,typescript`; no file of this tree is chunked differently\n") in pulled
    assert pulled.endswith("  tree     : matches — pulled index used as-is\n")


def test_a_pull_whose_pack_drift_changes_files_is_refused_then_forced(env: dict[str, str], tmp_path: Path,
                                                                      zz_site: Path) -> None:
    url, src, _sha = _published(env, tmp_path, zz_site, {"shapes.zz": ZZ_SOURCE})
    consumer = tmp_path / "consumer"
    git(env, tmp_path, "clone", "-q", str(src), str(consumer))
    ok(cce(env, consumer, "sync", "init", "--remote", url, "--no-lfs", "--repo-id", "example.com__acme__demo"))
    refused = one_error(cce(env, consumer, "sync", "pull"))
    assert refused == ("error: the artifact was built with packs `c,javascript,python,ruby,rust,typescript,zz`, "
                       "this installation has `c,javascript,python,ruby,rust,typescript` — 1 file is chunked "
                       "differently (shapes.zz). Install the same packs and pull again, build locally with "
                       "`cce index`, or pass --force to install it anyway.")
    assert not (consumer / ".cce" / "index.cce").exists()

    forced = ok(cce(env, consumer, "sync", "pull", "--force"))
    assert ("  packs    : built with `c,javascript,python,ruby,rust,typescript,zz`, this installation has "
            "`c,javascript,python,ruby,rust,typescript` — 1 file is chunked differently (shapes.zz)\n") in forced
    assert forced.endswith("  tree     : matches, but this installation's packs chunk it differently — "
                           "`cce index` for an index of its own\n")
    assert load_store(consumer / ".cce" / "index.cce").meta["pack_set"].endswith(",zz")

    # Every search names the drift once, on stderr, and still answers.
    searched = cce(env, consumer, "search", "area width height", "--no-metrics")
    assert searched.returncode == 0 and searched.stdout.startswith(" 1. [")
    assert searched.stderr == ("warning: the index was built with packs `c,javascript,python,ruby,rust,typescript,zz`, "
                               "this installation has `c,javascript,python,ruby,rust,typescript` — 1 file is chunked "
                               "differently (shapes.zz); re-index with `cce index` (or pull with the same packs)\n")
    # With the same packs as the build, nothing to say.
    same = cce(with_zz(env, zz_site), consumer, "search", "area width height", "--no-metrics")
    assert same.returncode == 0 and same.stderr == ""


def test_search_names_drift_in_a_local_build_too(tmp_path: Path, zz_site: Path) -> None:
    root = indexed(tmp_path, "proj", {"shapes.zz": ZZ_SOURCE})
    done = run_cce("search", "area width height", "--dir", root, "--no-metrics", env=with_zz(None, zz_site))
    assert done.returncode == 0
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("warning: the index was built with packs ")
    clean = run_cce("search", "area width height", "--dir", root, "--no-metrics")
    assert clean.returncode == 0 and clean.stderr == ""
