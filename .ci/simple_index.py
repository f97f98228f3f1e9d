"""Write a PEP 503 "simple" package index for a set of wheels and sdists, as static files.

CI installs our distributions by name, exactly as a user would, from a local
index instead of the public one: this script lays that index out
(``files/`` holds the distributions, ``simple/<project>/index.html`` links to
them with their sha256), and ``python -m http.server`` serves it on 127.0.0.1.
pip reads the same layout through a ``file://`` URL too.

Usage: python .ci/simple_index.py OUT_DIR FILE...
"""

from __future__ import annotations

import hashlib
import html
import re
import shutil
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

# A wheel is NAME-VERSION(-BUILD)?-PYTAG-ABITAG-PLATTAG.whl, an sdist NAME-VERSION.tar.gz (or .zip).
WHEEL_NAME = re.compile(r"^(?P<name>[^-]+)-[^-]+(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")
SDIST_NAME = re.compile(r"^(?P<name>.+)-[^-]+\.(tar\.gz|zip)$")


def normalized(name: str) -> str:
    """The PEP 503 form of a project name: runs of ``-``, ``_`` and ``.`` become one ``-``, lowercase."""
    return re.sub(r"[-_.]+", "-", name).lower()


def project_of(path: Path) -> str:
    """The normalised project name a distribution file belongs to (ValueError for anything else)."""
    for pattern in (WHEEL_NAME, SDIST_NAME):
        match = pattern.match(path.name)
        if match:
            return normalized(match.group("name"))
    raise ValueError(f"{path.name} is neither a wheel nor an sdist")


def requires_python(path: Path) -> str | None:
    """The ``Requires-Python`` of a wheel or sdist, for the index's ``data-requires-python`` (PEP 503)."""
    text: str | None = None
    if path.name.endswith(".whl"):
        with zipfile.ZipFile(path) as wheel:
            names = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1]
            if names:
                text = wheel.read(names[0]).decode("utf-8")
    elif path.name.endswith(".tar.gz"):
        with tarfile.open(path) as sdist:
            for member in sdist.getmembers():
                if member.name.count("/") == 1 and member.name.endswith("/PKG-INFO"):
                    handle = sdist.extractfile(member)
                    text = handle.read().decode("utf-8") if handle else None
                    break
    if text is None:
        return None
    return Parser().parsestr(text, headersonly=True)["Requires-Python"]


def _page(title: str, links: list[str]) -> str:
    body = "\n".join(f"    {link}<br/>" for link in links)
    return (f"<!DOCTYPE html>\n<html>\n  <head><meta name=\"pypi:repository-version\" content=\"1.0\">"
            f"<title>{html.escape(title)}</title></head>\n  <body>\n{body}\n  </body>\n</html>\n")


def write_simple_index(files: list[Path], out: Path) -> None:
    """Copy ``files`` into ``out/files`` and write ``out/simple`` (the root page and one page per project)."""
    by_project: dict[str, list[Path]] = {}
    for path in files:
        by_project.setdefault(project_of(path), []).append(path)
    (out / "files").mkdir(parents=True, exist_ok=True)
    simple = out / "simple"
    simple.mkdir(parents=True, exist_ok=True)
    for project, paths in sorted(by_project.items()):
        links = []
        for path in sorted(paths, key=lambda p: p.name):
            target = out / "files" / path.name
            if path.resolve() != target.resolve():
                shutil.copyfile(path, target)
            digest = hashlib.sha256(target.read_bytes()).hexdigest()
            python = requires_python(target)
            attribute = f' data-requires-python="{html.escape(python)}"' if python else ""
            href = html.escape(f"../../files/{path.name}#sha256={digest}")
            links.append(f'<a href="{href}"{attribute}>{html.escape(path.name)}</a>')
        (simple / project).mkdir(exist_ok=True)
        (simple / project / "index.html").write_text(_page(f"Links for {project}", links), encoding="utf-8")
    root_links = [f'<a href="{p}/">{p}</a>' for p in sorted(by_project)]
    (simple / "index.html").write_text(_page("Simple index", root_links), encoding="utf-8")


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python .ci/simple_index.py OUT_DIR FILE...", file=sys.stderr)
        return 2
    try:
        write_simple_index([Path(a) for a in argv[1:]], Path(argv[0]))
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
