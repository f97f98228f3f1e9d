"""The template files of a generated pack (``cce_core/authoring/pack_template/*.tmpl``) and how they are filled.

They ship as package data beside this module. ``string.Template`` fills them,
so the only markup in a template is ``$name``; a missing value is an error
rather than a silently empty line. The pack's generic ``imports_from_nodes``
is a template too, because the scaffold also runs it (see ``sample_search``).
"""

from __future__ import annotations

import string
from importlib.resources import files

TEMPLATE_DIR = "pack_template"


def template_text(name: str) -> str:
    """The text of the template file ``name`` (``README.md.tmpl``)."""
    return files(__package__ or "cce_core.authoring").joinpath(TEMPLATE_DIR, name).read_text(encoding="utf-8")


def fill_template(template_name: str, /, **values: object) -> str:
    """``template_name`` with every ``$key`` replaced by ``str(values[key])``."""
    return string.Template(template_text(template_name)).substitute({k: str(v) for k, v in values.items()})
