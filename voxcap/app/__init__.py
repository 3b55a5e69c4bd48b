"""The session runtime, without Qt: the session controller (engine, audio sources, journal) that
every front end drives (``voxcap.gui``, ``voxcap live``, ``voxcap transcribe``), its audio sources
(the sound server or a file), persisted settings and their run-only overrides, caption-lag and
meter measurements, diagnostics for bug reports, the model downloader."""
