"""The realtime messages (voxcap/engine/remote/protocol.py) against vLLM's own definitions of
them (vllm/entrypoints/speech_to_text/realtime/protocol.py, installed here): what voxcap sends
is what vLLM's server parses, and what vLLM's server sends voxcap reads back whole."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from voxcap.engine.remote import protocol

vllm_rt = pytest.importorskip("vllm.entrypoints.speech_to_text.realtime.protocol")


def test_client_messages_parse_as_vllms():
    pcm = (np.arange(-640, 640) * 25).astype("<i2")
    append = json.loads(protocol.encode(protocol.AudioAppend(pcm)))
    parsed = vllm_rt.InputAudioBufferAppend(**append)
    assert parsed.type == append["type"]
    # the server's own decoding (connection.py): base64 PCM16 little-endian
    assert np.array_equal(np.frombuffer(base64.b64decode(parsed.audio), np.int16), pcm)
    for final in (False, True):
        commit = json.loads(protocol.encode(protocol.AudioCommit(final=final)))
        assert vllm_rt.InputAudioBufferCommit(**commit).final is final
        assert commit["type"] == vllm_rt.InputAudioBufferCommit().type
    update = json.loads(protocol.encode(protocol.SessionUpdate("voxtral")))
    assert vllm_rt.SessionUpdate(**update).model == "voxtral"
    assert update["type"] == vllm_rt.SessionUpdate().type
    probe = json.loads(protocol.encode(protocol.UnknownEvent()))
    assert probe["type"] not in {"session.update", "input_audio_buffer.append",
                                 "input_audio_buffer.commit"}


def test_a_big_endian_block_is_sent_little_endian():
    pcm = np.array([1, -2, 300], dtype=">i2")
    sent = json.loads(protocol.encode(protocol.AudioAppend(pcm)))["audio"]
    assert np.frombuffer(base64.b64decode(sent), "<i2").tolist() == [1, -2, 300]


def test_server_messages_from_vllm_are_read_whole():
    from vllm.entrypoints.serve.engine.protocol import UsageInfo

    created = protocol.decode(vllm_rt.SessionCreated().model_dump_json())
    assert isinstance(created, protocol.SessionCreated) and created.id.startswith("sess-")
    assert protocol.decode(vllm_rt.TranscriptionDelta(delta=" wor").model_dump_json()) == \
        protocol.TranscriptionDelta(" wor")
    done = vllm_rt.TranscriptionDone(text="Hello world",
                                     usage=UsageInfo(prompt_tokens=40, completion_tokens=17))
    assert protocol.decode(done.model_dump_json()) == protocol.TranscriptionDone("Hello world",
                                                                                 40, 17)
    assert protocol.decode(vllm_rt.TranscriptionDone(text="").model_dump_json()) == \
        protocol.TranscriptionDone("", None, None)
    err = vllm_rt.ErrorEvent(error="The model `x` does not exist.", code="model_not_found")
    decoded = protocol.decode(err.model_dump_json())
    assert decoded == protocol.ErrorEvent("The model `x` does not exist.", "model_not_found")
    assert decoded.code == protocol.MODEL_NOT_FOUND
    for cls in (vllm_rt.SessionCreated, vllm_rt.TranscriptionDelta, vllm_rt.TranscriptionDone,
                vllm_rt.ErrorEvent):
        mine = next(c for c in (protocol.SessionCreated, protocol.TranscriptionDelta,
                                protocol.TranscriptionDone, protocol.ErrorEvent)
                    if c.__name__ == cls.__name__)
        assert mine.TYPE == cls.model_fields["type"].default


@pytest.mark.parametrize("frame", ["not json", "[1, 2]", '{"type": 5}', '{"no": "type"}',
                                   b"\xff\xfe", '{"type": "transcription.later"}'])
def test_a_bad_frame_is_unreadable_not_an_exception(frame):
    assert isinstance(protocol.decode(frame), protocol.Unreadable)


def test_odd_fields_do_not_break_decoding():
    assert protocol.decode('{"type": "transcription.delta", "delta": null}') == \
        protocol.TranscriptionDelta("")
    assert protocol.decode('{"type": "transcription.done", "usage": {"prompt_tokens": true}}') \
        == protocol.TranscriptionDone("", None, None)
    assert protocol.decode('{"type": "error"}') == protocol.ErrorEvent("no details", "")
