"""The session runtime, without Qt: the session controller (engine, audio sources, journal) that
every front end drives (``voxcap.gui``, ``voxcap live``, ``voxcap transcribe``), its audio sources
(the sound server or a file), persisted settings (each declared once with its range, label and
flag: ``voxcap.settings_schema``; the engine's in the engine) and their run-only overrides, the
server's API key as every front end finds it (``remote_key``), what a model folder means here
(``model_check``), caption-lag and meter measurements, diagnostics for bug reports, the model
downloader."""
