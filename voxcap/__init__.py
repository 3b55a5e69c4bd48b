"""voxcap: live captions from system audio and microphone with Voxtral Realtime on vLLM."""

__version__ = "0.1.0"
