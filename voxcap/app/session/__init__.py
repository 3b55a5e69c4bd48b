"""The rooms of a captioning session, each with one job; ``app.controller.SessionController``
composes them (and is what front ends use):

- ``command_thread``   the controller's commands, one after the other on its own thread
- ``state_machine``    the captioning states, their legal transitions, ``CaptioningState``
- ``engine_lifecycle`` start, restart, the restart policy, readiness, shutdown of the engine
- ``capture_routing``  the captures, and each one's audio to its engine stream, or held
- ``stream_flush``     closing the streams and waiting for their last words (the flush policy)
- ``journal_feed``     the journal, fed on its own thread
- ``device_watch``     the sound server's devices, watched once asked for
"""
