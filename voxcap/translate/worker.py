"""Finished caption lines -> their language and translation, in a thread of its own.

    worker = LineWorker(target="en", translators=Translators(models_dir), on_result=show,
                        on_notice=say)
    worker.start()
    worker.submit(FinishedLine(line_id, stream_id, text, start_s, end_s))   # never blocks
    worker.stop()

The caption path only ever calls ``submit``: it puts the line in a bounded queue and returns.
A line goes before any sentence waiting (``FinishedLine.refined``: a sentence over several
lines, translated again as one piece once its lines were, each alone): the live displays wait
for a line, nobody waits for a sentence. When the queue is full (translation slower than speech)
the oldest waiting sentence is dropped (said once in the log: its lines keep their own
translations), else the oldest waiting line, so the worker translates only the latest lines,
and ``on_notice`` says so once until it has caught up. Every line still gets its language
(detection takes ~0.1 ms). With ``target`` None lines only get their language.

The model runs in a process of its own at the lowest priority (``process``/``child``); this
thread only hands it the text and waits, at the app's own priority: a thread of the app lowered
in priority could hold the interpreter lock while the scheduler keeps it waiting, and the
captions would wait with it. (On an H200 machine pinned to 4 busy cores, the model in this
thread at nice +10 made the engine's step p95 346 ms and caption lag p95 1.69 s; in its own
process, 26-286 ms and 0.69-0.74 s; off, 17.8 ms and 0.51 s. On 8 cores all three are alike.)

Problems (no model for the pair, a corrupt model, a line whose language cannot be told, a
translation process that keeps ending) are said once each through ``on_notice`` in one line with
the fix; the line goes on untranslated.
With ``on_missing``, a missing pair is told to it instead, once per source and target (the app
offers the download). ``on_result``/``on_notice``/``on_missing`` are called from the worker's
thread.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .detect import LanguageDetector, LineLanguages, other_language_notice, shared_detector
from .languages import OTHER, language_name
from .package import NoRouteError, TranslationModelError, installed_pairs, route
from .process import ClosedError, TranslationProcess, TranslationStopped

log = logging.getLogger(__name__)

QUEUE_LINES = 4  # lines waiting; ~4 lines is ~10 s of speech
PRELOAD_PAIRS = 2  # models into the target loaded at the start (each ~75 MB of memory)


@dataclass(frozen=True)
class FinishedLine:
    """A finished line, or a sentence of several (``parts``: its lines; the sentence's own
    fields are its last line's id, the lines' text and their span)."""

    line_id: int
    stream_id: str
    text: str
    start_s: float
    end_s: float
    label: str = ""
    parts: tuple[FinishedLine, ...] = ()

    @property
    def refined(self) -> bool:
        """A sentence of several lines: a second, better translation of lines already sent."""
        return bool(self.parts)


@dataclass(frozen=True)
class LineResult:
    """A finished line's language and, when asked for and possible, its translation."""

    line: FinishedLine
    language: str  # a code of the 13, "other", or "" (cannot tell)
    confidence: float
    target: str = ""  # the language translated into ("" when not translated)
    translation: str = ""
    latency_s: float = 0.0  # from submit to this result


class Translators:
    """Routes from the packages in ``root`` to their translation in the translation process
    (``process.TranslationProcess``: models loaded there on first use and kept; ``threads``
    and ``length_ratio``: ``package.PairTranslator``'s)."""

    def __init__(self, root: Path, *, threads: int = 1, length_ratio: float | None = None) -> None:
        self.root = root
        self.process = TranslationProcess(threads=threads, length_ratio=length_ratio)
        self._routes: dict[tuple[str, str], RouteTranslation] = {}

    def get(self, source: str, target: str) -> RouteTranslation:
        """Raises ``NoRouteError`` when no pair (nor two through English) is installed (looked
        for again each time: one may be installed meanwhile); a route found is kept."""
        key = (source, target)
        if key not in self._routes:
            self._routes[key] = RouteTranslation(
                self.process, route(installed_pairs(self.root), source, target))
        return self._routes[key]

    def start(self, target: str = "") -> None:
        """Start the translation process (from the thread that will translate) and load there
        the models into ``target`` when they are few enough to be the ones used (at most
        ``PRELOAD_PAIRS``): the first line waits for neither. Again after a new target or a
        model installed or removed: the routes are looked for again (a direct pair installed
        replaces the way through English; a removed pair translates no more), and the models
        loaded for no pair into ``target`` are dropped."""
        self.process.start()
        self._routes.clear()
        into = [p.folder for p in installed_pairs(self.root).values() if p.target == target]
        if target:
            self.process.load(into if len(into) <= PRELOAD_PAIRS else [])

    def close(self) -> None:
        self.process.close()


class RouteTranslation:
    """``source`` -> ``target`` through one or two pairs, in the translation process."""

    def __init__(self, process: TranslationProcess, pairs) -> None:
        self.process = process
        self.folders = [p.folder for p in pairs]

    def translate(self, texts: list[str]) -> list[str]:
        return self.process.translate(self.folders, texts)


class LineWorker:
    def __init__(self, *, target: str | None, translators: Translators | None,
                 on_result: Callable[[LineResult], None],
                 on_notice: Callable[[str], None] = lambda text: None,
                 detector: LanguageDetector | None = None, queue_lines: int = QUEUE_LINES,
                 on_missing: Callable[[str, str], None] | None = None) -> None:
        self.target = target or ""
        self.on_missing = on_missing  # (source, target): no pair for them is installed
        self.translators = translators
        self.on_result = on_result
        self.on_notice = on_notice
        self._detector = detector
        self._queue: collections.deque[tuple[FinishedLine, float]] = collections.deque()
        self._queue_lines = queue_lines
        self._cond = threading.Condition()
        self._stopping = False
        self._behind = False
        self._behind_sentences = False  # logged once until the queue is empty
        self._retargeted = False  # a new target's models to load
        self._said: set[str] = set()
        self.dropped = 0  # lines
        self.dropped_sentences = 0
        self._thread = threading.Thread(target=self._run, name="voxcap-translate", daemon=True)

    def start(self) -> LineWorker:
        self._thread.start()
        return self

    def submit(self, line: FinishedLine) -> None:
        """Queue a finished line (or sentence); never blocks (the oldest waiting sentence, else
        the oldest waiting line, gives way)."""
        with self._cond:
            if len(self._queue) >= self._queue_lines:
                self._drop_one()
            self._queue.append((line, time.monotonic()))
            self._cond.notify()

    def _drop_one(self) -> None:
        sentence = next((item for item in self._queue if item[0].refined), None)
        if sentence is not None:
            self._queue.remove(sentence)
            self.dropped_sentences += 1
            if not self._behind_sentences:
                self._behind_sentences = True
                log.info("translation is behind: whole sentences dropped, their lines keep the "
                         "translations they had alone")
            return
        self._queue.popleft()
        self.dropped += 1
        if not self._behind:
            self._behind = True
            self._say("behind", "Translation cannot keep up: translating only the latest "
                                "lines (the captions themselves are not delayed).")

    def _next(self) -> tuple[FinishedLine, float]:
        """The oldest waiting line, else the oldest waiting sentence (under ``_cond``)."""
        item = next((item for item in self._queue if not item[0].refined), self._queue[0])
        self._queue.remove(item)
        return item

    def retarget(self, target: str) -> None:
        """Translate into ``target`` from now on ("" = languages only); this thread loads its
        models before the next line (the caller's thread, often the GUI's, loads nothing)."""
        with self._cond:
            self.target = target
            self._retargeted = bool(target)
            self._cond.notify()

    def models_changed(self) -> None:
        """A translation model was installed or removed: this thread loads what the target
        now uses and drops the rest, before the next line."""
        self.retarget(self.target)

    def drain(self, timeout_s: float = 30.0) -> bool:
        """Wait until every queued line is done (the end of a file); True if it was."""
        deadline = time.monotonic() + timeout_s
        while not self.idle():
            if time.monotonic() >= deadline or not self._thread.is_alive():
                return False
            time.sleep(0.02)
        return True

    def stop(self, timeout_s: float = 5.0) -> None:
        """Finish the line in hand, drop the rest, end the thread."""
        with self._cond:
            self._stopping = True
            self._queue.clear()
            self._cond.notify()
        close = getattr(self.translators, "close", None)
        if close is not None:
            close()  # a translation in flight ends at once
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def idle(self) -> bool:
        with self._cond:
            return not self._queue and not self._busy

    _busy = False

    # ------------------------------------------------------------------------------------------
    def _say(self, key: str, text: str) -> None:
        if key in self._said:
            return
        self._said.add(key)
        try:
            self.on_notice(text)
        except Exception:
            log.exception("translation notice failed")

    def _missing(self, exc: NoRouteError) -> None:
        key = f"route:{exc.source}:{exc.target}"
        if self.on_missing is None:
            self._say(key, f"Not translated from {language_name(exc.source)}: {exc.message} "
                           f"Fix: {exc.fix}.")
        elif key not in self._said:
            self._said.add(key)
            try:
                self.on_missing(exc.source, exc.target)
            except Exception:
                log.exception("telling of a missing translation model failed")

    def _run(self) -> None:
        self._start_translation()
        languages: LineLanguages | None = None  # loaded with the first line: nothing at start
        while True:
            with self._cond:
                while not self._queue and not self._stopping and not self._retargeted:
                    self._cond.wait()
                if self._stopping:
                    return
                preload, self._retargeted = self._retargeted, False
                if not preload:
                    line, queued_at = self._next()
                    if not self._queue:
                        self._behind_sentences = False
                        if self._behind:
                            self._behind = False
                            self._said.discard("behind")
                    self._busy = True
            if preload:  # a new target's models, before the next line needs them
                self._start_translation()
                continue
            try:
                if languages is None:
                    languages = self._languages()
                    if languages is None:
                        return
                result = self._handle(languages, line, queued_at)
                self.on_result(result)
            except ClosedError:
                return  # stopped mid-translation
            except Exception:
                log.exception("translating line %s failed", line.line_id)
            finally:
                with self._cond:
                    self._busy = False

    def _start_translation(self) -> None:
        """The translation process and its models, started now when a target is set: the first
        line waits for neither (the kernel ends the process with this thread)."""
        start = getattr(self.translators, "start", None)
        if self.target and start is not None:
            try:
                start(self.target)
            except ClosedError:
                pass  # stopped already
            except TranslationModelError as exc:  # said when a line needs the model
                log.info("translation models not loaded at the start: %s", exc.message)
            except Exception:  # the first line tries again, and says it when it cannot
                log.exception("the translation process cannot start")

    def _languages(self) -> LineLanguages | None:
        try:
            return LineLanguages(self._detector or shared_detector())
        except Exception:
            log.exception("language detection cannot start")
            self._say("detector", "The language of caption lines cannot be told (py3langid "
                                  "failed to load: see the log); captions go on untranslated.")
            return None

    def _handle(self, languages: LineLanguages, line: FinishedLine, queued_at: float) -> LineResult:
        if line.refined:  # its lines were looked at one by one already
            guess, say_other = languages.of_sentence(line.stream_id, line.text), False
        else:
            guess, say_other = languages.of_line(line.stream_id, line.text)
        if say_other:
            self._say(f"other:{line.stream_id}", other_language_notice(line.label or line.stream_id,
                                                                       guess))
        plain = LineResult(line, guess.language, guess.confidence)
        if not self.target or self.translators is None or guess.language == self.target:
            return plain
        if not guess.language or guess.language == OTHER:
            if not line.refined:  # a sentence's lines keep what they had
                self._say(f"unknown:{line.stream_id}",
                          f"{line.label or line.stream_id}: a line was not translated because its "
                          "language could not be told (too short, or none of the 13); longer "
                          "lines in one of them are translated.")
            return plain
        try:
            translator = self.translators.get(guess.language, self.target)
            text = translator.translate([line.text])[0]
        except NoRouteError as exc:
            self._missing(exc)
            return plain
        except TranslationStopped as exc:
            self._say("stopped", f"{exc.message} Captions go on untranslated. Fix: {exc.fix}.")
            return plain
        except TranslationModelError as exc:
            self._say(f"model:{guess.language}", f"Not translated from {language_name(guess.language)}:"
                                                 f" {exc.message} Fix: {exc.fix}.")
            return plain
        return LineResult(line, guess.language, guess.confidence, self.target, text,
                          time.monotonic() - queued_at)
