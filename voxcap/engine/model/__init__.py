"""Model folders and weight files: validation (read from headers only) and the tiny generated model
the tests and self-checks run. Pure file work: no vllm; torch only to write the tiny weights."""
