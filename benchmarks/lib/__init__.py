"""What the benchmarks share: the realtime client, percentiles, child processes, GPU sampling."""
