"""Messages from a forked chunking worker to its parent that never make the worker wait.

A ``multiprocessing`` pipe reads a message in a loop of Python steps, each of
which needs the GIL; while the parent's main thread chunks, a receiving thread
gets the GIL only every switch interval (5 ms), so a worker sending a message
larger than the pipe's buffer sat blocked in ``send`` for most of that time
(measured on zod: 0.13–0.29 s of a 0.7 s chunking phase). Here each message is
a length-prefixed pickle on a socket pair, and the receiving side reads a
whole message with one ``recv_into(..., MSG_WAITALL)`` call, which waits and
copies outside the GIL: the worker's bytes leave its socket as fast as it
writes them, and the GIL is needed only to unpickle.
"""

from __future__ import annotations

import contextlib
import pickle
import socket
from typing import Any

_HEADER_BYTES = 8  # the message's length, little-endian
# Room for a few installments in flight (best effort: the system may cap it).
_BUFFER_BYTES = 1 << 20


class ChannelClosed(Exception):
    """The sending side is gone (it ended or died) before a whole message arrived."""


def channel_pair() -> tuple[socket.socket, socket.socket]:
    """(receiving end, sending end) of a new channel; the sending end goes to the forked worker."""
    receiving, sending = socket.socketpair()
    for end, option in ((sending, socket.SO_SNDBUF), (receiving, socket.SO_RCVBUF)):
        with contextlib.suppress(OSError):  # a smaller buffer only means the worker may wait a little
            end.setsockopt(socket.SOL_SOCKET, option, _BUFFER_BYTES)
    return receiving, sending


def send_message(sending: socket.socket, message: Any) -> None:
    """Pickle ``message`` and write it whole (blocks only while the buffer is full)."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    sending.sendall(len(data).to_bytes(_HEADER_BYTES, "little"))
    sending.sendall(data)


def _read_exactly(receiving: socket.socket, size: int) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        # One call waits for every byte still missing, outside the GIL; a signal may cut it short.
        count = receiving.recv_into(view[got:], size - got, socket.MSG_WAITALL)
        if count == 0:
            raise ChannelClosed
        got += count
    return buffer


def receive_message(receiving: socket.socket) -> Any:
    """The next message; :class:`ChannelClosed` when the sender is gone."""
    size = int.from_bytes(_read_exactly(receiving, _HEADER_BYTES), "little")
    return pickle.loads(_read_exactly(receiving, size))
