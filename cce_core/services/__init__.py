"""The use cases every front-end shares: one function per user action, no parsing, no rendering.

The CLI (``cce_core.cli``), the MCP server (``cce_core.agents``) and the
dashboard parse their input, call one function here and render what it
returns. The orchestration a use case needs (which store, which embedder,
which workspace members, the metrics event) lives here once instead of in
each front-end. Modules here import from every feature layer below and from
no front-end.
"""
