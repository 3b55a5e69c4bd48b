"""Settings → Share captions: the panel and what starts and stops the caption server."""
