"""Settings → Word list: the names and terms captions should spell right (``captions.glossary``),
kept in ``glossary.txt`` in the config folder (``app.glossary_file``), saved when the dialog's
settings are applied.

Keyboard: type a term and press Enter (or Alt+D) to add it; in the list, F2 (or Alt+E) edits
the selected term and Delete (or Alt+R) removes it. What changed is said to screen readers."""

from __future__ import annotations

import logging

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QWidget,
)

from ...app.glossary_file import glossary_path, read_terms, write_terms
from ...app.settings import AppSettings
from ...captions.glossary import MAX_TERM_CHARS, MAX_TERM_WORDS
from ...errors import ConfigError
from ...settings_schema import spec_of
from ..a11y import announce, status_label

log = logging.getLogger(__name__)
SPEC = spec_of(AppSettings, "glossary_file")
EXPLAINED = ("Names and terms spelled as captions should show them, one per entry (e.g. "
             "Dr. Okonkwo, Kubernetes, Bar Mitzvah). A finished word the model heard close to "
             "one, such as \u201cKubernetis\u201d or \u201cCooper Netties\u201d, is shown as it "
             "is written here; ordinary words are left alone. The journal keeps what the model "
             "said as well.")


class _TermEntry(QLineEdit):
    """Enter with a term typed adds it (``returnPressed``) and goes no further: in the dialog
    it would also press OK. With nothing typed, Enter is the dialog's again."""

    def keyPressEvent(self, event) -> None:
        typed = bool(self.text().strip())
        super().keyPressEvent(event)
        if typed and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()


class WordListPanel(QWidget):
    def __init__(self, settings: AppSettings, parent=None) -> None:
        super().__init__(parent)
        self.glossary_file = settings.glossary_file
        self.status = status_label(QLabel(self), "Word list status")
        self.status.setWordWrap(True)
        try:
            self.saved = read_terms(self.glossary_file)
        except ConfigError as exc:
            log.warning("the word list could not be read: %s", exc)
            self.saved = []
            self.status.setText(f"{exc} ({exc.fix}). Saving replaces it.")
        about = QLabel(EXPLAINED, self)
        about.setWordWrap(True)
        self.entry = _TermEntry(self)
        self.entry.setMaxLength(MAX_TERM_CHARS)
        self.entry.setPlaceholderText("A name or term")
        self.entry.setAccessibleName("New name or term")
        entry_label = QLabel("&New name or term:", self)
        entry_label.setBuddy(self.entry)
        self.add_button = QPushButton("A&dd", self)
        self.add_button.setEnabled(False)
        self.list = QListWidget(self)
        self.list.setAccessibleName(SPEC.label.replace("&", ""))
        self.list.setAccessibleDescription("F2 edits the selected term, Delete removes it")
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed
                                  | QAbstractItemView.EditTrigger.DoubleClicked)
        list_label = QLabel(SPEC.label + ":", self)
        list_label.setBuddy(self.list)
        for term in self.saved:
            self._item(term)
        self.edit_button = QPushButton("&Edit", self)
        self.remove_button = QPushButton("&Remove", self)
        where = QLabel(f"Kept in {glossary_path(self.glossary_file)} (one term per line: the "
                       "file \u201cvoxcap live --glossary FILE\u201d reads).", self)
        where.setWordWrap(True)
        where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        grid = QGridLayout(self)
        grid.addWidget(about, 0, 0, 1, 3)
        grid.addWidget(entry_label, 1, 0)
        grid.addWidget(self.entry, 1, 1)
        grid.addWidget(self.add_button, 1, 2)
        grid.addWidget(list_label, 2, 0, Qt.AlignmentFlag.AlignTop)
        grid.addWidget(self.list, 2, 1, 3, 1)
        grid.addWidget(self.edit_button, 2, 2)
        grid.addWidget(self.remove_button, 3, 2)
        grid.addWidget(self.status, 5, 0, 1, 3)
        grid.addWidget(where, 6, 0, 1, 3)
        grid.setRowStretch(4, 1)

        self.entry.textChanged.connect(lambda t: self.add_button.setEnabled(bool(t.strip())))
        self.entry.returnPressed.connect(self.add)
        self.add_button.clicked.connect(self.add)
        self.edit_button.clicked.connect(self.edit)
        self.remove_button.clicked.connect(self.remove)
        self.list.itemChanged.connect(self._edited)
        self.list.currentRowChanged.connect(lambda _row: self._buttons())
        delete = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.list)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete.activated.connect(self.remove)
        self._buttons()

    # ----------------------------------------------------------------------- editing ----
    def terms(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def changed(self) -> bool:
        return self.terms() != self.saved

    def add(self) -> None:
        term = " ".join(self.entry.text().split())
        if not term:
            return
        problem = self._problem(term)
        if problem:
            self._say(problem, assertive=True)
            return
        self.list.setCurrentItem(self._item(term))
        self.entry.clear()
        self._say(f"Added {term}. {self._count()}.")

    def edit(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.list.setFocus()
            self.list.editItem(item)

    def remove(self) -> None:
        row = self.list.currentRow()
        if row < 0:
            return
        term = self.list.takeItem(row).text()
        self._buttons()
        self._say(f"Removed {term}. {self._count()}.")

    def save(self) -> str:
        """Write the list if it changed: "" when saved (or nothing to save), else the problem."""
        if not self.changed():
            return ""
        terms = self.terms()
        try:
            write_terms(terms, self.glossary_file)
        except (OSError, ConfigError) as exc:
            log.warning("the word list could not be saved", exc_info=True)
            problem = f"The word list could not be saved: {getattr(exc, 'strerror', None) or exc}"
            self._say(problem, assertive=True)
            return problem
        self.saved = terms
        return ""

    # --------------------------------------------------------------------- internals ----
    def _item(self, term: str) -> QListWidgetItem:
        item = QListWidgetItem(term, self.list)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        self._buttons()
        return item

    def _problem(self, term: str, besides: QListWidgetItem | None = None) -> str:
        if len(term.split()) > MAX_TERM_WORDS:
            return f"{term} is too long: a term is at most {MAX_TERM_WORDS} words."
        same = [self.list.item(i) for i in range(self.list.count())
                if self.list.item(i).text().casefold() == term.casefold()]
        if any(item is not besides for item in same):
            return f"{term} is already in the list."
        return ""

    def _edited(self, item: QListWidgetItem) -> None:
        term = " ".join(item.text().split())
        problem = "" if term else "An empty term was removed."
        problem = problem or self._problem(term, besides=item)
        if not term or problem.endswith("already in the list."):
            self.list.blockSignals(True)
            self.list.takeItem(self.list.row(item))
            self.list.blockSignals(False)
            self._buttons()
            self._say(problem or f"Removed the duplicate {term}.", assertive=True)
            return
        if term != item.text():
            self.list.blockSignals(True)
            item.setText(term)
            self.list.blockSignals(False)
        self._say(problem or f"Changed to {term}.", assertive=bool(problem))

    def _count(self) -> str:
        n = self.list.count()
        return f"{n} term" if n == 1 else f"{n} terms"

    def _buttons(self) -> None:
        has = self.list.currentRow() >= 0
        self.edit_button.setEnabled(has)
        self.remove_button.setEnabled(has)

    def _say(self, text: str, assertive: bool = False) -> None:
        self.status.setText(text)
        announce(self.status, text, assertive=assertive)
