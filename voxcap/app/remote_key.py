"""The vLLM server's API key, found one way for the app and the terminal alike: the environment
variable or file the command line names, else the key given to the app (``remote-api-key``),
else, for a server on this computer, the key ``voxcap serve`` made here. Never from the command
line itself (it would show in the process list and the shell's history)."""

from __future__ import annotations

from ..engine.remote.settings import api_key_from_env, find_api_key, load_api_key


def api_key(server_url: str, env_var: str | None = None, key_file: str | None = None) -> str | None:
    """The key for ``server_url``, or None; ConfigError (with its fix) for a variable that is
    not set or a key file others can read."""
    if env_var:
        return api_key_from_env(env_var)
    if key_file:
        return load_api_key(key_file)
    return find_api_key(server_url)[0]
