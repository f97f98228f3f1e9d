"""A third-party plugin that overrides a pack's compact renderer is what context_search serves."""

from __future__ import annotations

from helpers import run_cce

from cce_core.agents.mcp_server import McpSession
from cce_core.hookspecs import hookimpl
from cce_core.plugins.host import PluginHost


class _ShoutingRenderer:
    @hookimpl
    def cce_render_compact(self, language, chunk, node, level):
        if language != "python" or level != "compact":
            return None
        return "OVERRIDDEN " + chunk.content.split("\n", 1)[0]


def test_context_search_uses_an_overriding_renderer(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "auth.py").write_text("def hash_password(password):\n    salt = 1\n    return password + salt\n")
    assert run_cce("index", repo, "--no-metrics").returncode == 0

    host = PluginHost()
    host.register_plugin(_ShoutingRenderer(), "shouting-renderer")
    text, is_error = McpSession(repo, host=host).call("context_search", {"query": "hash password"})
    assert not is_error
    assert "OVERRIDDEN def hash_password(password):" in text

    plain, _ = McpSession(repo).call("context_search", {"query": "hash password"})
    assert "OVERRIDDEN" not in plain and "def hash_password(password):" in plain
