"""The rooms of a captioning session, each with one job; ``app.controller.SessionController``
composes them (and is what front ends use):

- ``command_thread``   the controller's commands, one after the other on its own thread
- ``state_machine``    the captioning states, their legal transitions, ``CaptioningState``
- ``engine_lifecycle`` start, restart, the restart policy, readiness, shutdown of the engine
- ``session_sources``  what the session captures from, which ended; failed captures said
- ``capture_routing``  the captures, and each one's audio to its engine stream, or held
- ``caption_streams``  the engine streams: opened (held audio first), finished, flushed
- ``stream_flush``     closing the streams and waiting for their last words (the flush policy)
- ``journal_feed``     the journal, fed on its own thread
- ``device_watch``     the sound server's devices, watched once asked for
- ``input_levels``     each live source's input level; a source with no sound for long said
- ``caption_path``     each engine event on its way out: word list, journal, flush, watchdog
- ``caption_watchdog`` speech with no caption text said, a fresh engine session tried
  (``speech_detector``: the voice-activity detector it judges the audio with)
- ``readings``         what the rooms say now, read from any thread (the controller's properties)

What the controller promises (each room's docstring says how):

- Captures start as soon as captioning is asked for, even while the engine is still loading or
  restarting: their audio is held and pushed into the new streams once the engine is ready
  (``session.capture_routing``); nothing said meanwhile is lost, it is transcribed late.
- An engine restart flushes the open streams, stops the old engine, starts the new one
  (``session.engine_lifecycle``); the journal session goes on (new stream ids, same labels).
- The journal is fed on its own thread and closed after every delta that reached it was
  written (``session.journal_feed``).
- One flush policy for stop, pause and restart (``session.stream_flush``): the last words are
  waited for while the engine makes progress, the streams aborted after ``flush_timeout_s``
  without any (or on ``abort()``), and that is reported.
- A source that ends (a file) closes its stream; when every source has ended, captioning
  stops as if asked to.
- Pause keeps the session: captures stop, streams are flushed, the journal records ``pause``;
  the engine stays up. Resume opens captures and new streams (same labels) in the same
  session. A file cannot be paused (its reader would start again from the beginning).
- Speech that gets no caption text for ``no_captions_after_s`` is said (``CaptionWatch``), a
  fresh engine session is tried after ``fresh_session_after_s`` and its outcome said
  (``session.caption_watchdog``); silence, music and noise raise nothing.
- A live source with no sound for long is said, and its return (``session.input_levels``: the
  rule); each one's level is a reading (``input_levels()``).
- ``clock`` (``CaptureClock``) knows when each stream sample was captured (caption lag).
"""
