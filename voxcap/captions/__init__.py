"""Captions: what people read and keep, from the engine's text deltas. No Qt in here.

One job per module:

- ``words``     deltas (subword pieces) -> ``Word``s with audio spans.
- ``linebreak`` display width, wrapping words into lines of N columns.
- ``assembly``  ``CaptionAssembler``: live lines for an overlay and a history (append-only).
- ``cues``      words -> subtitle cues (timing rules) and TXT paragraphs.
- ``export``    ``export(source, path)``: .srt / .vtt / .txt (``timestamps=``) / .jsonl.
- ``masking``   ``Masker`` / ``make_masker``: profanity masking for display and exports.
- ``glossary``  ``Glossary``: the word list, names and terms matched in finished words.
- ``glossary_stage`` ``GlossaryStage``: the word list applied to the engine's deltas (the
                controller runs it, so every output and the journal get the same text).
- ``records``   the journal's JSON Lines record format.
- ``journal``   ``Journal``: a session directory written as deltas arrive (crash-safe).
- ``sessions``  ``SessionStore``: list and open previous sessions, damage-tolerant reading;
                what a list shows of each (``SessionInfo.summary``: date, time, length, state).
- ``search``    ``search_sessions``: a word or phrase across the day's (or all) sessions.

Typical use (``voxcap live``, the GUI)::

    journal = Journal.create(settings, kind="live", on_status=warn)
    asm = CaptionAssembler(width=42, max_lines=2, masker=make_masker(mask_setting))
    journal.stream_opened(sid, label="You", source=device_name); asm.set_label(sid, "You")
    for event in events:
        journal.on_event(event)            # first: the journal keeps everything
        for update in asm.on_event(event):
            show(update)
    journal.close()
    export(journal.session(), "call.srt")
"""

from ..paths import sessions_root
from .assembly import CaptionAssembler, CaptionLine, CaptionUpdate
from .cues import Cue, CueOptions, Paragraph, build_cues, build_paragraphs
from .export import FORMATS, ExportResult, check_export_path, export, render
from .journal import Journal, JournalStatus
from .masking import Masker, make_masker
from .records import DeltaRecord
from .sessions import Session, SessionError, SessionInfo, SessionStore, read_session_dir
from .words import Word, WordBuilder, words_from_deltas

__all__ = [
    "FORMATS",
    "CaptionAssembler",
    "CaptionLine",
    "CaptionUpdate",
    "Cue",
    "CueOptions",
    "DeltaRecord",
    "ExportResult",
    "Journal",
    "JournalStatus",
    "Masker",
    "Paragraph",
    "Session",
    "SessionError",
    "SessionInfo",
    "SessionStore",
    "Word",
    "WordBuilder",
    "build_cues",
    "build_paragraphs",
    "check_export_path",
    "export",
    "make_masker",
    "read_session_dir",
    "render",
    "sessions_root",
    "words_from_deltas",
]
