"""The engine behind ``cce packs new``: a ready-to-edit language pack for any tree-sitter grammar wheel.

Writing a pack by hand means reading a grammar's node kinds, picking the ones
that are functions, classes and imports, finding a sample and measuring what it
must produce. ``scaffold_pack`` does that first draft mechanically so an author
starts from a pack that installs, registers and passes its own tests, and only
has to review the guesses. This module checks the input, runs the steps and
writes the result; each step has its own module:

* ``grammar_source`` — the grammar a distribution ships, and its ``tags.scm``;
* ``tags_query`` — which kinds ``tags.scm`` calls definitions;
* ``kind_guesses`` — the guessed node kinds of each ``LanguagePack`` member;
* ``pack_sample`` — the sample file, found and measured;
* ``pack_render`` and ``pack_templates`` — the files of the distribution.

Bad input raises :class:`CceError` and writes nothing: the distribution is
built in a temporary directory beside the target and renamed into place only
when complete.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib import metadata
from pathlib import Path

from cce_core.authoring.grammar_source import TAGS_QUERY, Grammar, load_grammar, read_tags_query
from cce_core.authoring.kind_guesses import guess_kinds
from cce_core.authoring.pack_render import PackPlan, render_pack_files
from cce_core.authoring.pack_sample import (
    Measured,
    as_package_text,
    find_sample,
    measure,
    not_found_reason,
)
from cce_core.foundation.errors import CceError

_NAME = re.compile(r"[a-z][a-z0-9_]*")
# One final suffix: the engine maps a file to its pack by the lowercased text after the last dot.
_EXTENSION = re.compile(r"\.[a-z0-9][a-z0-9_+\-]*")


# --- the report -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaffoldReport(PackPlan):
    """What ``scaffold_pack`` wrote and guessed: the plan it carried out, and where.

    ``lines`` is what the CLI prints.
    """

    target: Path
    has_tags_query: bool

    @cached_property
    def lines(self) -> list[str]:
        return _report_lines(self)

    @property
    def min_functions(self) -> int:
        return self.measured.functions

    @property
    def min_classes(self) -> int:
        return self.measured.classes

    @property
    def expected_kinds(self) -> tuple[str, ...]:
        return self.measured.kinds

    @property
    def expected_imports(self) -> tuple[str, ...]:
        return self.measured.imports

    @property
    def function_types(self) -> tuple[str, ...]:
        return self.guesses["function_types"].kinds

    @property
    def class_types(self) -> tuple[str, ...]:
        return self.guesses["class_types"].kinds

    @property
    def import_node_types(self) -> tuple[str, ...]:
        return self.guesses["import_node_types"].kinds

    @property
    def body_node_types(self) -> tuple[str, ...]:
        return self.guesses["body_node_types"].kinds

    @property
    def doc_node_types(self) -> tuple[str, ...]:
        return self.guesses["doc_node_types"].kinds


def render_report(report: ScaffoldReport) -> str:
    """The text ``cce packs new`` prints: one line per fact, warnings in capitals."""
    return "\n".join(report.lines)


# --- input checks -----------------------------------------------------------------------------


def check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise CceError(f'invalid pack name "{name}": use a lowercase identifier ([a-z][a-z0-9_]*), e.g. "mylang"')


def check_extensions(extensions: Sequence[str]) -> tuple[str, ...]:
    if not extensions:
        raise CceError("no extensions given: claim at least one, e.g. --extensions .x")
    for ext in extensions:
        if not _EXTENSION.fullmatch(ext):
            fixed = "." + ext.strip().lstrip(".").lower()
            raise CceError(
                f'invalid extension "{ext}": each extension must be lowercase with a leading dot and no other '
                f'dot, e.g. "{fixed}"'
            )
    return tuple(dict.fromkeys(extensions))


# --- the entry point --------------------------------------------------------------------------


def scaffold_pack(name: str, grammar_distribution: str, extensions: Sequence[str] | None, out_dir: Path,
                  sample: Path | None = None, *, search_root: Path | None = None) -> ScaffoldReport:
    """Write ``out_dir / "cce-pack-NAME"``: an installable pack for ``grammar_distribution``'s grammar.

    ``extensions`` default to ``.NAME``. Without ``sample``, the smallest clean
    file with a function under ``search_root`` (the working directory) becomes
    the sample; failing that the sample is empty and the report says so.
    Raises :class:`CceError` on bad input, having written nothing.
    """
    check_name(name)
    exts = check_extensions(list(extensions) if extensions is not None else [f".{name}"])
    out_dir = Path(out_dir)
    target = out_dir / f"cce-pack-{name}"
    if sample is not None and not Path(sample).is_file():
        problem = "is not a file" if Path(sample).exists() else "does not exist"
        raise CceError(f'sample file "{sample}" {problem}')
    if target.exists() or target.is_symlink():
        raise CceError(f'"{target}" already exists; remove it or choose another --dir')
    if out_dir.exists() and not out_dir.is_dir():
        raise CceError(f'"{out_dir}" is not a directory')
    grammar = load_grammar(grammar_distribution, name)
    tags_query = read_tags_query(grammar)
    guesses = guess_kinds(grammar, tags_query)
    function_types = guesses["function_types"].kinds

    chosen = _choose_sample(grammar, sample, exts, function_types, search_root)
    ext = chosen.extension
    if chosen.empty:
        measured = Measured(0, 0, (), (), False)
    else:
        measured = measure(grammar, as_package_text(chosen.raw), function_types, guesses["class_types"].kinds,
                           guesses["import_node_types"].kinds)

    report = ScaffoldReport(
        target=target,
        has_tags_query=tags_query is not None,
        name=name,
        module=f"cce_pack_{name}",
        grammar=grammar,
        extensions=exts,
        guesses=guesses,
        sample_raw=chosen.raw,
        sample_file=f"sample{ext}",
        sample_name=f"{name}{ext if ext in exts else exts[0]}",
        sample_origin=chosen.origin,
        sample_empty=chosen.empty,
        measured=measured,
        tree_sitter_version=metadata.version("tree-sitter"),
    )
    _write_atomically(target, render_pack_files(report))
    return report


@dataclass(frozen=True)
class _ChosenSample:
    raw: bytes
    extension: str  # the sample file's, one of the pack's where possible
    origin: str  # where it came from, as the report and the README say it
    empty: bool


def _choose_sample(grammar: Grammar, sample: Path | None, exts: tuple[str, ...], function_types: Sequence[str],
                   search_root: Path | None) -> _ChosenSample:
    """The given sample, else the best file under ``search_root`` (the working directory), else an empty one."""
    if sample is not None:
        sample_path = Path(sample)
        try:
            sample_raw = sample_path.read_bytes()
            as_package_text(sample_raw)
        except UnicodeDecodeError:
            raise CceError(f'sample file "{sample}" is not UTF-8 text; the engine reads samples as UTF-8') from None
        except OSError as exc:
            raise CceError(f'sample file "{sample}" cannot be read: {exc.strerror or exc}') from None
        ext = sample_path.suffix.lower() if _EXTENSION.fullmatch(sample_path.suffix.lower()) else exts[0]
        return _ChosenSample(sample_raw, ext, f"given {sample_path}", not sample_raw.strip())
    root = Path(search_root) if search_root is not None else Path.cwd()
    found = find_sample(grammar, exts, function_types, root)
    if found is None:
        why = "no function kind was guessed" if not function_types else not_found_reason(exts, root)
        return _ChosenSample(b"", exts[0], f"none given and none found: {why}; wrote an EMPTY sample", True)
    found_path, sample_raw = found
    try:
        shown = found_path.relative_to(root)
    except ValueError:
        shown = found_path
    return _ChosenSample(sample_raw, found_path.suffix.lower(), f"found {shown} under {root} ({len(sample_raw)} bytes)",
                         False)


def _write_atomically(target: Path, rendered: dict[str, bytes]) -> None:
    """Build the tree beside ``target`` and rename it into place; on any failure leave nothing behind."""
    out_dir = target.parent
    created: list[Path] = []
    for parent in reversed([out_dir, *out_dir.parents]):
        if not parent.exists():
            created.append(parent)
    temp = out_dir / f".{target.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        # os.mkdir honours the umask, so the renamed directory gets normal permissions.
        temp.mkdir()
        for relative, data in rendered.items():
            path = temp / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if target.exists() or target.is_symlink():
            raise CceError(f'"{target}" already exists; remove it or choose another --dir')
        os.rename(temp, target)
    except BaseException as exc:
        shutil.rmtree(temp, ignore_errors=True)
        for directory in reversed(created):  # only the (now empty) directories this call made
            try:
                directory.rmdir()
            except OSError:
                break
        if isinstance(exc, OSError):
            raise CceError(f'could not write "{target}": {exc.strerror or exc}') from None
        raise


def _report_lines(report: ScaffoldReport) -> list[str]:
    grammar = report.grammar
    lines = [
        f"created {report.target} (distribution cce-pack-{report.name}, module {report.module})",
        f"grammar: {grammar.distribution} {grammar.version}, "
        f"{grammar.module_name}.{grammar.language_function}() — {len(grammar.named_kinds)} named node kinds"
        + ("" if report.has_tags_query else f"; no {TAGS_QUERY} in the wheel, guesses are by name only"),
    ]
    for guess in report.guesses.values():
        lines.append(guess.line())
        if guess.tags_rejected:
            lines.append(f"  left out {guess.tags_rejected!r}: {TAGS_QUERY} tags them but they are not "
                         "definition-shaped")
    if not report.function_types:
        lines.append("WARNING: no function node kind was found; fill in FUNCTION_TYPES by hand")
    lines.append(f"sample: {report.sample_origin} -> {report.module}/{report.sample_file}")
    if report.sample_empty:
        lines.append(f"WARNING: THE SAMPLE IS EMPTY — replace {report.module}/{report.sample_file} with real code, "
                     f"update PACK.expected and SAMPLE_IS_EMPTY in tests/test_pack_{report.name}.py")
    else:
        if report.measured.has_error:
            lines.append("WARNING: the sample does not parse cleanly (ERROR nodes); the counts below may be off")
        if report.function_types and not report.min_functions:
            lines.append("WARNING: the sample holds no node of the guessed function kinds; check FUNCTION_TYPES "
                         "or give a sample with functions")
    lines.append(f"expected: min_functions={report.min_functions} min_classes={report.min_classes} "
                 f"kinds={report.expected_kinds!r}")
    lines.append(f"expected imports = {report.expected_imports!r} (review this: generic import rule)"
                 if report.import_node_types else "imports: none (no import node kind recognised)")
    lines.append(f"next: review {report.target / 'README.md'}, then pip install -e {report.target} "
                 f"&& cce packs --validate && python -m pytest {report.target / 'tests'}")
    return lines
