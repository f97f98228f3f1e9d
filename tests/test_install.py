"""cce as a user installs it: real distributions in a fresh venv, found through entry points.

A module-scoped venv (``python -m venv --without-pip``) gets only ``cce-core`` (which ships the hash
embedder); each test installs the packs it needs with pip and uninstalls them afterwards, so every
test starts from that base. Nothing is downloaded:

* the third-party dependencies (numpy, pluggy, typer, tree-sitter and its
  grammar wheels, pip, setuptools, ...) are the dev venv's own, exposed through
  a directory of symlinks to its site-packages entries minus every file of a
  ``cce-*`` distribution, which a ``.pth`` file in the new venv points at;
* our distributions are installed with ``pip install --no-deps --no-index
  --no-build-isolation`` from copies of their source trees (no build litter in
  the repository), with pip's config files switched off and its proxy pointed
  at a closed loopback port.

If the dev venv's setuptools cannot build a wheel by itself (before 70.1 it
needs the separate ``wheel`` package), each distribution is built here from
setuptools' own ``egg_info`` + ``build_py`` output into a plain wheel that pip
then installs; either way pip does the installing and writes the entry points.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import importlib.metadata
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE_PACK = Path(__file__).resolve().parent / "fixtures" / "toy_pack"
CLASH_PACK = FIXTURE_PACK / "clash"
SOURCES = {
    "cce-core": REPO,
    "cce-pack-ruby": REPO / "packs" / "cce-pack-ruby",
    "cce-pack-toy": FIXTURE_PACK,
    "cce-pack-toy-clash": CLASH_PACK,
    "cce-pack-misspelled": Path(__file__).resolve().parent / "fixtures" / "misspelled_hook",
}
# What a copy of the repository root needs to build cce-core (not tests, packs, samples, ...).
CORE_FILES = ("pyproject.toml", "README.md", "LICENSE", "cce_core")
LITTER_NAMES = ("__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".cce")
# The core registers its default plugin, the hash embedder, through its own entry point.
HASH_ENTRY_POINT = ["hash", "cce_core.default_plugins.hash_embedder", "cce-core"]
DEAD_PROXY = "http://127.0.0.1:9"  # the discard port: any download attempt fails at once
# Installed by hand beside the distributions; their own dependencies are read from their pyproject.toml.
BUILD_TOOLS = ("pip", "setuptools")

CORPUS = {
    "app/models.rb": (
        'require "json"\n\nclass User\n  def name\n    "x"\n  end\n\n'
        "  def self.find(id)\n    id\n  end\nend\n"
    ),
    "app/helpers.py": "import os\n\n\ndef helper():\n    return os.sep\n",
    "typings/greet.pyi": (
        "from typing import Protocol\n\nclass Greeter(Protocol):\n    def greet(self, name: str) -> str: ...\n\n"
        "def greet_all(names: list[str]) -> list[str]: ...\n"
    ),
    "README.md": "# demo\n\nA tiny corpus.\n",
}


# -- the environment ------------------------------------------------------------


def _dist_name(dist: importlib.metadata.Distribution) -> str:
    return re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower()


def _cce_entries(purelib: Path) -> set[str]:
    """Top-level site-packages entries that belong to a ``cce-*`` distribution."""
    owned: set[str] = set()
    for dist in importlib.metadata.distributions(path=[str(purelib)]):
        if not _dist_name(dist).startswith("cce-"):
            continue
        meta_dir = getattr(dist, "_path", None)
        if meta_dir is not None:
            owned.add(Path(meta_dir).name)
        for file in dist.files or ():
            if file.parts and file.parts[0] != "..":
                owned.add(file.parts[0])
    return owned


def _third_party_dir(purelib: Path, into: Path) -> Path:
    """Symlinks to every dev-venv site-packages entry except cce's own, editable hooks and .pth files."""
    owned = _cce_entries(purelib)
    into.mkdir()
    for entry in sorted(purelib.iterdir()):
        name = entry.name
        if (name in owned or name.startswith("__editable__") or name.endswith(".pth") or name == "__pycache__"
                or name.lower().startswith(("cce_", "cce-"))):
            continue
        (into / name).symlink_to(entry)
    return into


def _wheel_capable_setuptools(purelib: Path) -> bool:
    """Whether setuptools there builds wheels with no extra download (70.1+ or ``wheel`` installed)."""
    found = {_dist_name(d): d.version for d in importlib.metadata.distributions(path=[str(purelib)])}
    if "wheel" in found:
        return True
    parts = []
    for piece in found.get("setuptools", "0").split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts) >= (70, 1)


def _missing_third_party(purelib: Path) -> list[str]:
    """Dependencies of the distributions under test (and the build tools) absent from the dev venv."""
    have = {_dist_name(d) for d in importlib.metadata.distributions(path=[str(purelib)])}
    wanted = set(BUILD_TOOLS)
    for source in SOURCES.values():
        project = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        for requirement in project.get("dependencies", []):
            name = re.match(r"[A-Za-z0-9._-]+", requirement)
            if name:
                wanted.add(re.sub(r"[._-]+", "-", name.group(0)).lower())
    return sorted(n for n in wanted if not n.startswith("cce-") and n not in have)


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class Venv:
    """A throwaway venv that sees the dev venv's third-party packages but none of cce's."""

    def __init__(self, root: Path, purelib: Path) -> None:
        self.root = root
        self.work = root / "work"
        self.work.mkdir(parents=True)
        self.bin = root / "venv" / "bin"
        self.python = self.bin / "python"
        self.direct_build = _wheel_capable_setuptools(purelib)
        home = root / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PIP_", "PYTHON", "CCE_", "VIRTUAL_ENV")) and k.lower() not in
               ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
        env.update(
            HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
            PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1",
            PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1",
            HTTP_PROXY=DEAD_PROXY, HTTPS_PROXY=DEAD_PROXY, ALL_PROXY=DEAD_PROXY,
            http_proxy=DEAD_PROXY, https_proxy=DEAD_PROXY, all_proxy=DEAD_PROXY,
        )
        self.env = env
        # --without-pip: the dev venv's pip comes in with the other third-party packages (and venv
        # creation takes milliseconds instead of seconds).
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True,
                       capture_output=True, env=env, timeout=60)
        site = Path(self.run_python("import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
        third_party = _third_party_dir(purelib, root / "third_party")
        (site / "_cce_test_third_party.pth").write_text(f"{third_party}\n", encoding="utf-8")
        self.site = site
        self.pip_logs: list[str] = []

    def run(self, *args: str | os.PathLike[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
        # cwd outside the repository, so nothing is imported from the checkout by accident.
        return subprocess.run([str(a) for a in args], cwd=self.work, env=self.env, capture_output=True,
                              text=True, timeout=timeout)

    def run_python(self, code: str) -> str:
        proc = self.run(self.python, "-c", code)
        assert proc.returncode == 0, f"venv python failed:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    def cce(self, *args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
        return self.run(self.bin / "cce", *args)

    def pip(self, *args: str | os.PathLike[str]) -> str:
        proc = self.run(self.python, "-m", "pip", *args, "--no-input", "--disable-pip-version-check",
                        timeout=300)
        log = proc.stdout + proc.stderr
        self.pip_logs.append(log)
        assert proc.returncode == 0, f"pip {' '.join(map(str, args))} failed:\n{log}"
        return log

    def _copy_source(self, dist: str) -> Path:
        src = SOURCES[dist]
        dst = self.root / "src" / dist
        if dst.exists():
            return dst
        if dist == "cce-core":
            dst.mkdir(parents=True)
            for name in CORE_FILES:
                path = src / name
                if path.is_dir():
                    shutil.copytree(path, dst / name, ignore=shutil.ignore_patterns(*LITTER_NAMES))
                elif path.exists():
                    shutil.copy2(path, dst / name)
        else:
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns(*LITTER_NAMES, "clash"))
        return dst

    def _build_wheel(self, source: Path) -> Path:
        """A wheel made of setuptools' own metadata and build_py output (no ``wheel`` package needed)."""
        out = self.root / "build" / source.name
        if out.exists():
            shutil.rmtree(out)
        lib, meta = out / "lib", out / "meta"
        meta.mkdir(parents=True)
        proc = subprocess.run(
            [str(self.python), "-c", "from setuptools import setup; setup()", "-q",
             "egg_info", "--egg-base", str(meta), "build_py", "--build-lib", str(lib)],
            cwd=source, env=self.env, capture_output=True, text=True, timeout=120,
        )
        assert proc.returncode == 0, f"setuptools could not build {source.name}:\n{proc.stdout}\n{proc.stderr}"
        (egg_info,) = meta.glob("*.egg-info")
        pkg_info = (egg_info / "PKG-INFO").read_text(encoding="utf-8")
        headers = dict(line.split(": ", 1) for line in pkg_info.split("\n") if ": " in line and line[0] != " ")
        name = headers["Name"].replace("-", "_").replace(".", "_")
        version = headers["Version"]
        dist_info = f"{name}-{version}.dist-info"
        files: dict[str, bytes] = {}
        for path in sorted(lib.rglob("*")):
            if path.is_file():
                files[path.relative_to(lib).as_posix()] = path.read_bytes()
        files[f"{dist_info}/METADATA"] = pkg_info.encode("utf-8")
        files[f"{dist_info}/WHEEL"] = (
            b"Wheel-Version: 1.0\nGenerator: cce-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        for extra in ("entry_points.txt", "top_level.txt"):
            if (egg_info / extra).exists():
                files[f"{dist_info}/{extra}"] = (egg_info / extra).read_bytes()
        record = io.StringIO()
        writer = csv.writer(record, lineterminator="\n")
        for path, data in files.items():
            writer.writerow([path, _record_hash(data), len(data)])
        writer.writerow([f"{dist_info}/RECORD", "", ""])
        wheel = out / f"{name}-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
            for path, data in files.items():
                zf.writestr(path, data)
            zf.writestr(f"{dist_info}/RECORD", record.getvalue())
        return wheel

    def install(self, *dists: str) -> None:
        sources = [self._copy_source(d) for d in dists]
        targets = sources if self.direct_build else [self._build_wheel(s) for s in sources]
        log = self.pip("install", "--no-deps", "--no-index", "--no-build-isolation", "--no-cache-dir",
                       *targets)
        assert_offline(log)

    def uninstall(self, *dists: str) -> None:
        self.pip("uninstall", "--yes", *dists)

    @contextlib.contextmanager
    def installed(self, *dists: str) -> Iterator[None]:
        self.install(*dists)
        try:
            yield
        finally:
            self.uninstall(*dists)

    def cce_entry_points(self) -> list[list[str]]:
        code = (
            "import importlib.metadata as m, json\n"
            "print(json.dumps(sorted([e.name, e.value, e.dist.name] for e in m.entry_points(group='cce'))))"
        )
        return json.loads(self.run_python(code))

    def store_chunks(self, store: Path) -> list[dict[str, object]]:
        """Load an index with the venv's own cce_core and return its chunks as plain dicts."""
        code = (
            "import json, sys\n"
            "from cce_core.indexing.store import load_store\n"
            "data = load_store(sys.argv[1])\n"
            "print(json.dumps([{'file': c.file_path, 'type': c.chunk_type, 'kind': c.kind,"
            " 'language': c.language} for c in data.chunks]))"
        )
        proc = self.run(self.python, "-c", code, store)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)



def assert_offline(pip_log: str) -> None:
    """pip was told --no-index and had a dead proxy; make sure it never even tried."""
    for sign in ("Downloading", "Looking in indexes", "Collecting cce", "Retrying", "NewConnectionError",
                 "ProxyError"):
        assert sign not in pip_log, f"pip looked at the network ({sign!r}):\n{pip_log}"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    purelib = Path(sysconfig.get_paths()["purelib"])
    missing = _missing_third_party(purelib)
    if missing:
        pytest.skip(f"the dev venv ({purelib}) lacks {', '.join(missing)}; pip install -r requirements-dev.txt")
    env = Venv(tmp_path_factory.mktemp("install"), purelib)
    env.install("cce-core")
    return env


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for rel, text in CORPUS.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def index_corpus(venv: Venv, corpus: Path) -> list[dict[str, object]]:
    store = corpus.parent / "index.cce"
    proc = venv.cce("index", corpus, "--store", store)
    assert proc.returncode == 0, f"cce index failed:\n{proc.stdout}\n{proc.stderr}"
    assert "files indexed     : 4" in proc.stdout, proc.stdout
    return venv.store_chunks(store)


def kinds_by_file(chunks: list[dict[str, object]]) -> dict[str, set[tuple[object, object]]]:
    out: dict[str, set[tuple[object, object]]] = {}
    for c in chunks:
        out.setdefault(str(c["file"]), set()).add((c["type"], c["kind"]))
    return out


def packs_output(venv: Venv) -> list[str]:
    proc = venv.cce("packs")
    assert proc.returncode == 0, f"cce packs failed:\n{proc.stdout}\n{proc.stderr}"
    assert proc.stderr == "", proc.stderr
    return proc.stdout.split("\n")


# -- the tests --------------------------------------------------------------------


def test_venv_sees_only_what_was_installed(venv: Venv) -> None:
    assert venv.cce_entry_points() == [HASH_ENTRY_POINT]
    where = json.loads(venv.run_python(
        "import importlib.util, json\n"
        "import sys, cce_core, cce_core.default_plugins.hash_embedder as hash_embedder, numpy, tree_sitter\n"
        "mods = ('cce_pack_python', 'cce_pack_ruby', 'cce_pack_toy', 'cce_embedder_ollama')\n"
        "print(json.dumps({'core': cce_core.__file__, 'hash': hash_embedder.__file__,"
        " 'numpy': numpy.__file__, 'tree_sitter': tree_sitter.__file__,"
        " 'absent': [m for m in mods if importlib.util.find_spec(m) is None], 'path': sys.path}))"
    ))
    # Our distributions are real installs in the venv, not the editable checkout.
    assert Path(where["core"]).is_relative_to(venv.site), where
    assert Path(where["hash"]).is_relative_to(venv.site), where
    assert not Path(where["core"]).resolve().is_relative_to(REPO)
    # Third-party code comes from the dev venv through the symlink directory.
    assert (venv.root / "third_party") in Path(where["numpy"]).parents, where
    assert where["absent"] == ["cce_pack_python", "cce_pack_ruby", "cce_pack_toy", "cce_embedder_ollama"]
    purelib = Path(sysconfig.get_paths()["purelib"]).resolve()
    for entry in where["path"]:
        assert not (entry and Path(entry).resolve() in (REPO, purelib)), where["path"]
    assert (venv.bin / "cce").exists()
    assert "Successfully installed cce-core-0.2.1" in venv.pip_logs[0]


def test_no_packs_every_file_is_one_module_chunk(venv: Venv, corpus: Path) -> None:
    lines = packs_output(venv)
    assert lines[0] == "Registered language packs (0):"
    assert lines[1].startswith("  (none installed")
    assert "pack_set_id: " in lines, lines
    assert not any(line.startswith("pack_set_id: ") and line != "pack_set_id: " for line in lines), lines

    chunks = index_corpus(venv, corpus)
    assert len(chunks) == len(CORPUS)
    assert {(c["type"], c["kind"], c["language"]) for c in chunks} == {("module", "module", "plaintext")}

    # The core alone also searches: its own hash embedder ranks the module chunks.
    found = venv.cce("search", "helper sep", "--store", corpus.parent / "index.cce", "--json", "--no-metrics")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["file_path"] == "app/helpers.py", found.stdout

    stats = venv.cce("stats", "--store", corpus.parent / "index.cce")
    assert stats.returncode == 0, stats.stderr
    by_kind = stats.stdout.split("  by kind:\n", 1)[1].split("\n")
    assert [line.split(":")[0].strip() for line in by_kind if line.strip()] == ["module"], stats.stdout


def test_installing_ruby_adds_ruby_and_uninstalling_removes_it(venv: Venv, corpus: Path) -> None:
    with venv.installed("cce-pack-ruby"):
        assert venv.cce_entry_points() == [
            HASH_ENTRY_POINT,
            ["ruby", "cce_pack_ruby", "cce-pack-ruby"],
        ]
        lines = packs_output(venv)
        assert lines[0] == "Registered language packs (1):"
        ruby = lines[1].split()
        assert ruby[:2] == ["ruby", ".rb"], lines
        assert lines[1].endswith("from cce-pack-ruby 0.1.0"), lines
        assert "tree-sitter-ruby" in lines[1], lines
        assert "pack_set_id: ruby" in lines

        by_file = kinds_by_file(index_corpus(venv, corpus))
        assert by_file["app/models.rb"] == {("class", "class"), ("function", "method"),
                                            ("function", "singleton_method")}
        for other in ("app/helpers.py", "typings/greet.pyi", "README.md"):
            assert by_file[other] == {("module", "module")}, other

    assert venv.cce_entry_points() == [HASH_ENTRY_POINT]
    assert "pack_set_id: " in packs_output(venv)


def test_third_party_pack_is_found_validated_and_used(venv: Venv, corpus: Path) -> None:
    with venv.installed("cce-pack-toy"):
        assert ["pyi", "cce_pack_toy", "cce-pack-toy"] in venv.cce_entry_points()
        lines = packs_output(venv)
        assert lines[0] == "Registered language packs (1):"
        assert lines[1].split()[:2] == ["pyi", ".pyi"], lines
        assert lines[1].endswith("from cce-pack-toy 0.1.0"), lines
        assert "grammar tree-sitter-python 0.25.0" in lines[1], lines
        assert "pack_set_id: pyi" in lines

        validate = venv.cce("packs", "--validate")
        assert validate.returncode == 0, f"{validate.stdout}\n{validate.stderr}"
        assert validate.stdout.split("\n")[:2] == ["[pack:pyi] ok", "all 1 packs passed validation"]

        by_file = kinds_by_file(index_corpus(venv, corpus))
        assert by_file["typings/greet.pyi"] == {("class", "class_definition"), ("function", "function_definition")}
        # No python pack is installed: .py stays a module chunk even though the grammar is present.
        assert by_file["app/helpers.py"] == {("module", "module")}
        chunks = venv.store_chunks(corpus.parent / "index.cce")
        assert {c["language"] for c in chunks if c["file"] == "typings/greet.pyi"} == {"pyi"}


def test_two_packs_claiming_one_extension_stop_the_engine(venv: Venv, corpus: Path) -> None:
    with venv.installed("cce-pack-toy", "cce-pack-toy-clash"):
        names = {name for name, _value, _dist in venv.cce_entry_points()}
        assert names == {"hash", "pyi", "stubs"}

        proc = venv.cce("index", corpus, "--store", corpus.parent / "index.cce")
        assert proc.returncode != 0
        assert "Traceback" not in proc.stdout + proc.stderr
        err = proc.stderr.strip("\n").split("\n")
        assert len(err) == 1 and err[0].startswith("error: "), proc.stderr
        assert "internal error" not in err[0], err[0]
        assert '".pyi"' in err[0], err[0]
        packs_named = set(re.findall(r"\b(?<!\.)(pyi|stubs)\b", err[0]))
        assert packs_named == {"pyi", "stubs"}, err[0]
        assert not (corpus.parent / "index.cce").exists()

        validate = venv.cce("packs", "--validate")
        assert validate.returncode != 0
        assert "Traceback" not in validate.stdout + validate.stderr
        assert '".pyi"' in validate.stdout, validate.stdout


def test_the_core_lists_its_own_embedder_as_a_plugin(venv: Venv) -> None:
    lines = packs_output(venv)
    assert "Embedders (1):" in lines, lines
    assert any(line.split()[:1] == ["hash"] and line.endswith("from cce-core 0.2.1") and "dim 256" in line
               for line in lines), lines
    listing = venv.cce("packs", "--json")
    assert listing.returncode == 0, listing.stderr
    assert json.loads(listing.stdout)["plugins"] == [
        {"name": "hash", "distribution": "cce-core", "version": "0.2.1", "hooks": ["cce_register_embedders"]}]


def test_a_misspelled_hook_is_reported_with_the_closest_name(venv: Venv, corpus: Path) -> None:
    with venv.installed("cce-pack-misspelled"):
        validate = venv.cce("packs", "--validate")
        assert validate.returncode != 0
        assert "Traceback" not in validate.stdout + validate.stderr
        assert ('plugin "misspelled (cce-pack-misspelled)" implements unknown hook "cce_register_pack" — '
                'did you mean "cce_register_packs"?') in validate.stdout, validate.stdout
        assert validate.stderr.startswith("error: 1 problem(s) found"), validate.stderr

        # Other commands still work, and say so once on stderr.
        proc = venv.cce("index", corpus, "--store", corpus.parent / "index.cce", "--no-metrics")
        assert proc.returncode == 0, proc.stderr
        warnings = [line for line in proc.stderr.split("\n") if line.startswith("warning: ")]
        assert len(warnings) == 1 and '"cce_register_pack"' in warnings[0], proc.stderr


def test_a_scaffolded_pack_installs_validates_passes_its_tests_and_chunks(
        venv: Venv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sample = tmp_path / "sample.pyx2"
    sample.write_text("import os\n\n\nclass Greeter:\n    def greet(self):\n        return os.sep\n\n\n"
                      "def main():\n    return Greeter().greet()\n", encoding="utf-8")
    made = venv.cce("packs", "new", "pyclone", "--grammar", "tree-sitter-python", "--extensions", ".pyx2",
                    "--dir", tmp_path / "out", "--sample", sample)
    assert made.returncode == 0, made.stderr
    assert "function_definition" in made.stdout and "class_definition" in made.stdout, made.stdout
    target = tmp_path / "out" / "cce-pack-pyclone"
    monkeypatch.setitem(SOURCES, "cce-pack-pyclone", target)
    with venv.installed("cce-pack-pyclone"):
        lines = packs_output(venv)
        assert any(line.split()[:2] == ["pyclone", ".pyx2"] for line in lines), lines
        validate = venv.cce("packs", "--validate")
        assert validate.returncode == 0, validate.stdout + validate.stderr
        assert "[pack:pyclone] ok" in validate.stdout
        own_tests = venv.run(venv.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", target / "tests")
        assert own_tests.returncode == 0, own_tests.stdout + own_tests.stderr
        assert " passed" in own_tests.stdout

        corpus = tmp_path / "corpus"
        corpus.mkdir()
        (corpus / "app.pyx2").write_text("def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n",
                                         encoding="utf-8")
        store = tmp_path / "index.cce"
        proc = venv.cce("index", corpus, "--store", store, "--no-metrics")
        assert proc.returncode == 0, proc.stderr
        assert {(c["type"], c["kind"]) for c in venv.store_chunks(store)} == {("function", "function_definition")}


def test_scaffolding_refuses_bad_input_with_one_line_and_writes_nothing(venv: Venv, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "cce-pack-taken").mkdir()
    cases = [
        (("new", "lua", "--grammar", "tree-sitter-nonexistent"), "is not installed"),
        (("new", "plug", "--grammar", "pluggy"), "pluggy"),
        (("new", "taken", "--grammar", "tree-sitter-python"), "already exists"),
        (("new", "Bad-Name", "--grammar", "tree-sitter-python"), "Bad-Name"),
    ]
    for args, needle in cases:
        proc = venv.cce("packs", *args, "--dir", out)
        assert proc.returncode != 0, args
        err = proc.stderr.strip("\n").split("\n")
        assert len(err) == 1 and err[0].startswith("error: ") and needle in err[0], (args, proc.stderr)
        assert "Traceback" not in proc.stdout + proc.stderr
        assert sorted(p.name for p in out.iterdir()) == ["cce-pack-taken"], args
