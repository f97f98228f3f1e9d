"""Every distribution in this repository can be published: licence, metadata, a wheel that carries them.

The core and each plugin in ``packs/`` is its own distribution on the package
index, so each pyproject.toml must declare its licence the PEP 639 way (an SPDX
``license`` string plus ``license-files``; the old TOML-table form warns on every
build), its project URLs, classifiers and README, and ship a LICENSE file of its
own (``license-files`` cannot reach outside the distribution's directory).
One wheel and one sdist are built here, offline, with the backend pyproject.toml
names, to check that the built metadata says what the pyproject.toml says.

Also here: the runtime/contributor split of the requirements files, the PEP 503
index ``.ci/distributions`` serves the built files from, and the install hint
``cce packs`` gives when no pack is installed.
"""

from __future__ import annotations

import email.parser
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = [REPO, *sorted(p.parent for p in (REPO / "packs").glob("cce-*/pyproject.toml"))]
LICENSE = REPO / "LICENSE"
# What only contributors need: the test runner, the linter, the browser driver and the publishing tools.
DEV_TOOLS = ("pytest", "ruff", "playwright", "build", "twine", "setuptools", "wheel", "trove-classifiers")


def _pyproject(directory: Path) -> dict:
    return tomllib.loads((directory / "pyproject.toml").read_text(encoding="utf-8"))


def _dist_id(directory: Path) -> str:
    return _pyproject(directory)["project"]["name"]


def _requirement_names(path: Path) -> list[str]:
    names = []
    for raw in path.read_text(encoding="utf-8").split("\n"):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", line)
        assert match, f"{path.name}: cannot read requirement {raw!r}"
        names.append(re.sub(r"[-_.]+", "-", match.group(0)).lower())
    return names


def _load_ci_module(name: str) -> ModuleType:
    path = REPO / ".ci" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"ci_{name}", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- pyproject.toml metadata ------------------------------------------------------------


def test_the_root_licence_is_mit_for_the_cce_authors():
    text = LICENSE.read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert re.search(r"^Copyright \(c\) \d{4} the cce authors$", text, flags=re.M)
    assert "THE SOFTWARE IS PROVIDED \"AS IS\"" in text


@pytest.mark.parametrize("directory", DISTRIBUTIONS, ids=_dist_id)
def test_every_distribution_declares_its_licence_the_pep_639_way(directory: Path):
    project = _pyproject(directory)["project"]
    assert project.get("license") == "MIT", "license must be the SPDX string \"MIT\", not a table"
    assert project.get("license-files") == ["LICENSE"]
    assert (directory / "LICENSE").read_bytes() == LICENSE.read_bytes(), "each distribution ships the root LICENSE"
    # PEP 639 forbids licence classifiers beside a licence expression (setuptools refuses to build).
    assert not [c for c in project.get("classifiers", []) if c.startswith("License ::")]


@pytest.mark.parametrize("directory", DISTRIBUTIONS, ids=_dist_id)
def test_every_distribution_builds_with_a_setuptools_that_reads_pep_639(directory: Path):
    requires = _pyproject(directory)["build-system"]["requires"]
    setuptools = [r for r in requires if re.match(r"setuptools\b", r)]
    assert setuptools, requires
    floor = re.search(r">=\s*(\d+)", setuptools[0])
    assert floor and int(floor.group(1)) >= 77, f"setuptools before 77 rejects license = \"MIT\": {requires}"


@pytest.mark.parametrize("directory", DISTRIBUTIONS, ids=_dist_id)
def test_every_distribution_has_urls_classifiers_and_a_readme(directory: Path):
    project = _pyproject(directory)["project"]
    root = _pyproject(REPO)["project"]
    assert project.get("urls"), "no [project.urls]"
    # One family, one set of addresses: a change to one pyproject.toml must be made in all of them.
    assert project["urls"] == root["urls"]
    for url in project["urls"].values():
        assert url.startswith("https://"), url
    assert project.get("authors") == root["authors"]
    classifiers = project.get("classifiers", [])
    assert "Programming Language :: Python :: 3 :: Only" in classifiers
    assert "Typing :: Typed" in classifiers  # every distribution ships py.typed
    assert classifiers == sorted(classifiers), "keep the classifiers sorted"
    assert project.get("readme") == "README.md"
    readme = (directory / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# "), "the README is the long description: it opens with a title"


@pytest.mark.parametrize("directory", DISTRIBUTIONS, ids=_dist_id)
def test_every_classifier_is_one_the_index_accepts(directory: Path):
    trove = pytest.importorskip("trove_classifiers", reason="pip install -r requirements-dev.txt")
    unknown = [c for c in _pyproject(directory)["project"]["classifiers"] if c not in trove.classifiers]
    assert unknown == []


# -- what a build makes of it ---------------------------------------------------------------


def _backend_build(source: Path, hook: str, out: Path) -> tuple[str, str]:
    """Run the PEP 517 ``hook`` of setuptools in ``source`` (offline); return the file name and stderr."""
    code = f"import sys, setuptools.build_meta as b; print(b.{hook}(sys.argv[1]))"
    env = {**os.environ, "PYTHONWARNINGS": "default"}
    proc = subprocess.run([sys.executable, "-c", code, str(out)], cwd=source, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, f"{hook} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout.strip().split("\n")[-1], proc.stderr


@pytest.fixture(scope="module")
def built_ruby(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    """cce-pack-ruby built into a wheel and an sdist from a clean copy of its directory."""
    setuptools = pytest.importorskip("setuptools", reason="pip install -r requirements-dev.txt")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.fail(f"setuptools {setuptools.__version__} cannot build PEP 639 metadata; "
                    "pip install -r requirements-dev.txt")
    root = tmp_path_factory.mktemp("build")
    source = root / "src"
    shutil.copytree(REPO / "packs" / "cce-pack-ruby", source,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist", "tests"))
    out = root / "dist"
    out.mkdir()
    wheel, wheel_log = _backend_build(source, "build_wheel", out)
    sdist, sdist_log = _backend_build(source, "build_sdist", out)
    return {"wheel": out / wheel, "sdist": out / sdist, "log": wheel_log + sdist_log, "dist": out}


def test_the_core_wheel_ships_every_file_of_the_package(tmp_path: Path):
    """An editable install reads data files from the checkout; a wheel has only what package-data names."""
    source = tmp_path / "src"
    source.mkdir()
    litter = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "cce_core", source / "cce_core", ignore=litter)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copyfile(REPO / name, source / name)
    out = tmp_path / "dist"
    out.mkdir()
    wheel, _log = _backend_build(source, "build_wheel", out)
    with zipfile.ZipFile(out / wheel) as archive:
        shipped = {n for n in archive.namelist() if n.startswith("cce_core/")}
    present = {p.relative_to(source).as_posix() for p in (source / "cce_core").rglob("*") if p.is_file()}
    assert sorted(present - shipped) == [], "add these to [tool.setuptools.package-data] in pyproject.toml"


def _headers(text: str) -> email.message.Message:
    return email.parser.Parser().parsestr(text, headersonly=True)


def test_the_wheel_metadata_carries_the_licence_expression_and_file(built_ruby):
    with zipfile.ZipFile(built_ruby["wheel"]) as wheel:
        names = wheel.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = _headers(wheel.read(metadata_name).decode("utf-8"))
        (licence_name,) = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
        assert wheel.read(licence_name) == LICENSE.read_bytes()
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert metadata["License"] is None, "the deprecated free-text License field is gone"
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata.get_all("Project-URL"), "no project URLs in the metadata"
    assert "Typing :: Typed" in metadata.get_all("Classifier")


def test_the_sdist_carries_the_licence_and_builds_without_licence_warnings(built_ruby):
    with tarfile.open(built_ruby["sdist"]) as sdist:
        members = {m.name.split("/", 1)[1]: m for m in sdist.getmembers() if "/" in m.name}
        assert sdist.extractfile(members["LICENSE"]).read() == LICENSE.read_bytes()  # type: ignore[union-attr]
        pkg_info = _headers(sdist.extractfile(members["PKG-INFO"]).read().decode("utf-8"))  # type: ignore[union-attr]
    assert pkg_info["License-Expression"] == "MIT"
    # The TOML-table form ({ text = "MIT" }) makes setuptools print a deprecation notice on every build.
    log = built_ruby["log"].split("\n")
    warnings = [line for line in log if "DeprecationWarning" in line or ("license" in line.lower() and "warn" in line)]
    assert warnings == []


# -- the local package index .ci/distributions serves ------------------------------------


def test_the_simple_index_is_pep_503_and_pip_installs_from_it(built_ruby, tmp_path: Path):
    simple_index = _load_ci_module("simple_index")
    extra = tmp_path / "files" / "Some_Tool.Name-1.0-py3-none-any.whl"
    extra.parent.mkdir()
    shutil.copyfile(built_ruby["wheel"], extra)
    root = tmp_path / "index"
    simple_index.write_simple_index([built_ruby["wheel"], extra], root)

    project_page = (root / "simple" / "cce-pack-ruby" / "index.html").read_text(encoding="utf-8")
    digest = hashlib.sha256(Path(built_ruby["wheel"]).read_bytes()).hexdigest()
    assert f'href="../../files/{Path(built_ruby["wheel"]).name}#sha256={digest}"' in project_page
    assert 'data-requires-python="&gt;=3.11"' in project_page
    # PEP 503 normalises project names: runs of -, _ and . become one -, lowercase.
    assert (root / "simple" / "some-tool-name" / "index.html").is_file()
    assert 'href="cce-pack-ruby/"' in (root / "simple" / "index.html").read_text(encoding="utf-8")

    # pip, with its configuration files off, takes the wheel by name from that index and nowhere else.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--dest", str(tmp_path / "got"),
         "--index-url", (root / "simple").as_uri(), "cce-pack-ruby"],
        env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [p.name for p in (tmp_path / "got").iterdir()] == [Path(built_ruby["wheel"]).name]


def test_the_simple_index_refuses_a_file_it_cannot_name(tmp_path: Path):
    simple_index = _load_ci_module("simple_index")
    stray = tmp_path / "notes.txt"
    stray.write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match=r"notes\.txt is neither"):
        simple_index.write_simple_index([stray], tmp_path / "index")


# -- requirements files -------------------------------------------------------------------


def test_the_user_requirements_hold_no_contributor_tools():
    names = _requirement_names(REPO / "requirements.txt")
    assert [n for n in names if n in DEV_TOOLS] == []


def test_the_user_requirements_install_the_engine_and_its_default_plugins_from_this_checkout():
    lines = [ln.strip() for ln in (REPO / "requirements.txt").read_text(encoding="utf-8").split("\n")]
    editable = [ln.removeprefix("-e ").strip() for ln in lines if ln.startswith("-e ")]
    assert editable[0] == "."
    for target in editable:
        assert (REPO / target / "pyproject.toml").is_file(), target
    # The default set is the one pytest's testpaths cover (optional packs are tested by .ci/run).
    testpaths = _pyproject(REPO)["tool"]["pytest"]["ini_options"]["testpaths"]
    assert sorted(editable[1:]) == sorted(p.removesuffix("/tests") for p in testpaths if p.startswith("packs/"))


def test_the_contributor_requirements_add_the_tools_to_the_user_set():
    text = (REPO / "requirements-dev.txt").read_text(encoding="utf-8")
    assert re.search(r"^-r requirements\.txt$", text, flags=re.M)
    names = _requirement_names(REPO / "requirements-dev.txt")
    for tool in ("pytest", "ruff", "playwright", "build", "twine", "setuptools", "trove-classifiers"):
        assert tool in names, f"requirements-dev.txt lacks {tool}"


# -- the install hint ---------------------------------------------------------------------------


def _fake_checkout(root: Path) -> Path:
    (root / "packs").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "cce-core"\n', encoding="utf-8")
    (root / "cce_core").mkdir()
    return root / "cce_core"


def test_from_a_checkout_the_hint_installs_the_pack_from_its_packs_folder(tmp_path: Path):
    from cce_core.plugins.install_hint import install_command

    package_dir = _fake_checkout(tmp_path / "checkout")
    assert install_command("cce-pack-ruby", package_dir=package_dir, cwd=tmp_path / "checkout") == (
        "pip install -e packs/cce-pack-ruby")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shown = install_command("cce-pack-ruby", package_dir=package_dir, cwd=elsewhere)
    assert shown == f"pip install -e {tmp_path / 'checkout' / 'packs' / 'cce-pack-ruby'}"


def test_from_an_installed_wheel_the_hint_installs_the_pack_by_name(tmp_path: Path):
    from cce_core.plugins.install_hint import install_command

    site_packages = tmp_path / "lib" / "python3.11" / "site-packages"
    (site_packages / "cce_core").mkdir(parents=True)
    assert install_command("cce-pack-ruby", package_dir=site_packages / "cce_core", cwd=tmp_path) == (
        "pip install cce-pack-ruby")


def test_the_running_engine_is_this_checkout():
    from cce_core.plugins.install_hint import source_checkout

    # The suite runs against the editable install of this repository.
    assert source_checkout() == REPO
