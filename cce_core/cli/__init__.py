"""The `cce` command line: an adapter that parses arguments, calls the library and renders.

`app` holds the typer app and `main`; every command is one module of
`commands`, named after it.
"""
