"""Translated captions, on the CPU and off the caption path (no Qt here).

- ``languages``: the 13 languages Voxtral Realtime transcribes, their names.
- ``detect``: the language of a finished line, from its text (py3langid), and when to say the
  speech is in none of the 13.
- ``package``: an installed translation pair (Argos Translate's package format: a CTranslate2
  model of an OPUS-MT/Marian model plus its SentencePiece model), and routes through English
  where no direct pair is installed.
- ``worker``: translates finished lines in its own thread from a bounded queue; the captions
  never wait for it.
- ``process`` / ``child``: the models run in a process of their own, below the app's priority
  (no thread of the app is lowered: one could hold the interpreter lock while it waits for the
  CPU); restarted when it ends, killed with the app.
- ``models``: the package index, download (resumable, checksummed), install, list and remove.
- ``jobs``: those in a thread of their own, their progress and end as events (the app's
  Settings → Translation and its first-use offer).
"""
