"""The remote engine: captions from a vLLM server's /v1/realtime websocket, its audio and settings.
Runs in an install without vLLM: never imports vllm or torch, nor the in-process engine."""
