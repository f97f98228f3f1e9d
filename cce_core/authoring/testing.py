"""What a plugin's own tests need from the engine: chunk and render text with just that plugin.

A pack's tests should pass or fail on the pack alone, not on whatever else is
installed, so each helper registers the plugin on a fresh host that reads no
entry points. These are re-exported by :mod:`cce_core.api`.
"""

from __future__ import annotations

from typing import Any

from cce_core.indexing.chunker import Chunker, FileChunks
from cce_core.plugins.host import PluginHost
from cce_core.retrieval.detail_views import compress


def _host(plugin: Any) -> PluginHost:
    host = PluginHost([(plugin, "")], entry_points=False)
    host.require_healthy()
    return host


def chunk_with(plugin: Any, file_name: str, text: str) -> FileChunks:
    """``text`` cut into chunks as ``cce index`` would cut a file called ``file_name``, using only ``plugin``.

    The result has ``chunks`` (each with ``chunk_type``, ``kind``,
    ``start_line``, ``end_line``, ``content``, ``chunk_id``) and ``imports``.
    The text is not redacted.
    """
    return Chunker(_host(plugin)).chunk_file(file_name, text)


def render_with(plugin: Any, file_name: str, text: str, level: str) -> str:
    """The ``signature`` / ``compact`` / ``full`` view of a chunk's ``text``, as the MCP server serves it."""
    return compress(_host(plugin), file_name, text, level)
