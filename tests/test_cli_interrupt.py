"""Ctrl-C ends any ``cce`` command with ``error: interrupted`` and exit status 130, never a silent success.

typer (0.24-0.25) turns a ``KeyboardInterrupt`` into a *returned* exit code
when it runs outside standalone mode, as ``cce`` runs it; before the fix an
interrupted ``cce index`` exited 0 with no output. A terminal's Ctrl-C goes
to the whole foreground process group, the indexer's forked chunking
children included: they must leave the interrupt to their parent (no
traceback of theirs) and be gone when it exits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers import cce_executable, hermetic_env

from cce_core.cli import app as cli_app
from cce_core.services import index_project as index_service


def test_an_interrupt_inside_a_command_is_one_error_line_and_status_130(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]):
    (tmp_path / "a.py").write_text("def a():\n    return 1\n", encoding="utf-8")

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(index_service, "build_store", interrupted)
    with pytest.raises(SystemExit) as ended:
        cli_app.main(["index", str(tmp_path), "--no-metrics"])
    assert ended.value.code == 130
    captured = capsys.readouterr()
    assert captured.err == "error: interrupted\n"
    assert "indexed" not in captured.out


def _python_corpus(root: Path, files: int = 480) -> Path:
    """Enough Python for a fresh index to chunk for a second or more on two processes."""
    root.mkdir()
    body = "".join(f"def step_{k}(value):\n    total = value * {k}\n    return total + {k}\n\n" for k in range(60))
    for i in range(files):
        (root / f"module_{i:03d}.py").write_text(f'"""Module {i}."""\n\n' + body, encoding="utf-8")
    return root


def test_ctrl_c_to_the_process_group_stops_a_parallel_index(tmp_path: Path):
    corpus = _python_corpus(tmp_path / "corpus")
    store = tmp_path / "store" / "index.cce"
    env = {**hermetic_env(tmp_path), "CCE_WORKERS": "2"}
    proc = subprocess.Popen([cce_executable(), "index", str(corpus), "--store", str(store), "--no-metrics"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        # The walk memory is written once the walk is done: chunking (on two processes) comes next.
        deadline = time.monotonic() + 60
        while not (store.parent / ".index.cce.walk").exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)
        assert proc.poll() is None, f"the index ended before the interrupt: {proc.communicate()}"
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert (proc.returncode, err) == (130, "error: interrupted\n"), out
    assert not store.exists()  # nothing half-built was published
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the chunking children are gone with their parent
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("a process of the interrupted index is still running")


def test_an_interrupt_while_the_command_line_loads_is_the_same_one_line(monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]):
    import builtins
    import sys

    from cce_core.cli import entry

    real_import = builtins.__import__

    def loading(name: str, *args: object, **kwargs: object) -> object:
        if name == "cce_core.cli.app":
            raise KeyboardInterrupt  # Ctrl-C while click and typer are still being imported
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "cce_core.cli.app")
    monkeypatch.setattr(builtins, "__import__", loading)
    with pytest.raises(SystemExit) as ended:
        entry.main()
    assert ended.value.code == 130
    assert capsys.readouterr().err == "error: interrupted\n"


def test_the_console_script_starts_through_the_entry_module():
    from importlib.metadata import entry_points

    (script,) = [ep for ep in entry_points(group="console_scripts") if ep.name == "cce"]
    assert script.value == "cce_core.cli.entry:main"


class _Watcher:
    def __init__(self) -> None:
        self.ran = self.closed = False

    def run(self) -> None:
        self.ran = True

    def close(self) -> None:
        self.closed = True


def test_ctrl_c_right_after_the_watching_line_is_a_clean_stop(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]):
    """An agent (or a test) that presses Ctrl-C on seeing "watching ..." may beat the watcher's own wait."""
    import typer

    from cce_core.cli.commands import index as index_command

    real_echo = typer.echo

    def echo_then_interrupted(message: object = None, *args: object, **kwargs: object) -> None:
        real_echo(message, *args, **kwargs)
        if str(message).startswith("watching "):
            raise KeyboardInterrupt

    monkeypatch.setattr(typer, "echo", echo_then_interrupted)
    watcher = _Watcher()
    try:
        index_command._keep_watching(watcher, Path("repo"))  # type: ignore[arg-type]
    except KeyboardInterrupt:
        pytest.fail("the interrupt escaped the watch loop: the command would end with status 130")
    assert (watcher.ran, watcher.closed) == (False, True)
    captured = capsys.readouterr()
    assert captured.out.startswith("watching repo")
    assert captured.err == "stopped watching\n"
