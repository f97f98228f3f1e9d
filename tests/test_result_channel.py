"""The worker-to-parent channel: whole messages of any size, in order, and the sender's end seen as such."""

from __future__ import annotations

import multiprocessing
import os
import threading

import pytest

from cce_core.indexing.result_channel import ChannelClosed, channel_pair, receive_message, send_message


def _send_all(sending, messages) -> None:
    for message in messages:
        send_message(sending, message)
    sending.close()


def test_messages_larger_than_any_buffer_arrive_whole_and_in_order():
    receiving, sending = channel_pair()
    big = os.urandom(5 << 20)  # several times the socket buffers
    messages = [("part", big), ("part", b""), ("done", None)]
    child = multiprocessing.get_context("fork").Process(target=_send_all, args=(sending, messages))
    child.start()
    sending.close()
    try:
        assert [receive_message(receiving) for _ in messages] == messages
        with pytest.raises(ChannelClosed):  # the sender ended: every copy of its end is closed
            receive_message(receiving)
    finally:
        child.join(timeout=10)
        receiving.close()


def test_a_sender_gone_mid_message_is_a_closed_channel():
    receiving, sending = channel_pair()
    sending.sendall((1000).to_bytes(8, "little") + b"only part")
    sending.close()
    with pytest.raises(ChannelClosed):
        receive_message(receiving)
    receiving.close()


def test_a_thread_receives_while_the_sender_keeps_writing():
    receiving, sending = channel_pair()
    received: list[object] = []
    reader = threading.Thread(target=lambda: received.extend(receive_message(receiving) for _ in range(20)))
    reader.start()
    for number in range(20):
        send_message(sending, (number, bytes(300_000)))  # 6 MB in all: the reader must drain as it goes
    reader.join(timeout=10)
    assert [message[0] for message in received] == list(range(20))  # type: ignore[index]
    sending.close()
    receiving.close()
