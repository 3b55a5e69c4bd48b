"""The first-use offer of a translation model: when captions are to be translated into a language
and the pair(s) that needs (direct, or two through English) are not installed, the app offers
once to download them (sizes shown, progress, cancellable); meanwhile the captions go on
untranslated and the main window's notice names the fix.

When: a target is chosen in Settings, captioning starts with one set, or a finished line is in a
language that has no installed route to it (``line_translation.TranslationModelMissing``). The
speech's language is the one last heard, else English (the half every route through English
needs), else the user picks it in the offer. "Not now" (or closing the offer) is remembered for
that target until the app quits: no second offer, only the notice.

The index look-up and the download run in the core's ``translate.jobs.ModelJobs`` thread; their
events come to the GUI thread through an ``EventBridge``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..app.line_translation import TranslationModelMissing
from ..app.settings import AppSettings
from ..events import Captioning, CaptioningState, LineTranslated
from ..translate.jobs import IndexLookedUp, ModelJobDone, ModelJobs, ModelProgress
from ..translate.languages import PIVOT, SPEECH_LANGUAGES, language_name
from ..translate.models import IndexEntry, default_models_dir, needed_entries
from ..translate.package import Pair, TranslationModelError, installed_pairs, route
from .a11y import announce, status_label
from .bridge import EventBridge
from .settings.setting_words import for_the_app
from .settings.translation_models import DownloadProgress, megabytes, problem_words

log = logging.getLogger(__name__)

NOTICE_CAUSE = "translation model"
FIX = "Settings → Translation → Download"


def route_installed(pairs: dict[tuple[str, str], Pair], source: str, target: str) -> bool:
    """Whether lines in ``source`` can be translated into ``target`` now; with no ``source``
    known, whether any installed pair leads into ``target``."""
    if not source:
        return any(t == target for _s, t in pairs)
    try:
        route(pairs, source, target)
        return True
    except TranslationModelError:
        return False


class ModelOfferDialog(QDialog):
    """"Translate captions from [French] into English? This needs fr-en (23.4 MB)." Download
    (progress, Cancel download), Install from a file (offline), or Not now. Non-modal: the
    captions go on behind it."""

    installedNow = Signal()

    def __init__(self, target: str, source: str, index: list[IndexEntry], index_problem: str,
                 models_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Translation model")  # Qt appends " — voxcap"
        self.setAccessibleName("Translation model")
        self.target, self.index, self.models_dir = target, index, models_dir
        self.index_problem = index_problem
        self.needed: list[IndexEntry] = []
        self.installed = False
        self.bridge = EventBridge(self)
        self.bridge.events.connect(self._on_event)
        self.jobs = ModelJobs(models_dir, self.bridge.post)
        self.intro = QLabel(f"Captions are to be translated into {language_name(target)}, and the "
                            "translation model for that is not on this computer yet. Until it is, "
                            "the captions go on untranslated.", self)
        self.intro.setWordWrap(True)
        self.intro.setMinimumWidth(500)  # a paragraph, not a column of words
        self.source = QComboBox(self)
        self.source.setAccessibleName("Language spoken")
        self.source.addItem("Choose the language spoken", "")
        for code, name in SPEECH_LANGUAGES.items():
            if code != target:
                self.source.addItem(name, code)
        self.source.setCurrentIndex(max(0, self.source.findData(source)))
        source_label = QLabel("&Translate from:", self)
        source_label.setBuddy(self.source)
        self.need = status_label(QLabel("", self), "What the translation needs")
        self.need.setWordWrap(True)
        self.progress = DownloadProgress(self, "A cancelled download resumes where it stopped.")
        self.buttons = QDialogButtonBox(self)
        self.download_button = QPushButton("&Download", self)
        self.cancel_button = QPushButton("&Cancel download", self)
        self.cancel_button.setEnabled(False)
        self.file_button = QPushButton("Install from a &file…", self)
        self.file_button.setToolTip("An .argosmodel file copied from another computer (offline)")
        self.not_now = QPushButton("&Not now", self)
        for b in (self.download_button, self.cancel_button, self.file_button):
            self.buttons.addButton(b, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(self.not_now, QDialogButtonBox.ButtonRole.RejectRole)
        form = QFormLayout()
        form.addRow(source_label, self.source)
        lay = QVBoxLayout(self)
        # never narrower than its row of buttons (wider at a large font, or renamed "Resume
        # download"): a dialog's own minimum width would let Qt squeeze them
        lay.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)
        lay.addWidget(self.intro)
        lay.addLayout(form)
        lay.addWidget(self.need)
        lay.addWidget(self.progress)
        lay.addWidget(self.buttons)
        self.download_button.clicked.connect(self.download)
        self.cancel_button.clicked.connect(self.jobs.cancel)
        self.file_button.clicked.connect(self._pick_file)
        self.not_now.clicked.connect(self.reject)
        self.source.currentIndexChanged.connect(lambda _i: self._work_out_need())
        self._work_out_need()
        self.download_button.setDefault(True)

    def _work_out_need(self) -> None:
        source = self.source.currentData()
        self.needed = []
        if self.index_problem:
            text = self.index_problem
        elif not source:
            text = "Choose the language spoken to see which model it needs."
        else:
            try:
                self.needed = needed_entries(self.index, installed_pairs(self.models_dir), source,
                                             self.target)
                text = self._need_words(source)
            except TranslationModelError as exc:
                text = problem_words(exc.message, exc.fix)
        self.need.setText(text)
        self.download_button.setEnabled(bool(self.needed) and not self.jobs.busy)

    def _need_words(self, source: str) -> str:
        if not self.needed:
            return (f"✓ {language_name(source)} is already translated into "
                    f"{language_name(self.target)}.")
        parts = [f"{e.name} ({megabytes(e.size)})" for e in self.needed]
        total = sum(e.size for e in self.needed)
        through = (f", through {language_name(PIVOT)}" if len(self.needed) > 1
                   or self.needed[0].source != source or self.needed[0].target != self.target else "")
        return (f"From {language_name(source)} into {language_name(self.target)}{through}, this "
                f"needs {' and '.join(parts)}" + (f": {megabytes(total)} in all" if
                                                   len(parts) > 1 and total else "")
                + ", downloaded once and kept on this computer.")

    def download(self) -> None:
        if self.needed and self.jobs.download(self.needed):
            self._busy(f"Connecting to download {', '.join(e.name for e in self.needed)}…")

    def install_from(self, path: Path) -> None:
        if self.jobs.install_from(path):
            self._busy(f"Installing from {path}…")

    def _pick_file(self) -> None:
        name, _f = QFileDialog.getOpenFileName(self, "Translation model file", str(Path.home()),
                                               "Translation models (*.argosmodel);;All files (*)")
        if name:
            self.install_from(Path(name))

    def _busy(self, text: str) -> None:
        self.cancel_button.setEnabled(True)
        if self.download_button.hasFocus() or self.file_button.hasFocus():
            self.cancel_button.setFocus()
        for w in (self.download_button, self.file_button, self.source):
            w.setEnabled(False)
        self.progress.say(text)

    def _on_event(self, ev: object) -> None:
        if isinstance(ev, ModelProgress):
            self.progress.show_progress(ev)
        elif isinstance(ev, ModelJobDone):
            self.source.setEnabled(True)
            self.file_button.setEnabled(True)
            if ev.installed:
                self.installed = True
                self.installedNow.emit()
                self.progress.say(f"✓ Installed {', '.join(ev.installed)}: lines finished from "
                                  "now on are translated.")
                self.not_now.setText("&Close")
                self.not_now.setFocus()
                for w in (self.download_button, self.cancel_button, self.file_button):
                    w.hide()
            else:
                self.progress.finished(ev)
                self._work_out_need()
                self.download_button.setText("&Resume download" if ev.cancelled else "Try a&gain")
                if self.cancel_button.hasFocus():
                    (self.download_button if self.download_button.isEnabled()
                     else self.not_now).setFocus()
                self.cancel_button.setEnabled(False)

    def reject(self) -> None:
        self.jobs.cancel()  # what was fetched is kept: Download resumes it
        super().reject()


class TranslationOffer(QObject):
    """Watches for a translation target without its model; offers the download once per target."""

    def __init__(self, hub, changes, settings: Callable[[], AppSettings], window,
                 models_dir: Path | None = None,
                 on_installed: Callable[[], None] = lambda: None) -> None:
        super().__init__(window)
        self.settings = settings
        self.on_installed = on_installed  # a model installed through the offer
        self.window = window
        self.models_dir = models_dir or default_models_dir()
        self.declined: set[str] = set()  # "Not now" for these targets, this run
        self.dialog: ModelOfferDialog | None = None
        self.last_heard = ""  # the language of the latest line in one of the 13
        self._pending: tuple[str, str] | None = None  # (target, source) awaiting the index
        self.bridge = EventBridge(self)
        self.bridge.events.connect(self._on_event)
        self.jobs = ModelJobs(self.models_dir, self.bridge.post)
        wanted = (TranslationModelMissing, CaptioningState, LineTranslated)
        hub.subscribe(lambda ev: self.bridge.post(ev) if isinstance(ev, wanted) else None)
        changes.subscribe(lambda c: self.check(c.new.translation.translate_to),
                          "translation.translate_to")

    def check(self, target: str, source: str = "") -> None:
        """Offer the model(s) that translating ``source`` (or the likely source) into ``target``
        needs, unless installed, declined, or an offer is open."""
        if not target:  # translation off: nothing is missing
            self.window.clear_notice(NOTICE_CAUSE)
            return
        source = source or self._likely_source(target)
        if route_installed(installed_pairs(self.models_dir), source, target):
            self.window.clear_notice(NOTICE_CAUSE)
            return
        self._say_missing(target, source)  # each time: the captions go on untranslated
        if target in self.declined or self.dialog is not None or self._pending:
            return
        self._pending = (target, source)
        self.jobs.look_up()  # the sizes; the offer opens when the index answers

    def removed_in_settings(self) -> None:
        """A model removed in Settings: if the target now lacks its route, the user chose so and
        it is not offered again this run (the notice still names the fix)."""
        target = self.settings().translation.translate_to
        if target and not route_installed(installed_pairs(self.models_dir),
                                          self._likely_source(target), target):
            self.declined.add(target)

    def _likely_source(self, target: str) -> str:
        if self.last_heard and self.last_heard != target:
            return self.last_heard
        return PIVOT if target != PIVOT else ""

    def _say_missing(self, target: str, source: str) -> None:
        what = (f"from {language_name(source)} " if source else "") + f"into {language_name(target)}"
        self.window.show_notice(f"Captions are not translated {what}: its translation model is "
                                "not installed.", FIX, cause=NOTICE_CAUSE)

    def _on_event(self, ev: object) -> None:
        if isinstance(ev, LineTranslated):
            if ev.language in SPEECH_LANGUAGES:
                self.last_heard = ev.language
            if ev.translation:  # translated now (a model installed here or in Settings)
                self.window.clear_notice(NOTICE_CAUSE)
        elif isinstance(ev, TranslationModelMissing):
            self.check(ev.target, ev.source)
        elif isinstance(ev, CaptioningState):
            if ev.state == Captioning.ON:
                self.check(self.settings().translation.translate_to)
        elif isinstance(ev, IndexLookedUp) and self._pending is not None:
            target, source = self._pending
            self._pending = None
            problem = problem_words(ev.error, ev.fix) if ev.error else ""
            self._open(target, source, list(ev.entries), problem)

    def _open(self, target: str, source: str, index: list[IndexEntry], problem: str) -> None:
        dlg = self.dialog = ModelOfferDialog(target, source, index, problem, self.models_dir,
                                             self.window)
        dlg.finished.connect(lambda _r: self._closed(dlg))
        # "✓ Installed" in the offer: the window's "not installed" goes at once, not at its close
        dlg.installedNow.connect(lambda: self.window.clear_notice(NOTICE_CAUSE))
        dlg.installedNow.connect(self.on_installed)
        dlg.show()
        dlg.raise_()
        if QApplication.activeWindow() is not None:  # the user is in voxcap: the keys go to it
            dlg.activateWindow()
        announce(dlg.need, for_the_app(f"{dlg.intro.text()} {dlg.need.text()}"))

    def _closed(self, dlg: ModelOfferDialog) -> None:
        if not dlg.installed:
            self.declined.add(dlg.target)  # not again this run: the notice names the fix
        else:
            self.window.clear_notice(NOTICE_CAUSE)
        dlg.deleteLater()  # a closed dialog must not linger in the accessibility tree
        if self.dialog is dlg:
            self.dialog = None
