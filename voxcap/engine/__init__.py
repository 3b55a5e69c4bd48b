"""The caption engines: audio in, text out, behind one interface (``base.CaptionEngine``).

Here: what every engine shares (``base``, ``settings``, ``stats``, ``rollover``) and ``factory``,
which builds the one a setting asks for. The parts, one folder each:

    inprocess/      vLLM's AsyncLLM in this process on the local GPU (imports vllm lazily)
    remote/         captions from a vLLM server's /v1/realtime websocket (never vllm or torch)
    vllm_adapter/   the only code that reaches into vLLM's internals: plugin, patches, caches
    server/         ``voxcap serve``: vLLM's own server as a child process, its arguments, its key
    model/          model folders and weight files (validation, the generated tiny model)
    sizing/         GPU memory: what each precision and stream count needs, and the verdict

Contracts (tests/contracts/engine_parts.py) keep them apart: see README's architecture section.
"""
