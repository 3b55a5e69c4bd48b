"""The main window: history and search, the day's sessions, the throughput meter, the engine's
status, exports and the keys it answers to."""
