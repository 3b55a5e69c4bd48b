"""The desktop app's core, without Qt: persisted settings, the session controller (engine,
capture, journal), caption-lag measurement, the model downloader. ``voxcap.gui`` puts a Qt
face on it; ``voxcap live`` could drive the same controller headless."""
