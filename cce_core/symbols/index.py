"""The symbol graph of a store: definitions, references, callers and callees, answered from the stored records.

:func:`open_symbols` reads every live file's symbol record (written at index
time, see :mod:`.extract`) once; queries then run on in-memory maps. Calls
are resolved without a type checker, in three steps, each edge carrying the
step that found it: a definition in the caller's own file (``same-file``),
else in a file the caller's file imports (``import``, through the pack's
``cce_resolve_import``), else any definition of that name in the same
language (``global``). A store whose segments hold no symbol records (pulled
from a sync remote, or written before symbols existed) is *unavailable*: its
queries answer nothing and :attr:`SymbolIndex.unavailable_reason` says how to
get them.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, overload

from cce_core.foundation.errors import CceError
from cce_core.indexing.store import SegmentedStore, load_store
from cce_core.symbols.extract import ALIAS_SCOPE, CALL_RESULT, LOCALS, RETURNED_VARIABLE, RETURNS
from cce_core.symbols.model import (
    CALL,
    GLOBAL,
    GUESS,
    IMPORT,
    REFERENCE,
    REFERENCE_OF_CODE,
    SAME_FILE,
    VIA_IMPORT,
    CallEdge,
    Definition,
    FileSymbols,
    Reference,
    decode_file_symbols,
)
from cce_core.symbols.resolution import ImportResolver

if TYPE_CHECKING:  # pragma: no cover - typing only
    from cce_core.plugins.host import PluginHost

T = TypeVar("T")

# Kinds a call may land on, preferred over other definitions of the same name (a constant, a type).
CALLABLE_KINDS = frozenset({"function", "method", "class", "constructor", "macro", "module", "declaration"})
# The stored code of a call through the instance itself (model.SELF_CALL).
SELF_CODE = "s"
# Definitions whose members (methods, fields) are reached through a receiver or from inside.
CLASS_KINDS = frozenset({"class", "interface", "implementation", "struct", "trait", "enum"})
# How many files deep a re-export (a file importing a name it does not define) is followed.
REEXPORT_HOPS = 4
# The kind of a definition without a body (a C prototype): it stands for the definition elsewhere.
DECLARATION = "declaration"
# Receivers that are the instance or class itself, and the parent class's view of it.
SELF_RECEIVERS = frozenset({"self", "cls", "this"})
SUPER_RECEIVER = "super"
# A class's bases, read from its first line in any of the common shapes: `class A(B, m.C):`, `extends B`, `class A < B`.
_BASES = re.compile(r"\bclass\s+\w+\s*(?:\[[^\]]*\]\s*)?(?:\((?P<paren>[^)]*)\)|extends\s+(?P<extends>[\w.]+)"
                    r"|<\s*(?P<angle>[\w:]+))")
_BASE_NAME = re.compile(r"(\w+)\s*(?:\[.*)?$")
# How far a class's ancestry is followed (a cycle or a deep framework hierarchy stops there).
MAX_ANCESTORS = 16
UNAVAILABLE = ("this index holds no symbols (it was pulled from a sync remote or written before symbol "
               "navigation existed) — run `cce index --rebuild` to record them")


@dataclass(frozen=True, slots=True)
class Resolution:
    """Where a reference lands: its candidate definitions and the step that found them (None: nowhere)."""

    targets: tuple[int, ...]
    confidence: str | None


class _FileRecord:
    """One file's stored record and what is derived from it on first use (qualified names)."""

    __slots__ = ("bindings", "chunk_ids", "def_base", "language", "path", "qualified", "receivers", "ref_base",
                 "symbols")

    def __init__(self, path: str, symbols: FileSymbols, language: str, chunk_ids: Sequence[str],
                 def_base: int, ref_base: int) -> None:
        self.path = path
        self.symbols = symbols
        self.language = language
        self.chunk_ids = chunk_ids
        self.def_base = def_base
        self.ref_base = ref_base
        self.qualified: list[str] | None = None
        self.receivers: dict[int, str] | None = None
        self.bindings: dict[tuple[int, str], list[str]] | None = None

    def receiver(self, local: int) -> str | None:
        """The plain name written before the ``local``-th reference's ``.``, when the file can type it."""
        if self.receivers is None:
            self.receivers = {int(i): str(name) for i, name in self.symbols.receivers}  # type: ignore[call-overload]
        return self.receivers.get(local)

    def types_of(self, scope: int, variable: str) -> list[str]:
        """The types ``variable`` is given in the definition ``scope`` (a local index; -1: module level)."""
        if self.bindings is None:
            found: dict[tuple[int, str], list[str]] = {}
            for row in self.symbols.bindings:
                found.setdefault((int(row[0]), str(row[1])), []).append(str(row[2]))  # type: ignore[call-overload]
            self.bindings = found
        return self.bindings.get((scope, variable), [])

    def qualified_names(self) -> list[str]:
        if self.qualified is None:
            qualified: list[str] = []
            for row in self.symbols.definitions:
                parent = row[4]
                if isinstance(parent, int) and 0 <= parent < len(qualified):
                    qualified.append(f"{qualified[parent]}.{row[0]}")
                elif len(row) > 7 and row[7]:  # a method declared outside its type: Type.method
                    qualified.append(f"{row[7]}.{row[0]}")
                else:
                    qualified.append(str(row[0]))
            self.qualified = qualified
        return self.qualified

    def chunk(self, offset: object) -> str | None:
        ids = self.chunk_ids
        return ids[offset] if isinstance(offset, int) and 0 <= offset < len(ids) else None


class _Rows(Sequence[T]):
    """Definitions or references made into objects only when read (a large store holds millions)."""

    def __init__(self, count: int, make: Callable[[int], T]) -> None:
        self._made: list[T | None] = [None] * count
        self._make = make

    def __len__(self) -> int:
        return len(self._made)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        made = self._made[index]
        if made is None:
            made = self._made[index] = self._make(index if index >= 0 else index + len(self._made))
        return made


class SymbolIndex:
    """Every live file's definitions and references, indexed by name."""

    def __init__(self, records: dict[str, tuple[FileSymbols, str, Sequence[str]]],
                 host: PluginHost | None = None, suffixes: Iterable[str] = (), missing: Iterable[str] = ()) -> None:
        """``records``: path -> (symbols, language, the chunk ids of the file in order)."""
        self.host = host
        self.missing = sorted(missing)
        self._files = sorted(records)
        self._records: list[_FileRecord] = []
        self._record_of: dict[str, _FileRecord] = {}
        # Per definition and per reference (global numbers, file after file): only what lookups and
        # resolution read on every candidate; the objects themselves are made when a query returns them.
        self._def_file: list[int] = []
        self._def_member: list[bool] = []  # sits directly in a class-like definition
        self._def_parent: list[int] = []  # the global number of its enclosing definition, or -1
        self._ref_file: list[int] = []
        self._ref_enclosing: list[int] = []  # the global number of the enclosing definition, or -1
        self._defs_by_name: dict[str, list[int]] = {}
        self._refs_by_name: dict[str, list[int]] = {}
        self._language: dict[str, str] = {}
        self._modules: dict[str, list[str]] = {}
        self._imported_names: dict[str, set[str]] = {}  # path -> the names its import statements name
        self._import_sources: dict[str, dict[str, list[str]]] = {}  # path -> name -> modules it is imported from
        for path in self._files:
            symbols, language, chunk_ids = records[path]
            self._add_file(path, symbols, language, chunk_ids)
        self._definitions: _Rows[Definition] = _Rows(len(self._def_file), self._make_definition)
        self._references: _Rows[Reference] = _Rows(len(self._ref_file), self._make_reference)
        self._refs_by_enclosing_map: dict[int, list[int]] | None = None
        self._resolver = ImportResolver(self._files + self.missing, host, suffixes)
        self._imported: dict[str, frozenset[str]] = {}
        self._resolved: dict[int, Resolution] = {}  # per reference, on first use
        self._ancestry: dict[int, list[int]] = {}  # class -> itself then its ancestors, nearest first
        self._resolving: set[int] = set()  # call results being typed (`r = r.next()` must not loop)

    # -- loading -------------------------------------------------------------------------------

    def _add_file(self, path: str, symbols: FileSymbols, language: str, chunk_ids: Sequence[str]) -> None:
        file_index = len(self._records)
        def_base, ref_base = len(self._def_file), len(self._ref_file)
        self._records.append(_FileRecord(path, symbols, language, chunk_ids, def_base, ref_base))
        self._record_of[path] = self._records[-1]
        definitions = symbols.definitions
        n_defs = len(definitions)
        defs_by_name = self._defs_by_name
        for local, row in enumerate(definitions):
            parent = row[4]
            inside = parent if isinstance(parent, int) and 0 <= parent < local else -1
            defs_by_name.setdefault(str(row[0]), []).append(def_base + local)
            # A member of a class-like definition (or of a receiver type): a bare name in another file
            # does not reach it.
            self._def_member.append((inside >= 0 and definitions[inside][1] in CLASS_KINDS) or len(row) > 7)
            self._def_parent.append(def_base + inside if inside >= 0 else -1)
        self._def_file.extend([file_index] * n_defs)
        refs = symbols.references
        refs_by_name = self._refs_by_name
        for rid, name in enumerate(refs.names, ref_base):
            refs_by_name.setdefault(name, []).append(rid)
        self._ref_enclosing.extend(def_base + e if 0 <= e < n_defs else -1 for e in refs.enclosing)
        sources: dict[str, list[str]] = {}
        imported_names: set[str] = set()
        if "i" in refs.codes or "I" in refs.codes:
            for i, code in enumerate(refs.codes):
                if code == "i" or code == "I":
                    name = refs.names[i]
                    imported_names.add(name)
                    if 0 <= refs.modules[i] < len(symbols.modules):
                        sources.setdefault(name, []).append(symbols.modules[refs.modules[i]])
        self._ref_file.extend([file_index] * len(refs))
        self._modules[path] = list(symbols.modules)
        if imported_names:
            self._imported_names[path] = imported_names
        if sources:
            self._import_sources[path] = sources
        self._language[path] = language

    def _make_definition(self, gid: int) -> Definition:
        record = self._records[self._def_file[gid]]
        local = gid - record.def_base
        name, kind, line, end_line, _parent, offset, signature = record.symbols.definitions[local][:7]
        return Definition(str(name), record.qualified_names()[local], str(kind), record.path, int(line),  # type: ignore[call-overload]
                          int(end_line), record.chunk(offset), str(signature), record.language)  # type: ignore[call-overload]

    def _make_reference(self, rid: int) -> Reference:
        record = self._records[self._ref_file[rid]]
        refs, local = record.symbols.references, rid - record.ref_base
        code = refs.codes[local]
        inside = self._ref_enclosing[rid]
        qualified = record.qualified_names()[inside - record.def_base] if inside >= 0 else None
        return Reference(refs.names[local], record.path, refs.lines[local],
                         REFERENCE_OF_CODE.get(code.lower(), REFERENCE), qualified, record.chunk(refs.chunks[local]),
                         record.language, code.isupper(), code.lower() == SELF_CODE)

    @property
    def _refs_by_enclosing(self) -> dict[int, list[int]]:
        """Enclosing definition -> the references inside it (built when callees are first asked for)."""
        if self._refs_by_enclosing_map is None:
            found: dict[int, list[int]] = {}
            for rid, inside in enumerate(self._ref_enclosing):
                if inside >= 0:
                    found.setdefault(inside, []).append(rid)
            self._refs_by_enclosing_map = found
        return self._refs_by_enclosing_map

    # -- state ---------------------------------------------------------------------------------

    @property
    def available(self) -> bool:
        """Whether the store recorded symbols (for at least its files that have a language)."""
        return not self.missing or bool(self._files)

    @property
    def unavailable_reason(self) -> str:
        if not self.missing:
            return ""
        if not self._files:
            return UNAVAILABLE
        return f"{len(self.missing)} file(s) of this index hold no symbols — run `cce index --rebuild` to record them"

    def files(self) -> list[str]:
        return list(self._files)

    def all_definitions(self) -> list[Definition]:
        return sorted((self._definitions[i] for i in range(len(self._definitions))), key=_def_key)

    def all_references(self) -> list[Reference]:
        return sorted((self._references[i] for i in range(len(self._references))), key=_ref_key)

    # -- definitions ---------------------------------------------------------------------------

    def _definition_indices(self, name: str) -> list[int]:
        name = name.strip()
        if not name:
            return []
        if name in self._defs_by_name:
            return list(self._defs_by_name[name])
        for separator in ("::", "#", "->"):  # Rust/C++ paths, Ruby's Class#method, C arrows: all as "."
            name = name.replace(separator, ".")
        if "." not in name:
            return []
        last = name.rsplit(".", 1)[1]
        found = [i for i in self._defs_by_name.get(last, [])
                 if self._definitions[i].qualified_name == name
                 or self._definitions[i].qualified_name.endswith("." + name)]
        if found:
            return found
        # "module.function": the first part names the file (its stem) and the rest the qualified name;
        # "module.inner" also names a function nested in another (`blueprints.extend`) when nothing else does.
        head, rest = name.split(".", 1)
        in_module = [i for i in self._defs_by_name.get(last, []) if _stem(self._definitions[i].file_path) == head]
        exact = [i for i in in_module if self._definitions[i].qualified_name == rest]
        if exact or "." in rest:
            return exact
        return [i for i in in_module if not self._def_member[i]]

    def definitions(self, name: str, fuzzy: bool = False) -> list[Definition]:
        """Definitions of ``name`` (plain or qualified: ``Class.method``, ``module.function``).

        ``fuzzy``: every definition whose name or qualified name contains ``name`` case-insensitively,
        or holds its letters in order, best match first (exact, prefix, substring, subsequence).
        """
        if not fuzzy:
            return sorted((self._definitions[i] for i in self._definition_indices(name)), key=_def_key)
        needle = name.strip().lower()
        if not needle:
            return []
        ranked: list[tuple[int, Definition]] = []
        for d in (self._definitions[i] for i in range(len(self._definitions))):
            rank = _fuzzy_rank(needle, d.name.lower(), d.qualified_name.lower())
            if rank is not None:
                ranked.append((rank, d))
        ranked.sort(key=lambda item: (item[0], len(item[1].name), _def_key(item[1])))
        return [d for _rank, d in ranked]

    # -- resolution ----------------------------------------------------------------------------

    def imported_files(self, path: str) -> frozenset[str]:
        """The indexed files ``path``'s module specifiers resolve to."""
        found = self._imported.get(path)
        if found is None:
            language = self._language.get(path, "")
            targets = {self._resolver.resolve(language, spec, path) for spec in self._modules.get(path, [])}
            found = frozenset(f for t in targets if t is not None for f in self._resolver.files_of(t) if f != path)
            self._imported[path] = found
        return found

    def _resolve_index(self, ref_index: int) -> Resolution:
        found = self._resolved.get(ref_index)
        if found is None:
            found = self._resolved[ref_index] = self._resolve_uncached(ref_index)
        return found

    def _resolve_uncached(self, ref_index: int) -> Resolution:
        ref = self._references[ref_index]
        candidates = [i for i in self._defs_by_name.get(ref.name, ())
                      if self._definitions[i].language == ref.language]
        if ref.kind == CALL:
            callable_ones = [i for i in candidates if self._definitions[i].kind in CALLABLE_KINDS]
            candidates = callable_ones or candidates
        if not candidates:
            return Resolution((), None)
        if ref.member or ref.through_self:
            return self._resolve_member(ref_index, ref, candidates)
        if ref.kind != IMPORT and self._is_local(ref_index, ref.name):
            return Resolution((), None)  # `def send(self, request)`: `request` is the parameter
        # A bare name reaches a class's member only from inside that class: its body (`x = property(get_x)`),
        # or a method of it where the language reads a bare name through the instance (Ruby, Rust's `Self::`).
        inside = self._ref_enclosing[ref_index]
        # An imported name wins over the members (`loads(value)` inside a method `loads` is the import).
        around = set() if ref.name in self._imported_names.get(ref.file_path, ()) else self._scope_chain(inside)
        candidates = [i for i in candidates if not self._def_member[i] or self._def_parent[i] in around]
        if not candidates:
            return Resolution((), None)
        same = [i for i in candidates if self._definitions[i].file_path == ref.file_path]
        if same:
            # Lexical scope: the definition nested nearest around the use (`return decorator` in
            # `route` is `route`'s own `decorator`), else one at module level, else any in the file.
            scope = inside
            while True:
                nearest = [i for i in same if self._def_parent[i] == scope]
                if nearest:
                    return Resolution(self._with_bodies(nearest, candidates), SAME_FILE)
                if scope < 0:
                    break
                scope = self._def_parent[scope]
            return Resolution(self._with_bodies(same, candidates), SAME_FILE)
        if not ref.member:
            # A bare name reaches another file's class members only through its own class (same file,
            # above); and a name the file imports is that import's, or nothing here (a library's).
            candidates = [i for i in candidates if not self._def_member[i]]
        via = self._via_imports(ref.file_path, ref.name, candidates)
        if via:
            return Resolution(self._with_bodies(via, candidates), VIA_IMPORT)
        if not candidates or (not ref.member and ref.name in self._imported_names.get(ref.file_path, ())):
            return Resolution((), None)
        return Resolution(tuple(candidates), GLOBAL)

    def _resolve_member(self, ref_index: int, ref: Reference, candidates: list[int]) -> Resolution:
        """``x.name``: a member of ``x``'s class when the file tells which class that is, else a guess.

        The receiver is typed from what the file itself says: the instance (``self``, ``cls``,
        ``this``: the enclosing class), ``super()`` (its bases), a variable given a constructor's
        value or declared with a type (``app = Flask()``, ``app: Flask``), a class or a module it
        imports. The member is looked up in that class, then its bases (read from the classes' first
        lines). An unknown receiver (an untyped parameter, a chain ``a.b.name``) may mean any class's
        member of that name: those uses come back as ``guess``.
        """
        record = self._records[self._ref_file[ref_index]]
        receiver = "self" if ref.through_self else record.receiver(ref_index - record.ref_base)
        if receiver is None:
            return self._guess(candidates)
        owners: list[int] = []
        skip_own = False
        if receiver.startswith(CALL_RESULT):  # `app.test_client().open`: the class of what the call returns
            owners = self._call_result(record, int(receiver[1:]))
            if not owners:
                return self._guess(candidates)
        elif "." in receiver:  # `requests.utils.name`, `self.app.name`, `app.config.name`
            head, rest = receiver.split(".", 1)
            local = head in SELF_RECEIVERS or self._receiver_types(record, ref_index, head) is not None
            modules = None if local else self._module_files(ref.file_path, head)  # a variable hides a module
            if modules is not None:
                target = self._resolver.resolve(ref.language, receiver, ref.file_path)
                files = frozenset(self._resolver.files_of(target)) if target is not None else frozenset()
                found = self._defined_in(files, ref.name, candidates) if files else []
                if found:
                    return Resolution(tuple(found), VIA_IMPORT)
                # `flask.g.pop`: `g` is a variable of the module `flask` (or one it imports `g` from).
                variable, _, rest = rest.partition(".")
                owners = self._module_variable_classes(modules, variable, ref.language)
            else:
                owners = self._value_classes(record, ref_index, ref, head)
            for attribute in (rest.split(".") if rest else ()):
                owners = self._attribute_classes(owners, attribute)
            if not owners:
                return self._guess(candidates)
        elif receiver in SELF_RECEIVERS or receiver == SUPER_RECEIVER:
            owner = self._enclosing_class(ref_index)
            if owner < 0:
                return self._guess(candidates)
            owners, skip_own = [owner], receiver == SUPER_RECEIVER
        else:
            types = self._receiver_types(record, ref_index, receiver)
            where = ref.file_path
            if types is None and self._imports_in_scope(ref_index, receiver):
                where, types = self._imported_variable(ref.file_path, receiver)
            if types == []:  # a parameter without a declared type: a pytest fixture, or unknown
                # The fixture's class narrows the guess to its hierarchy, but stays a guess: a
                # checker that does not run pytest's lookup (jedi mostly does not) cannot tell either.
                fixture_members = [m for owner in self._fixture_classes(ref_index, receiver)
                                   for m in self._member_in_hierarchy(owner, ref.name)]
                if fixture_members:
                    return Resolution(tuple(sorted(set(fixture_members))), GUESS)
                return self._guess(candidates)
            elif types is not None:
                for type_name in types:
                    if type_name.startswith(CALL_RESULT):  # `r = requests.get(...)`: what `get` returns
                        owners.extend(self._call_result(self._record_of[where], int(type_name[1:])))
                    else:
                        owners.extend(self._classes_named(where, type_name, ref.language))
                if not owners:  # typed by a class outside the tree, or by a call that could not be followed
                    return self._guess(candidates)
            else:
                owners = self._classes_named(ref.file_path, receiver, ref.language)
                if not owners:
                    modules = self._module_files(ref.file_path, receiver)
                    if modules is None:
                        return self._guess(candidates)
                    found = self._defined_in(modules, ref.name, candidates)
                    return Resolution(tuple(found), VIA_IMPORT if found else None)
        found = []
        for owner in owners:
            for member in self._member_in_hierarchy(owner, ref.name, skip_own):
                if member not in found:
                    found.append(member)
        if not found:
            # The class is known, the member is not in its hierarchy as far as the tree shows (inherited
            # from a library class, or set in a constructor): any member of that name is a guess.
            return self._guess(candidates) if receiver in SELF_RECEIVERS else Resolution((), None)
        same = all(self._definitions[i].file_path == ref.file_path for i in found)
        return Resolution(tuple(sorted(found)), SAME_FILE if same else VIA_IMPORT)

    def _module_variable_classes(self, modules: frozenset[str], name: str, language: str) -> list[int]:
        """The classes of a module-level variable ``name`` of one of ``modules`` (or imported into one)."""
        found: list[int] = []
        for module in sorted(modules):
            record = self._record_of.get(module)
            if record is None:
                continue
            types = record.types_of(-1, name)
            where = module
            if not types and name in self._import_sources.get(module, {}):
                where, imported = self._imported_variable(module, name)
                types = imported or []
            if types:
                found.extend(self._typed_classes(self._record_of[where], types, language))
        return sorted(set(found))

    def _value_classes(self, record: _FileRecord, ref_index: int, ref: Reference, name: str) -> list[int]:
        """The classes a plain name's value may be, as the start of a chain (``[]``: not known)."""
        if name in SELF_RECEIVERS:
            owner = self._enclosing_class(ref_index)
            return [owner] if owner >= 0 else []
        types = self._receiver_types(record, ref_index, name)
        where = ref.file_path
        if types is None and self._imports_in_scope(ref_index, name):
            where, types = self._imported_variable(ref.file_path, name)
        if not types:
            return []
        return self._typed_classes(self._record_of[where], types, ref.language)

    def _typed_classes(self, record: _FileRecord, types: list[str], language: str) -> list[int]:
        found: list[int] = []
        for type_name in types:
            if type_name.startswith(CALL_RESULT):
                found.extend(self._call_result(record, int(type_name[1:])))
            else:
                found.extend(self._classes_named(record.path, type_name, language))
        return sorted(set(found))

    def _attribute_classes(self, classes: list[int], attribute: str) -> list[int]:
        """The classes of ``attribute`` on instances of ``classes``.

        Declared in a class body (``config: Config``), given in a method (``self.config =
        Config(...)``, ``self.app = app`` with ``app: Flask``), or a method's declared result (a
        property: ``def jinja_env(self) -> Environment``); the nearest class of each ancestry wins.
        """
        found: list[int] = []
        for cls in classes:
            for owner in self._ancestors(cls):
                home = self._record_of[self._definitions[owner].file_path]
                local = owner - home.def_base
                types = home.types_of(local, attribute)
                members = [i for i in range(home.def_base, home.def_base + len(home.symbols.definitions))
                           if self._def_parent[i] == owner]
                for member in members:
                    member_local = member - home.def_base
                    for value in home.types_of(member_local, f"self.{attribute}") or \
                            home.types_of(member_local, f"this.{attribute}"):
                        if value.startswith(RETURNED_VARIABLE):
                            types = types + home.types_of(member_local, value[1:])
                        else:
                            types = [*types, value]
                classes_found = self._typed_classes(home, types, self._definitions[owner].language) if types else []
                if not classes_found:
                    for member in members:
                        if self._definitions[member].name == attribute:
                            classes_found.extend(self._result_classes(member))
                if classes_found:
                    found.extend(classes_found)
                    break
        return sorted(set(found))

    def _guess(self, candidates: list[int]) -> Resolution:
        return Resolution(tuple(i for i in candidates if self._def_member[i]) or tuple(candidates), GUESS)

    def _receiver_types(self, record: _FileRecord, ref_index: int, variable: str) -> list[str] | None:
        """The types a variable is bound to in the innermost scope around the reference that binds it.

        None: no scope binds it; ``[]``: a function around it takes it as an untyped parameter (which
        hides a binding further out: a pytest fixture ``app`` is not the module's ``app``).
        """
        scope = self._ref_enclosing[ref_index]
        while True:
            local = scope - record.def_base if scope >= 0 else -1
            types = record.types_of(local, variable)
            if types:
                return types
            if scope < 0:
                return None
            if variable in self._locals(scope):
                return []
            scope = self._def_parent[scope]

    def _scope_chain(self, scope: int) -> set[int]:
        """``scope`` and the definitions around it."""
        chain = set()
        while scope >= 0:
            chain.add(scope)
            scope = self._def_parent[scope]
        return chain

    def _is_local(self, ref_index: int, name: str) -> bool:
        """Whether a function around the reference has ``name`` as a parameter or assigns it (hiding any other)."""
        scope = self._ref_enclosing[ref_index]
        while scope >= 0:
            if name in self._locals(scope):
                return True
            scope = self._def_parent[scope]
        return False

    def _locals(self, function: int) -> frozenset[str]:
        """A function's parameters and assigned names (from the record; else its first line's parameters)."""
        home = self._records[self._def_file[function]]
        rows = home.types_of(function - home.def_base, LOCALS)
        if not rows:
            return _parameters(self._definitions[function].signature)
        return frozenset(name for row in rows for name in row.split(","))

    def _imports_in_scope(self, ref_index: int, name: str) -> bool:
        """Whether the reference's file imports ``name`` at module level or in a definition around it."""
        if name not in self._import_sources.get(self._records[self._ref_file[ref_index]].path, {}):
            return False
        scopes = {-1}
        scope = self._ref_enclosing[ref_index]
        while scope >= 0:
            scopes.add(scope)
            scope = self._def_parent[scope]
        file_index = self._ref_file[ref_index]
        record = self._records[file_index]
        codes = record.symbols.references.codes
        return any(self._ref_file[i] == file_index and codes[i - record.ref_base] in "iI"
                   and self._ref_enclosing[i] in scopes for i in self._refs_by_name.get(name, ()))

    def _call_result(self, record: _FileRecord, local: int) -> list[int]:
        """The classes a call's value is: the class it constructs, or the declared result of what it calls."""
        ref_index = record.ref_base + local
        if ref_index in self._resolving or not 0 <= local < len(record.symbols.references):
            return []
        self._resolving.add(ref_index)
        try:
            resolution = self._resolve_index(ref_index)
        finally:
            self._resolving.discard(ref_index)
        found: list[int] = []
        if resolution.confidence == GUESS or not resolution.targets:
            # Not resolved: a capitalised callee is still taken for the class of that name (`Flask(...)`).
            name = record.symbols.references.names[local]
            language = record.language
            return self._classes_named(record.path, name, language) if name[:1].isupper() else []
        for target in resolution.targets:
            definition = self._definitions[target]
            if definition.kind in CLASS_KINDS:
                found.append(target)
                continue
            found.extend(self._result_classes(target))
        return sorted(set(found))

    def _result_classes(self, function: int) -> list[int]:
        """The classes a function's value is: its declared result, else the variable it returns."""
        definition = self._definitions[function]
        home = self._record_of[definition.file_path]
        local = function - home.def_base
        found: list[int] = []
        for type_name in home.types_of(local, RETURNS):
            if type_name.startswith(RETURNED_VARIABLE):  # `app = Flask(...); return app`
                for value in home.types_of(local, type_name[1:]):
                    if value.startswith(CALL_RESULT):
                        found.extend(self._call_result(home, int(value[1:])))
                    else:
                        found.extend(self._classes_named(definition.file_path, value, definition.language))
            else:
                found.extend(self._classes_named(definition.file_path, type_name, definition.language))
        return found

    def _fixture_classes(self, ref_index: int, name: str) -> list[int]:
        """A pytest fixture's classes: a test's untyped parameter ``name`` is the fixture of that name.

        The fixture is a function ``name`` in the test's own file or a ``conftest.py`` of its
        directory or one above (nearest first); its value is what :meth:`_result_classes` says.
        """
        path = self._records[self._ref_file[ref_index]].path
        directory = path.rsplit("/", 1)[0] if "/" in path else ""
        places = [path]
        while True:
            places.append(f"{directory}/conftest.py" if directory else "conftest.py")
            if not directory:
                break
            directory = directory.rsplit("/", 1)[0] if "/" in directory else ""
        for place in places:
            fixtures = [i for i in self._defs_by_name.get(name, ())
                        if self._definitions[i].file_path == place and self._def_parent[i] < 0
                        and self._definitions[i].kind not in CLASS_KINDS]
            for fixture in fixtures:
                found = self._result_classes(fixture)
                if found:
                    return sorted(set(found))
        return []

    def _imported_variable(self, path: str, name: str) -> tuple[str, list[str] | None]:
        """The file that binds an imported variable at module level and its types (``from app import app``)."""
        seen = {path}
        frontier = [path]
        for _hop in range(REEXPORT_HOPS):
            next_files: list[str] = []
            for current in frontier:
                for target in sorted(self._files_naming(current, name)):
                    if target in seen or target not in self._record_of:
                        continue
                    seen.add(target)
                    types = self._record_of[target].types_of(-1, name)
                    if types:
                        return target, types
                    if name in self._imported_names.get(target, ()):
                        next_files.append(target)
            frontier = next_files
            if not frontier:
                break
        return path, None

    def _classes_named(self, path: str, name: str, language: str) -> list[int]:
        """The class-like definitions ``name`` means in ``path``: its own, an imported one, else any in the tree."""
        record = self._record_of.get(path)
        originals = record.types_of(ALIAS_SCOPE, name) if record is not None else []
        if originals:  # `from m import Base as Alias`: the imported class, never this file's `Base`
            found: list[int] = []
            for original in originals:
                classes = [i for i in self._defs_by_name.get(original, ())
                           if self._definitions[i].kind in CLASS_KINDS and self._definitions[i].language == language]
                found.extend(self._via_imports(path, original, classes))
            return sorted(set(found))
        classes = [i for i in self._defs_by_name.get(name, ())
                   if self._definitions[i].kind in CLASS_KINDS and self._definitions[i].language == language]
        if not classes:
            return []
        same = [i for i in classes if self._definitions[i].file_path == path]
        if same:
            return same
        via = self._via_imports(path, name, classes)
        if via:
            return via
        if name in self._imported_names.get(path, ()):
            return []  # imported from a library
        return classes

    def _ancestors(self, cls: int) -> list[int]:
        """``cls`` then its bases, breadth first, each once (bases resolved from the class's file)."""
        found = self._ancestry.get(cls)
        if found is None:
            found = [cls]
            self._ancestry[cls] = found  # a cycle stops here
            for current in found:
                if len(found) >= MAX_ANCESTORS:
                    break
                definition = self._definitions[current]
                for base in _base_names(definition.signature):
                    for parent in self._classes_named(definition.file_path, base, definition.language):
                        if parent not in found:
                            found.append(parent)
        return found

    def _member_in_hierarchy(self, cls: int, name: str, skip_own: bool = False) -> list[int]:
        """The definitions of ``name`` in the nearest class of ``cls``'s ancestry that has one."""
        for owner in self._ancestors(cls)[1 if skip_own else 0:]:
            found = [i for i in self._defs_by_name.get(name, ()) if self._def_parent[i] == owner]
            if found:
                return found
        return []

    def _module_files(self, path: str, receiver: str) -> frozenset[str] | None:
        """The files a module receiver stands for (``flask`` after ``import flask``), or None if it is none."""
        specs = [spec for spec in self._modules.get(path, ())
                 if spec == receiver or spec.rsplit(".", 1)[-1] == receiver or spec.rsplit("/", 1)[-1] == receiver]
        if receiver in self._import_sources.get(path, {}):
            specs.extend(f"{source}.{receiver}" for source in self._import_sources[path][receiver])
            specs.extend(self._import_sources[path][receiver])
        if not specs:
            return None
        language = self._language.get(path, "")
        targets = {self._resolver.resolve(language, spec, path) for spec in specs}
        return frozenset(f for t in targets if t is not None for f in self._resolver.files_of(t) if f != path)

    def _defined_in(self, files: frozenset[str], name: str, candidates: list[int]) -> list[int]:
        """Candidates defined at the top of ``files``, or re-exported by them (followed a few files deep)."""
        top = [i for i in candidates if self._definitions[i].file_path in files and not self._def_member[i]]
        if top:
            return sorted(top)
        found: list[int] = []
        for file_path in sorted(files):
            if name in self._imported_names.get(file_path, ()):
                found.extend(i for i in self._via_imports(file_path, name, candidates) if not self._def_member[i])
        return sorted(set(found))

    def _files_naming(self, path: str, name: str) -> frozenset[str]:
        """The files ``path`` may take ``name`` from: the modules it imports ``name`` from, else all it imports."""
        specs = self._import_sources.get(path, {}).get(name)
        if not specs:
            return self.imported_files(path)
        language = self._language.get(path, "")
        targets = {self._resolver.resolve(language, spec, path) for spec in specs}
        return frozenset(f for t in targets if t is not None for f in self._resolver.files_of(t) if f != path)

    def _via_imports(self, path: str, name: str, candidates: list[int]) -> list[int]:
        """Candidates defined in a file ``path`` imports, following re-exports a few files deep.

        ``from flask import url_for`` names ``flask/__init__.py``, which only imports ``url_for``
        from ``.helpers``: a file that imports the name without defining it passes the search on
        (as does one importing ``*``: ``export * from "./types"``, ``from .x import *``).
        """
        by_file: dict[str, list[int]] = {}
        for i in candidates:
            by_file.setdefault(self._definitions[i].file_path, []).append(i)
        seen = {path}
        frontier = [path]
        for _hop in range(REEXPORT_HOPS):
            next_files: list[str] = []
            found: list[int] = []
            for current in frontier:
                for target in sorted(self._files_naming(current, name)):
                    if target in seen:
                        continue
                    seen.add(target)
                    if target in by_file:
                        found.extend(by_file[target])
                    elif name in (names := self._imported_names.get(target, ())) or "*" in names:
                        next_files.append(target)
            if found:
                return sorted(found)
            frontier = next_files
            if not frontier:
                break
        return []

    def _enclosing_class(self, ref_index: int) -> int:
        """The innermost class-like definition around a reference, or -1."""
        current = self._ref_enclosing[ref_index]
        while current >= 0 and self._definitions[current].kind not in CLASS_KINDS:
            current = self._def_parent[current]
        return current

    def _with_bodies(self, found: list[int], candidates: list[int]) -> tuple[int, ...]:
        """``found``, plus the definitions of the same name when ``found`` holds only declarations.

        A C prototype in an included header stands for the function defined elsewhere: the call
        lands on both, with the confidence of the step that found the declaration.
        """
        if any(self._definitions[i].kind != DECLARATION for i in found):
            return tuple(found)
        bodies = [i for i in candidates if self._definitions[i].kind != DECLARATION and i not in found]
        return tuple(found + bodies)

    def resolve(self, ref: Reference) -> tuple[list[Definition], str | None]:
        """The definitions ``ref`` most likely uses and how they were found (``None``: no definition)."""
        for i in self._refs_by_name.get(ref.name, ()):
            if self._references[i] == ref:
                resolution = self._resolve_index(i)
                return [self._definitions[t] for t in resolution.targets], resolution.confidence
        return [], None

    # -- references and calls ------------------------------------------------------------------

    def references(self, name: str, include_uncertain: bool = False) -> list[Reference]:
        """Every use of ``name``; a qualified name keeps the uses that resolve to that definition.

        ``include_uncertain``: also the uses through a receiver of unknown type that may mean it
        (confidence ``guess``), which a qualified name otherwise leaves out.
        """
        plain = name.strip()
        if not plain:
            return []
        if plain in self._defs_by_name or plain in self._refs_by_name or not any(s in plain for s in ".#:>"):
            return sorted((self._references[i] for i in self._refs_by_name.get(plain, ())), key=_ref_key)
        targets = set(self._definition_indices(plain))
        if not targets:
            return []
        last = self._definitions[next(iter(targets))].name
        return sorted((self._references[i] for i in self._refs_by_name.get(last, ())
                       if self._lands_on(i, targets, include_uncertain)), key=_ref_key)

    def references_to(self, definition: Definition, include_uncertain: bool = False) -> list[Reference]:
        """The uses that resolve to ``definition`` (among others, when the resolution is ambiguous).

        ``include_uncertain``: also the ``guess`` ones (a member of that name on a receiver of unknown type).
        """
        wanted = {i for i in self._defs_by_name.get(definition.name, ()) if self._definitions[i] == definition}
        return sorted((self._references[i] for i in self._refs_by_name.get(definition.name, ())
                       if self._lands_on(i, wanted, include_uncertain)), key=_ref_key)

    def _lands_on(self, ref_index: int, targets: set[int], include_uncertain: bool) -> bool:
        resolution = self._resolve_index(ref_index)
        if resolution.confidence == GUESS and not include_uncertain:
            return False
        return not targets.isdisjoint(resolution.targets)

    def _edges_into(self, targets: set[int]) -> list[tuple[int, int, int]]:
        """(reference, caller definition or -1, callee definition) of every call landing on ``targets``."""
        out: list[tuple[int, int, int]] = []
        for name in sorted({self._definitions[t].name for t in targets}):
            for i in self._refs_by_name.get(name, ()):
                if self._references[i].kind != CALL:
                    continue
                for t in self._resolve_index(i).targets:
                    if t in targets:
                        out.append((i, self._ref_enclosing[i], t))
        return out

    def _edges_from(self, callers: set[int]) -> list[tuple[int, int, int]]:
        out: list[tuple[int, int, int]] = []
        for c in sorted(callers):
            for i in self._refs_by_enclosing.get(c, ()):
                if self._references[i].kind == CALL:
                    out.extend((i, c, t) for t in self._resolve_index(i).targets)
        return out

    def _edge(self, ref_index: int, caller: int, callee: int) -> CallEdge:
        ref = self._references[ref_index]
        caller_def = self._definitions[caller] if caller >= 0 else None
        callee_def = self._definitions[callee]
        return CallEdge(caller_def.qualified_name if caller_def else None, callee_def.qualified_name,
                        ref.file_path, ref.line, self._resolve_index(ref_index).confidence or GLOBAL,
                        caller_def, callee_def)

    def callers(self, name: str, depth: int = 1) -> list[CallEdge]:
        """Calls of ``name``'s definitions, then (depth > 1) calls of their callers, breadth first."""
        frontier = set(self._definition_indices(name))
        seen_targets: set[int] = set()
        edges: list[CallEdge] = []
        seen_edges: set[tuple[int, int, int]] = set()
        for _level in range(max(depth, 1)):
            frontier -= seen_targets
            if not frontier:
                break
            seen_targets |= frontier
            found = self._edges_into(frontier)
            for edge in found:
                if edge not in seen_edges:
                    seen_edges.add(edge)
                    edges.append(self._edge(*edge))
            frontier = {caller for _ref, caller, _callee in found if caller >= 0}
        return sorted(edges, key=_edge_key)

    def callees(self, name: str, depth: int = 1) -> list[CallEdge]:
        """Calls made inside ``name``'s definitions, then (depth > 1) inside their callees, breadth first."""
        frontier = set(self._definition_indices(name))
        seen_callers: set[int] = set()
        edges: list[CallEdge] = []
        seen_edges: set[tuple[int, int, int]] = set()
        for _level in range(max(depth, 1)):
            frontier -= seen_callers
            if not frontier:
                break
            seen_callers |= frontier
            found = self._edges_from(frontier)
            for edge in found:
                if edge not in seen_edges:
                    seen_edges.add(edge)
                    edges.append(self._edge(*edge))
            frontier = {callee for _ref, _caller, callee in found}
        return sorted(edges, key=_edge_key)

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def from_store(cls, store: SegmentedStore, host: PluginHost | None = None) -> SymbolIndex:
        """The symbol index of an open store (``host``: for languages and import resolution; default: installed)."""
        if host is None:
            from cce_core.plugins.host import default_host

            host = default_host()
        records: dict[str, tuple[FileSymbols, str, Sequence[str]]] = {}
        missing: list[str] = []
        chunk_ids = store.chunk_ids
        for path, (s, _entry) in sorted(store.live_files().items()):
            payload = store.segments[s].symbol_payload(path)
            if payload is None:
                missing.append(path)
                continue
            span = store.file_span(path) or (0, 0)
            pack = host.packs.pack_for(path)
            try:
                symbols = decode_file_symbols(payload)
            except (ValueError, UnicodeDecodeError, struct.error) as exc:
                raise CceError(f"the symbols of {path} in the index at {store.path} are corrupt ({exc}) — "
                               "run `cce index --rebuild`") from exc
            records[path] = (symbols, pack.name if pack is not None else "", _ChunkSpan(chunk_ids, *span))
        suffixes = [s for p in host.packs.packs for s in p.module_suffixes]
        return cls(records, host, suffixes, missing)


class _ChunkSpan(Sequence[str]):
    """A file's chunk ids as a view of the store's: read when a definition or reference is shown."""

    def __init__(self, ids: Sequence[str], first: int, end: int) -> None:
        self._ids, self._first, self._end = ids, first, end

    def __len__(self) -> int:
        return self._end - self._first

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._ids[self._first + index]


def open_symbols(store_path: Path, host: PluginHost | None = None) -> SymbolIndex:
    """The symbol index of the store at ``store_path`` (the store file, e.g. ``<root>/.cce/index.cce``)."""
    return SymbolIndex.from_store(load_store(store_path), host)


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


_PARAMETERS = re.compile(r"\bdef\s+\w+\s*\(([^)]*)")
_PARAMETER_NAME = re.compile(r"^\s*\**\s*([A-Za-z_]\w*)")


def _parameters(signature: str) -> frozenset[str]:
    """The parameter names a function's first line declares (``def f(app, *args)`` -> app, args)."""
    found = _PARAMETERS.search(signature)
    if found is None:
        return frozenset()
    return frozenset(m.group(1) for part in found.group(1).split(",") if (m := _PARAMETER_NAME.match(part)))


def _base_names(signature: str) -> list[str]:
    """The base classes a class's first line names, last dotted part each (``m.Base[T]`` -> ``Base``)."""
    found = _BASES.search(signature)
    if found is None:
        return []
    if found.group("paren") is not None:
        parts = [p.strip() for p in found.group("paren").split(",")]
        names = [m.group(1) for p in parts if p and "=" not in p and (m := _BASE_NAME.search(p.split("[")[0]))]
        return [n.rsplit(".", 1)[-1] for n in names]
    base = found.group("extends") or found.group("angle") or ""
    return [re.split(r"\.|::", base)[-1]] if base else []


def _fuzzy_rank(needle: str, name: str, qualified: str) -> int | None:
    if name == needle or qualified == needle:
        return 0
    if name.startswith(needle):
        return 1
    if needle in name or needle in qualified:
        return 2
    it = iter(name)
    return 3 if all(ch in it for ch in needle) else None


def _def_key(d: Definition) -> tuple[str, int, str]:
    return d.file_path, d.line, d.qualified_name


def _ref_key(r: Reference) -> tuple[str, int, str, str]:
    return r.file_path, r.line, r.name, r.kind


def _edge_key(e: CallEdge) -> tuple[str, int, str, str]:
    return e.file_path, e.line, e.caller or "", e.callee
