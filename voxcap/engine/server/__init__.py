"""``voxcap serve``: vLLM's OpenAI-compatible server as a child process that dies with voxcap, the
command line built from the in-process engine's arguments, the API key file, and the GPUs of a
data-parallel server (``--gpus N``: gpus.py)."""
