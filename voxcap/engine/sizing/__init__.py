"""GPU memory: what each precision and stream count needs, the automatic choice, and the one verdict
every front end shows. Pure arithmetic over GPU facts: no vllm, no torch."""
