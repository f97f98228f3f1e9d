"""Name resolution without a type checker: same file, then imported modules, then global by name.

Every call edge says which step found its callee; these fixtures make each
step the deciding one, follow a re-export, and check that a plugin's import
resolution is used and that a failing one costs only precision.
"""

from __future__ import annotations

import cce_pack_python

from cce_core.hookspecs import hookimpl
from cce_core.indexing.chunker import Chunker
from cce_core.plugins.host import PluginHost
from cce_core.symbols.index import SymbolIndex
from cce_core.symbols.model import GLOBAL, GUESS, SAME_FILE, VIA_IMPORT, decode_file_symbols

FILES = {
    "app/local.py": "def helper():\n    return 1\n\n\ndef run():\n    return helper()\n",
    "app/lib/tools.py": "def helper():\n    return 2\n",
    "app/imported.py": "from .lib.tools import helper\n\n\ndef go():\n    helper()\n",
    "app/loose.py": "def anywhere():\n    helper()\n",
    "pkg/__init__.py": "from .impl import thing\n",
    "pkg/impl.py": "def thing():\n    pass\n",
    "other/thing_too.py": "def thing():\n    pass\n",
    "use_pkg.py": "from pkg import thing\n\n\ndef main():\n    thing()\n",
}


def _index(files: dict[str, str], *plugins: object) -> SymbolIndex:
    host = PluginHost([(cce_pack_python, "cce-pack-python"), *((p, "test") for p in plugins)], entry_points=False)
    chunker = Chunker(host)
    records = {}
    for path, text in files.items():
        chunked = chunker.chunk_file(path, text)
        records[path] = (decode_file_symbols(chunked.symbols or b""), "python", [c.chunk_id for c in chunked.chunks])
    suffixes = [s for p in host.packs.packs for s in p.module_suffixes]
    return SymbolIndex(records, host, suffixes)


def _callees(index: SymbolIndex, caller: str) -> set[tuple[str, str, str]]:
    return {(e.callee, e.callee_def.file_path, e.confidence) for e in index.callees(caller)}


def test_each_step_of_the_resolution_order():
    index = _index(FILES)
    # the same file wins over an imported or any other definition of the name
    assert _callees(index, "run") == {("helper", "app/local.py", SAME_FILE)}
    # a relative import names the module; only its definition is taken
    assert _callees(index, "go") == {("helper", "app/lib/tools.py", VIA_IMPORT)}
    # neither: every definition of the name, reported as a global guess
    assert _callees(index, "anywhere") == {("helper", "app/local.py", GLOBAL), ("helper", "app/lib/tools.py", GLOBAL)}


def test_a_re_export_is_followed_to_the_module_that_defines_the_name():
    index = _index(FILES)
    assert _callees(index, "main") == {("thing", "pkg/impl.py", VIA_IMPORT)}
    callers = index.callers("pkg.impl.thing") or index.callers("impl.thing")
    assert [(e.caller, e.file_path, e.line) for e in callers] == [("main", "use_pkg.py", 5)]


def test_callers_to_depth_two_and_references_of_a_qualified_name():
    files = {"m.py": "def a():\n    b()\n\n\ndef b():\n    c()\n\n\ndef c():\n    pass\n\n\ndef d():\n    a()\n"}
    index = _index(files)
    assert [(e.caller, e.callee) for e in index.callers("c")] == [("b", "c")]
    # edges come in (file, line) order: a calls b on line 2, b calls c on line 6, d calls a on line 14
    assert [(e.caller, e.callee) for e in index.callers("c", depth=3)] == [("a", "b"), ("b", "c"), ("d", "a")]
    assert [(e.caller, e.callee) for e in index.callers("c", depth=2)] == [("a", "b"), ("b", "c")]
    assert [(e.caller, e.callee) for e in index.callees("d", depth=2)] == [("a", "b"), ("d", "a")]
    assert [(r.line, r.enclosing) for r in index.references("m.c")] == [(6, "b")]


class _Resolver:
    """Sends every Python module specifier to one file: proves the hook's answer is what resolution uses."""

    @hookimpl(tryfirst=True)
    def cce_resolve_import(self, language, specifier, importer):
        return ["app/local.py"] if language == "python" else None


class _BrokenResolver:
    @hookimpl(tryfirst=True)
    def cce_resolve_import(self, language, specifier, importer):
        raise RuntimeError("boom")


def test_the_import_hook_decides_which_file_an_import_names():
    index = _index(FILES, _Resolver())
    assert _callees(index, "go") == {("helper", "app/local.py", VIA_IMPORT)}


def test_a_failing_import_hook_falls_back_to_the_graph_rule():
    index = _index(FILES, _BrokenResolver())
    # the exception is swallowed; the graph's rule (".lib.tools" as lib/tools plus a pack suffix) answers
    assert _callees(index, "go") == {("helper", "app/lib/tools.py", VIA_IMPORT)}
    # "pkg" resolves to no file now: an imported name is that import's, never a guess among the others
    assert _callees(index, "main") == set()


def test_bare_names_and_library_imports_are_not_guessed_globally():
    files = {
        "shop/cart.py": "class Cart:\n    def open(self):\n        pass\n\n\ndef total():\n    pass\n",
        "shop/report.py": ("from requests import Response\n\n\ndef send(cart):\n    open('x')\n"
                           "    cart.open()\n    Response()\n    total()\n"),
        "shop/wrappers.py": "class Response:\n    pass\n",
    }
    index = _index(files)
    assert _callees(index, "send") == {
        ("Cart.open", "shop/cart.py", GUESS),  # cart.open(): an untyped parameter, any class's open
        ("total", "shop/cart.py", GLOBAL),  # a bare name: top-level definitions anywhere
    }
    (bare_open,) = [r for r in index.references("open") if r.line == 5]
    assert (bare_open.member, index.resolve(bare_open)) == (False, ([], None))  # the builtin, not Cart.open
    (imported,) = [r for r in index.references("Response") if r.line == 7]
    assert index.resolve(imported) == ([], None)  # requests' Response, not shop/wrappers.py's


def test_fuzzy_and_qualified_definitions():
    index = _index({"k.py": "class Kettle:\n    def boil_water(self):\n        pass\n\n\ndef boil():\n    pass\n"})
    assert [d.qualified_name for d in index.definitions("Kettle.boil_water")] == ["Kettle.boil_water"]
    assert [d.qualified_name for d in index.definitions("k.boil")] == ["boil"]
    assert [d.qualified_name for d in index.definitions("BOIL", fuzzy=True)] == ["boil", "Kettle.boil_water"]
    assert [d.qualified_name for d in index.definitions("kbw", fuzzy=True)] == []
    assert [d.qualified_name for d in index.definitions("bwtr", fuzzy=True)] == ["Kettle.boil_water"]
    assert index.definitions("nothing") == [] and index.definitions("") == []


def test_a_call_through_self_lands_on_the_enclosing_class_first():
    text = ("class A:\n    def save(self):\n        pass\n\n    def run(self):\n        self.save()\n\n\n"
            "class B:\n    def save(self):\n        pass\n\n    def run(self, other):\n        other.save()\n")
    index = _index({"m.py": text})
    assert _callees(index, "A.run") == {("A.save", "m.py", SAME_FILE)}
    # through an untyped parameter the class is unknown: every save, as a guess
    assert _callees(index, "B.run") == {("A.save", "m.py", GUESS), ("B.save", "m.py", GUESS)}
    (through_self,) = [r for r in index.references("save") if r.line == 6]
    assert (through_self.kind, through_self.member, through_self.through_self) == ("call", True, True)


# --------------------------------------------------------------------------- typed receivers (precision)

TYPED = {
    "lib/base.py": "class Base:\n    def route(self):\n        pass\n\n    def helper(self):\n        pass\n",
    "lib/app.py": ("from .base import Base as BaseAlias\nfrom .config import Config\n\n\n"
                   "class App(BaseAlias):\n    def __init__(self):\n        self.config = self.make_config()\n\n"
                   "    def make_config(self) -> Config:\n        return Config()\n\n"
                   "    def start(self):\n        self.helper()\n"),
    "lib/config.py": "class Config:\n    def load(self):\n        pass\n",
    "lib/other.py": "class Other:\n    def route(self):\n        pass\n\n    def load(self):\n        pass\n",
    "lib/globals.py": "from .app import App\n\ncurrent: App = make()\n",
    "lib/factory.py": ("from .app import App\n\n\ndef create(\n    name,\n) -> App:\n    return App()\n\n\n"
                       "def build():\n    made = App()\n    return made\n"),
}


def _refs(index: SymbolIndex, qualified: str, **kwargs: bool) -> set[tuple[str, int]]:
    return {(r.file_path, r.line) for r in index.references(qualified, **kwargs)}


def _typed_index(user: str) -> SymbolIndex:
    return _index({**TYPED, "use.py": user})


def test_a_constructed_variable_types_its_receiver_through_the_class_hierarchy():
    index = _typed_index("from lib.app import App\n\n\ndef main():\n    app = App()\n    app.route()\n")
    # App's base is imported under another name; the member is the base's, not Other.route
    assert _refs(index, "base.Base.route") == {("use.py", 6)}
    assert _refs(index, "other.Other.route") == set()
    (use,) = [r for r in index.references("route") if r.file_path == "use.py"]
    assert index.resolve(use)[1] == VIA_IMPORT


def test_an_annotated_parameter_types_its_receiver():
    index = _typed_index("from lib.app import App\n\n\ndef main(app: App):\n    app.route()\n")
    assert _refs(index, "base.Base.route") == {("use.py", 5)}


def test_an_untyped_parameter_is_a_guess_left_out_unless_asked():
    index = _typed_index("def main(app):\n    app.route()\n")
    assert _refs(index, "base.Base.route") == set()
    assert _refs(index, "base.Base.route", include_uncertain=True) == {("use.py", 2)}
    assert _refs(index, "other.Other.route", include_uncertain=True) == {("use.py", 2)}
    (use,) = [r for r in index.references("route") if r.file_path == "use.py"]
    assert index.resolve(use)[1] == GUESS
    # a parameter hides a module-level variable of the same name
    shadowed = _typed_index("from lib.app import App\n\napp = App()\n\n\ndef main(app):\n    app.route()\n")
    assert _refs(shadowed, "base.Base.route") == set()


def test_a_call_result_types_its_receiver_by_the_declared_or_returned_class():
    declared = _typed_index("from lib.factory import create\n\n\ndef main():\n    made = create('x')\n"
                            "    made.route()\n    create('y').route()\n")
    assert _refs(declared, "base.Base.route") == {("use.py", 6), ("use.py", 7)}
    returned = _typed_index("from lib.factory import build\n\n\ndef main():\n    thing = build()\n    thing.route()\n")
    assert _refs(returned, "base.Base.route") == {("use.py", 6)}


def test_attribute_chains_and_module_variables_are_typed():
    chain = _typed_index("from lib.app import App\n\n\ndef main():\n    app = App()\n    app.config.load()\n")
    assert _refs(chain, "config.Config.load") == {("use.py", 6)}
    assert _refs(chain, "other.Other.load") == set()
    imported = _typed_index("from lib.globals import current\n\n\ndef main():\n    current.route()\n")
    assert _refs(imported, "base.Base.route") == {("use.py", 5)}
    module = _typed_index("import lib.globals\nimport lib\n\n\ndef main():\n    lib.globals.current.route()\n")
    assert ("use.py", 6) not in _refs(module, "other.Other.route")


def test_self_reaches_inherited_members_and_chained_names_are_uses():
    index = _index(TYPED)
    assert ("lib/app.py", 13) in _refs(index, "base.Base.helper")  # self.helper() in App, defined in Base
    # `self.config` names make_config's result; `config` itself is recorded as a use
    assert any(r.file_path == "lib/app.py" for r in index.references("make_config"))


def test_a_local_name_hides_a_definition_of_the_same_name():
    files = {"api.py": "def request():\n    pass\n",
             "client.py": ("from api import request\n\n\ndef send(\n    self,\n    request,\n):\n"
                           "    return request\n\n\ndef other():\n    for request in []:\n"
                           "        print(request)\n    request()\n")}
    index = _index(files)
    assert _refs(index, "api.request") == {("client.py", 1)}  # the import; the rest are locals


def test_a_nested_function_is_found_by_module_and_name_and_scope_decides_among_same_names():
    files = {"deco.py": ("def first():\n    def decorator():\n        pass\n    return decorator\n\n\n"
                         "def second():\n    def decorator():\n        pass\n    return decorator\n")}
    index = _index(files)
    (second,) = [d for d in index.definitions("decorator") if d.qualified_name == "second.decorator"]
    assert {r.line for r in index.references_to(second)} == {10}
    assert len(index.definitions("deco.decorator")) == 2
