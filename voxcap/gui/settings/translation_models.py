"""Settings → Translation → Translation models: the installed pairs (disk size, Remove, asked
first), the download of a pair the index offers (size, progress, Cancel; a cancelled or broken
download resumes), and the offline install from a file or a folder. The work runs in the core's
``translate.jobs.ModelJobs`` thread (what ``voxcap translate-models`` runs too); its events come
to the GUI thread through an ``EventBridge``. Problems are one line in the status, with the fix."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ...translate.jobs import IndexLookedUp, ModelJobDone, ModelJobs, ModelProgress
from ...translate.languages import SPEECH_LANGUAGES, language_name
from ...translate.models import DOWNLOADS, IndexEntry, Progress, default_models_dir
from ...translate.package import Pair, installed_pairs, remove_package
from ..a11y import announce, status_label
from ..bridge import EventBridge
from .setting_words import for_the_app

RESUMES = "A cancelled or broken download resumes where it stopped."


def pair_words(source: str, target: str) -> str:
    """``"French → English (fr-en)"``."""
    return f"{language_name(source)} → {language_name(target)} ({source}-{target})"


def megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n else "size unknown"


def progress_words(ev: ModelProgress) -> str:
    """What a download is doing, in a line: "Downloading fr-en (1 of 2): 3.1 of 23.4 MB"."""
    p: Progress = ev.progress
    of = f" ({ev.step} of {ev.steps})" if ev.steps > 1 else ""
    if p.stage == "verifying":
        return f"Checking the {ev.name} download{of}…"
    if p.stage == "installing":
        return f"Installing {ev.name}{of}…"
    if p.stage == "done":
        return f"Installed {ev.name}{of}."
    total = f" of {p.total_bytes / 1e6:.1f} MB" if p.total_bytes else " MB"
    return f"Downloading {ev.name}{of}: {p.done_bytes / 1e6:.1f}{total}"


def problem_words(error: str, fix: str) -> str:
    return for_the_app(f"✗ {error}" + (f" Fix: {fix}." if fix else ""))


class DownloadProgress(QWidget):
    """A model job's progress bar and its one-line status (read by screen readers)."""

    def __init__(self, parent: QWidget | None = None, idle_text: str = RESUMES) -> None:
        super().__init__(parent)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 1000)
        self.bar.setValue(0)
        self.bar.setAccessibleName("Download progress")
        self.status = status_label(QLabel(idle_text, self), "Translation model status")
        self.status.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.bar)
        lay.addWidget(self.status)

    def say(self, text: str, *, assertive: bool = False) -> None:
        self.status.setText(text)
        announce(self.status, text.replace("✗ ", "Problem: ").replace("✓ ", ""), assertive)

    def show_progress(self, ev: ModelProgress) -> None:
        p = ev.progress
        if p.total_bytes:
            share = ((ev.step - 1) + min(p.done_bytes / p.total_bytes, 1.0)) / ev.steps
            self.bar.setValue(int(share * 1000))
            self.bar.setFormat(f"{share:.0%}")
        self.status.setText(progress_words(ev))  # read when focused; not spoken at each step

    def finished(self, ev: ModelJobDone) -> None:
        if ev.installed:
            self.bar.setValue(1000)
            self.bar.setFormat("100%")
            self.say(f"✓ Installed {', '.join(ev.installed)}.")
        elif ev.cancelled:
            self.say("Cancelled: what was fetched is kept, and Download resumes it.")
        else:
            self.say(problem_words(ev.error, ev.fix), assertive=True)


class ModelsSection(QGroupBox):
    """The models part of the Translation tab; ``installed_changed`` after an install (True) or
    a removal (False)."""

    installed_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None, models_dir: Path | None = None) -> None:
        super().__init__("Translation models", parent)
        self.models_dir = models_dir or default_models_dir()
        self.bridge = EventBridge(self)
        self.bridge.events.connect(self._on_event)
        self.jobs = ModelJobs(self.models_dir, self.bridge.post)
        self.destroyed.connect(lambda _o=None, jobs=self.jobs: _stop(jobs))
        self.entries: list[IndexEntry] = []
        self.index_problem = ""
        self._looked_up = False
        self.remove_buttons: dict[str, QPushButton] = {}
        self.confirm: QMessageBox | None = None

        self.where = QLabel(f"Installed in {self.models_dir}:", self)
        self.where.setWordWrap(True)
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.installed = QWidget(self)
        self.installed.setAccessibleName("Installed translation models")
        self.installed_rows = QGridLayout(self.installed)
        self.installed_rows.setContentsMargins(0, 0, 0, 0)
        self.available = QComboBox(self)
        self.available.setAccessibleName("Model to download")
        self.available.setMinimumContentsLength(28)
        available_label = QLabel("&Model to download:", self)
        available_label.setBuddy(self.available)
        self.download_button = QPushButton("Do&wnload", self)
        self.cancel_button = QPushButton("Ca&ncel download", self)
        self.cancel_button.setEnabled(False)
        self.progress = DownloadProgress(self)
        self.file_button = QPushButton("Install from a &file…", self)
        self.file_button.setToolTip("An .argosmodel file (Argos Translate's format), copied "
                                    "from another computer")
        self.folder_button = QPushButton("Install from a f&older…", self)
        self.folder_button.setToolTip("Every .argosmodel file (or model folder) in a folder: "
                                      "an offline install")

        lay = QVBoxLayout(self)
        lay.addWidget(self.where)
        lay.addWidget(self.installed)
        row = QHBoxLayout()
        row.addWidget(available_label)
        row.addWidget(self.available, 1)
        row.addWidget(self.download_button)
        row.addWidget(self.cancel_button)
        lay.addLayout(row)
        lay.addWidget(self.progress)
        offline = QHBoxLayout()
        offline.addWidget(self.file_button)
        offline.addWidget(self.folder_button)
        offline.addStretch(1)
        lay.addLayout(offline)

        self.download_button.clicked.connect(self._download_clicked)
        self.cancel_button.clicked.connect(self.cancel)
        self.file_button.clicked.connect(self._pick_file)
        self.folder_button.clicked.connect(self._pick_folder)
        self.available.currentIndexChanged.connect(lambda _i: self._name_download_button())
        self.refresh()

    # ----------------------------------------------------------------------------- lists ----
    def look_up(self) -> None:
        """Ask the index what it offers (off the GUI thread); the list fills when it answers."""
        self._looked_up = True
        self.index_problem = ""
        self.available.clear()
        self.available.addItem("Looking up the models on offer…", None)
        self.available.setEnabled(False)
        self._name_download_button()
        self.jobs.look_up()

    def showEvent(self, event) -> None:  # Qt calls it when the tab is shown
        super().showEvent(event)
        self.refresh()  # a pair the first-use offer installed meanwhile is listed
        if not self._looked_up:  # the network only once the tab is looked at
            self.look_up()

    def pairs(self) -> dict[tuple[str, str], Pair]:
        return installed_pairs(self.models_dir)

    def refresh(self) -> None:
        """The installed pairs as rows (name, size, Remove) and what is left to download."""
        while self.installed_rows.count():
            item = self.installed_rows.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.setParent(None)  # out of the focus chain now, not at deleteLater
                widget.deleteLater()
        self.remove_buttons = {}
        pairs = self.pairs()
        if not pairs:
            self.installed_rows.addWidget(QLabel("No translation models are installed yet.",
                                                 self.installed), 0, 0)
        for i, pair in enumerate(pairs.values()):
            words = pair_words(pair.source, pair.target)
            self.installed_rows.addWidget(QLabel(words, self.installed), i, 0)
            self.installed_rows.addWidget(QLabel(megabytes(pair.disk_bytes()), self.installed), i, 1)
            remove = QPushButton("Remove", self.installed)
            remove.setAccessibleName(f"Remove {words}")
            remove.clicked.connect(lambda _c=False, p=pair: self.ask_remove(p))
            self.installed_rows.addWidget(remove, i, 2)
            self.remove_buttons[pair.name] = remove
        self.installed_rows.setColumnStretch(0, 1)
        if self.isVisible():  # else when shown: the dialog's chain is only complete then
            self._remove_buttons_first()
        self._fill_available()

    def _remove_buttons_first(self) -> None:
        """Tab reaches the Remove buttons, made anew at each refresh, where they are shown:
        before the download's list (not after the dialog's buttons)."""
        before: QWidget | None = self.available.previousInFocusChain()
        while before is not None and (before is self or self.isAncestorOf(before)):
            before = before.previousInFocusChain()  # to the control before this section
            if before is self.available:  # the chain is a ring: a section on its own
                return
        if before is None:
            return
        for button in self.remove_buttons.values():
            QWidget.setTabOrder(before, button)
            before = button
        QWidget.setTabOrder(before, self.available)

    def _fill_available(self) -> None:
        if not self.entries:
            return
        chosen = self.available.currentData()
        have = self.pairs()
        self.available.clear()
        for entry in sorted(self.entries, key=lambda e: pair_words(e.source, e.target)):
            # a pair between two of the speech model's languages: the only ones a caption uses
            useful = {entry.source, entry.target} <= SPEECH_LANGUAGES.keys()
            if useful and (entry.source, entry.target) not in have:
                self.available.addItem(f"{pair_words(entry.source, entry.target)}, "
                                       f"{megabytes(entry.size)}", entry)
        if not self.available.count():
            self.available.addItem("Every pair on offer for the 13 languages is installed", None)
        self.available.setEnabled(self.available.currentData() is not None)
        i = self.available.findData(chosen)
        if i >= 0:
            self.available.setCurrentIndex(i)
        self._name_download_button()

    def _name_download_button(self) -> None:
        entry = self.available.currentData()
        if self.index_problem:
            self.download_button.setText("Look up a&gain")
        elif entry is not None and self._part(entry).exists():
            self.download_button.setText("Resume do&wnload")
        else:
            self.download_button.setText("Do&wnload")
        self.download_button.setEnabled(not self.jobs.busy and (entry is not None
                                                               or bool(self.index_problem)))

    def _part(self, entry: IndexEntry) -> Path:
        return self.models_dir / DOWNLOADS / (entry.file_name + ".part")

    # ------------------------------------------------------------------------------ jobs ----
    def _download_clicked(self) -> None:
        if self.index_problem:
            self.look_up()
            return
        entry = self.available.currentData()
        if entry is not None:
            self.download([entry])

    def download(self, entries: list[IndexEntry]) -> None:
        if self.jobs.download(entries):
            self._busy(f"Connecting to download {', '.join(e.name for e in entries)}…")

    def install_from(self, path: Path) -> None:
        if self.jobs.install_from(path):
            self._busy(f"Installing from {path}…")

    def cancel(self) -> None:
        self.jobs.cancel()
        self.progress.status.setText("Cancelling…")

    def _busy(self, text: str) -> None:
        self.progress.bar.setValue(0)
        self.progress.bar.setFormat("%p%")
        self.progress.say(text)
        self.cancel_button.setEnabled(True)
        if any(b.hasFocus() for b in (self.download_button, self.file_button, self.folder_button)):
            self.cancel_button.setFocus()  # where the keyboard is: what can be done now
        for b in (self.download_button, self.file_button, self.folder_button):
            b.setEnabled(False)

    def _pick_file(self) -> None:
        name, _f = QFileDialog.getOpenFileName(self, "Translation model file", str(Path.home()),
                                               "Translation models (*.argosmodel);;All files (*)")
        if name:
            self.install_from(Path(name))

    def _pick_folder(self) -> None:
        name = QFileDialog.getExistingDirectory(self, "Folder with translation models",
                                                str(Path.home()))
        if name:
            self.install_from(Path(name))

    def _on_event(self, ev: object) -> None:
        if isinstance(ev, IndexLookedUp):
            self.entries = list(ev.entries)
            if ev.error:
                self.index_problem = problem_words(ev.error, ev.fix)
                self.available.clear()
                self.available.addItem("The list of models could not be read", None)
                self.progress.say(self.index_problem, assertive=True)
                self._name_download_button()
            else:
                self._fill_available()
        elif isinstance(ev, ModelProgress):
            self.progress.show_progress(ev)
        elif isinstance(ev, ModelJobDone):
            had_focus = self.cancel_button.hasFocus()
            self.cancel_button.setEnabled(False)
            self.file_button.setEnabled(True)
            self.folder_button.setEnabled(True)
            self.refresh()
            self.progress.finished(ev)
            if had_focus:  # not lost with the disabled button: on to what comes next
                (self.download_button if self.download_button.isEnabled() else self.available
                 if self.available.isEnabled() else self.file_button).setFocus()
            if ev.installed:
                self.installed_changed.emit(True)

    # ---------------------------------------------------------------------------- remove ----
    def ask_remove(self, pair: Pair) -> None:
        """Ask before removing ``pair`` (the answer comes back to ``_answered``)."""
        words = pair_words(pair.source, pair.target)
        box = self.confirm = QMessageBox(
            QMessageBox.Icon.Question, "Remove translation model",
            f"Remove the {words} translation model ({megabytes(pair.disk_bytes())})? Captions "
            "from then on are not translated between these languages until it is downloaded again.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.button(QMessageBox.StandardButton.Yes).setText("&Remove")
        box.button(QMessageBox.StandardButton.No).setText("&Keep it")
        box.finished.connect(lambda result, p=pair: self._answered(p, result))
        box.open()

    def _answered(self, pair: Pair, result: int) -> None:
        if self.confirm is not None:
            self.confirm.deleteLater()
            self.confirm = None
        self.window().activateWindow()  # the keyboard goes on where it was, not nowhere
        if result != QMessageBox.StandardButton.Yes:
            if pair.name in self.remove_buttons:
                self.remove_buttons[pair.name].setFocus()
            return
        try:
            remove_package(pair)
        except OSError as exc:
            self.progress.say(problem_words(f"{pair.name} could not be removed: "
                                            f"{exc.strerror or exc}.",
                                            f"check that {self.models_dir} is writable"),
                              assertive=True)
            return
        self.refresh()
        self.progress.say(f"Removed {pair.name}.")
        self.installed_changed.emit(False)
        self.available.setFocus()  # its Remove button is gone: the focus stays in the page


def _stop(jobs: ModelJobs) -> None:
    """The section is gone: its job stops (a download resumes next time) and tells no one."""
    jobs.publish = lambda _ev: None
    jobs.cancel()
