"""What an AI agent talks to: the MCP server, its tools and session state, memory, and `cce init`'s files.
"""
