"""The plugin contract's reference in docs/plugins.md, rendered from the docstrings of cce_core/hookspecs.py.

The contract has one source, the docstrings. ``docs/plugins.md`` holds them
in marked regions::

    <!-- BEGIN GENERATED contract:cce_register_packs -->
    ...
    <!-- END GENERATED contract:cce_register_packs -->

and this module rewrites every region from the docstring it names: the
calling conventions (``CceHookSpecs``), each hook (signature, the release
that added it, its sections, its example) and each type a plugin exchanges
with the engine. Everything outside the regions is the page's own prose.

    python -m cce_core.plugins.hook_reference            # rewrite docs/plugins.md
    python -m cce_core.plugins.hook_reference --check    # exit 1 when it is out of date

``tests/test_hook_docs.py`` regenerates the page and fails on any
difference, so a docstring edit without a rerun fails the build.

The docstrings are written in the reStructuredText subset Python tools
read; the conversion covers exactly what they use: paragraphs, ``*``
bullet lists, ``Name:`` sections with indented bodies (``Parameters:`` of
``name: text`` items), ``Example::`` literal blocks, ````code```` and
``:role:`target``` references.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cce_core import hookspecs
from cce_core.hookspecs import PROJECT_NAME, CceHookSpecs

# The regions a page may hold, and the docstrings they render.
HOOKS: tuple[str, ...] = tuple(name for name in vars(CceHookSpecs) if name.startswith("cce_"))
TYPES: tuple[str, ...] = ("LanguagePack", "PackExpected", "FileConventions", "Embedder", "EmbedderError",
                          "DocumentChunker", "DocumentSection", "CompactChunk", "CompactRenderer")
CONVENTIONS = "CceHookSpecs"

REGION = re.compile(r"<!-- BEGIN GENERATED contract:(?P<name>\w+) -->\n.*?<!-- END GENERATED contract:(?P=name) -->",
                    re.S)
DEFAULT_DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"

_SECTIONS = ("Parameters", "Returns", "Called", "Results", "Order", "Errors")
_SECTION = re.compile(rf"^({'|'.join(_SECTIONS)}):$")
_SINCE = re.compile(r"^Since: (\S+)$", re.M)
_PARAMETER = re.compile(r"^(\w+): (.*)$")
_ROLE = re.compile(r":(?:class|meth|func|mod|data|attr|exc|obj):`(~?)([^`]+)`")


def contract_names() -> list[str]:
    """Every region name a complete reference has: the conventions, each hook, each contract type."""
    return [CONVENTIONS, *HOOKS, *TYPES]


def since(obj: Any) -> str | None:
    """The release a docstring's ``Since:`` line names, or ``None`` when it has none."""
    found = _SINCE.search(inspect.getdoc(obj) or "")
    return found.group(1) if found else None


def render(name: str) -> str:
    """The markdown of region ``name`` (see :func:`contract_names`)."""
    if name == CONVENTIONS:
        return _markdown(inspect.getdoc(CceHookSpecs) or "")
    if name in HOOKS:
        return _render_hook(name)
    if name in TYPES:
        return _render_type(getattr(hookspecs, name))
    raise ValueError(f'docs/plugins.md has a region "{name}" that names nothing in the contract '
                     f"(known: {', '.join(contract_names())})")


def regenerate(text: str) -> str:
    """``text`` with every marked region rendered afresh from the docstrings."""

    def region(match: re.Match[str]) -> str:
        name = match.group("name")
        return (f"<!-- BEGIN GENERATED contract:{name} -->\n{render(name)}\n"
                f"<!-- END GENERATED contract:{name} -->")

    return REGION.sub(region, text)


# -- hooks and types -----------------------------------------------------------------------------------------


def _render_hook(name: str) -> str:
    function = getattr(CceHookSpecs, name)
    options = getattr(function, f"{PROJECT_NAME}_spec", {}) or {}
    kind = "first result" if options.get("firstresult") else "collected"
    marker = "@hookspec(firstresult=True)" if options.get("firstresult") else "@hookspec"
    head = [f"*Since cce-core {since(function)} · {kind}*",
            f"```python\n{marker}\ndef {_signature(function)}\n```"]
    return "\n\n".join([*head, _markdown(inspect.getdoc(function) or "")])


def _render_type(cls: type) -> str:
    doc = _markdown(inspect.getdoc(cls) or "")
    if dataclasses.is_dataclass(cls):
        options = cls.__dataclass_params__  # type: ignore[attr-defined]
        flags = [flag for flag in ("frozen",) if getattr(options, flag)]
        decorator = f"@dataclass({', '.join(f'{flag}=True' for flag in flags)})" if flags else "@dataclass"
        body = [f"    {f.name}: {f.type}{_default(f)}" for f in dataclasses.fields(cls)]
        return "\n\n".join([f"```python\n{decorator}\nclass {cls.__name__}:\n" + "\n".join(body) + "\n```", doc])
    bases = ", ".join(b.__name__ for b in cls.__bases__ if b is not object)
    header = f"class {cls.__name__}({bases}):" if bases else f"class {cls.__name__}:"
    if issubclass(cls, Exception):
        return "\n\n".join([f"```python\n{header} ...\n```", doc])
    attributes = [f"    {attr}: {kind} = {_literal(vars(cls)[attr])}" for attr, kind in cls.__annotations__.items()]
    methods = [(attr, member) for attr, member in vars(cls).items()
               if inspect.isfunction(member) and (not attr.startswith("_") or attr == "__call__")]
    code = [header, *attributes, *(f"    def {_signature(member, keep_self=True)}: ..." for _, member in methods)]
    blocks = ["```python\n" + "\n".join(code) + "\n```", doc]
    if cls.__name__ != "CompactRenderer":  # its one method is the protocol itself, described above
        items = [_indent_item(f"`{attr}({_parameter_names(member)})` — " + _markdown(inspect.getdoc(member) or ""))
                 for attr, member in methods]
        if items:
            blocks.append("Methods:\n\n" + "\n".join(items))
    return "\n\n".join(blocks)


def _signature(function: Callable[..., Any], *, keep_self: bool = False) -> str:
    signature = inspect.signature(function)
    parts = []
    for parameter in signature.parameters.values():
        if parameter.name == "self" and not keep_self:
            continue
        text = parameter.name
        if parameter.annotation is not parameter.empty:
            text += f": {parameter.annotation}"
        if parameter.default is not parameter.empty:
            text += f" = {_literal(parameter.default)}"
        parts.append(text)
    returns = signature.return_annotation
    tail = "" if returns is signature.empty else f" -> {returns}"
    return f"{function.__name__}({', '.join(parts)}){tail}"


def _parameter_names(function: Callable[..., Any]) -> str:
    return ", ".join(name for name in inspect.signature(function).parameters if name != "self")


def _default(field: dataclasses.Field[Any]) -> str:
    if field.default is not dataclasses.MISSING:
        return f" = {_literal(field.default)}"
    return ""


def _literal(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


# -- docstring to markdown -----------------------------------------------------------------------------------


def _markdown(doc: str) -> str:
    """One docstring as markdown blocks (the ``Since:`` line is left out: the hook's header shows it)."""
    lines = doc.split("\n")
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or _SINCE.match(line):
            i += 1
            continue
        section = _SECTION.match(line)
        if section:
            body, i = _indented(lines, i + 1)
            blocks.append(_section(section.group(1), body))
            continue
        start = i
        while i < len(lines) and lines[i].strip() and not _SECTION.match(lines[i]):
            i += 1
        paragraph = lines[start:i]
        if paragraph[-1].endswith("::"):  # a literal block follows: "Example::" and the like
            paragraph[-1] = paragraph[-1][:-1]
            code, i = _indented(lines, i)
            blocks.append(_paragraph(paragraph) + "\n\n```python\n" + "\n".join(code).strip("\n") + "\n```")
        else:
            blocks.append(_paragraph(paragraph))
    return "\n\n".join(blocks)


def _indented(lines: list[str], i: int) -> tuple[list[str], int]:
    """The block of blank or indented lines from ``i``, dedented, and where it ends."""
    body: list[str] = []
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
        body.append(lines[i])
        i += 1
    while body and not body[-1].strip():
        body.pop()
    width = min((len(line) - len(line.lstrip(" ")) for line in body if line.strip()), default=0)
    return [line[width:] for line in body], i


def _section(name: str, body: list[str]) -> str:
    if name == "Parameters" and any(_PARAMETER.match(line) for line in body):
        items: list[list[str]] = []
        for line in body:
            if _PARAMETER.match(line):
                items.append([line])
            elif items:
                items[-1].append(line.strip())
        rendered = []
        for item in items:
            match = _PARAMETER.match(item[0])
            assert match is not None  # every item starts with a matching line
            text = "\n    ".join([match.group(2), *item[1:]])
            rendered.append(f"  - `{match.group(1)}` — {_inline(text)}")
        return "- **Parameters.**\n" + "\n".join(rendered)
    paragraphs = "\n".join(body).split("\n\n")
    return _indent_item(f"**{name}.** " + "\n\n".join(_paragraph(p.split("\n")) for p in paragraphs))


def _paragraph(lines: list[str]) -> str:
    if lines and lines[0].startswith("* "):
        items: list[list[str]] = []
        for line in lines:
            if line.startswith("* "):
                items.append([line[2:]])
            else:
                items[-1].append(line.strip())
        return "\n".join("- " + _inline("\n  ".join(item)) for item in items)
    return _inline("\n".join(line.strip() for line in lines))


def _indent_item(text: str) -> str:
    """``text`` as one markdown list item: later lines indented under its bullet."""
    first, *rest = text.split("\n")
    return "\n".join([f"- {first}", *(f"  {line}" if line else "" for line in rest)])


def _inline(text: str) -> str:
    """reST inline markup as markdown: literals and references as code spans, hooks linked to their sections."""

    def reference(match: re.Match[str]) -> str:
        tilde, target = match.groups()
        shown = target.rsplit(".", 1)[-1] if tilde or target.startswith("CceHookSpecs.") else target
        return f"[`{shown}`](#{shown})" if shown in HOOKS else f"`{shown}`"

    text = _ROLE.sub(reference, text).replace("``", "`")
    # Outside code spans, "<" would open an HTML tag in markdown.
    pieces = text.split("`")
    return "`".join(piece.replace("<", "&lt;") if index % 2 == 0 else piece for index, piece in enumerate(pieces))


# -- command line --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``[--check] [PATH]``: rewrite the reference regions of PATH (default: this checkout's docs/plugins.md)."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [a for a in args if a != "--check"]
    if len(paths) > 1 or any(a.startswith("-") for a in paths):
        print("error: usage: python -m cce_core.plugins.hook_reference [--check] [PATH]", file=sys.stderr)
        return 2
    path = Path(paths[0]) if paths else DEFAULT_DOC
    try:
        text = path.read_text(encoding="utf-8")
        fresh = regenerate(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        print(f"error: cannot regenerate {path}: {exc}", file=sys.stderr)
        return 2
    if fresh == text:
        return 0
    if check:
        print(f"error: {path} is out of date with cce_core/hookspecs.py — run "
              "`python -m cce_core.plugins.hook_reference`", file=sys.stderr)
        return 1
    from cce_core.foundation.atomic import atomic_write

    atomic_write(path, fresh.encode("utf-8"))
    print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
