"""voxcap's benchmarks: each measures one thing and prints its figures (README.md says which).

Run them from the repository root as modules, e.g. ``.venv/bin/python -m benchmarks.capacity
--help``; what several share (the realtime client, percentiles, child processes, GPU sampling)
is in ``benchmarks.lib``.
"""
