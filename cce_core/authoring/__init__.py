"""Tools for plugin authors: the full validation run, the pack scaffold and the plugin inventory."""
