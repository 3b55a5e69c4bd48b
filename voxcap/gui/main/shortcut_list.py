"""Every key the main window answers to, read from where each is defined: the window's actions
(their shortcuts) and described QShortcuts, the Alt+letter mnemonics of its menus, tabs, buttons
and labels, the find box's keys and the global shortcuts. Help → Keyboard shortcuts (F1) lists
exactly these, so a key added anywhere is listed without a second list to keep up to date.

    rows = shortcut_rows(window)          # [(keys, what it does), ...]
    clashes = mnemonic_clashes(window)    # {"p": ["&Previous sessions", "&Previous"]} when two share
"""

from __future__ import annotations

import re

from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractButton, QLabel, QMainWindow, QTabWidget, QWidget

from ...app.desktop_environment import SHORTCUTS
from .search_bar import FIND_KEYS

_MNEMONIC = re.compile(r"&([^&\s])")


def key_text(keys: str | QKeySequence) -> str:
    """``keys`` as this platform writes them ("Ctrl+Alt+O")."""
    seq = keys if isinstance(keys, QKeySequence) else QKeySequence.fromString(keys.title())
    return seq.toString(QKeySequence.SequenceFormat.NativeText)


def plain(text: str) -> str:
    """A label without its mnemonic marker or trailing ellipsis."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()


def mnemonic_of(text: str) -> str:
    m = _MNEMONIC.search(text.replace("&&", ""))
    return m.group(1).lower() if m else ""


def mnemonic_texts(window: QMainWindow, visible_only: bool = True) -> list[str]:
    """The texts carrying an Alt+letter in ``window``: its menu titles, tab titles, buttons and
    labels (a label's mnemonic moves the focus to its buddy). ``visible_only``: those a key
    press can reach now (the current tab's page)."""
    return [text for text, _ in _mnemonics(window, visible_only)]


def _mnemonics(window: QMainWindow, visible_only: bool) -> list[tuple[str, str]]:
    """(text, the title of the tab whose page holds it, or "") for ``mnemonic_texts``."""
    texts = [(a.text(), "") for a in window.menuBar().actions()]
    for tabs in window.findChildren(QTabWidget):
        if tabs.isVisibleTo(window) or not visible_only:
            texts += [(tabs.tabText(i), "") for i in range(tabs.count())]
    for w in window.findChildren(QWidget):
        if not isinstance(w, (QAbstractButton, QLabel)) or w.window() is not window:
            continue  # a dialog's keys are the dialog's
        if isinstance(w, QLabel) and w.buddy() is None:
            continue
        if visible_only and not w.isVisibleTo(window):
            continue
        texts.append((w.text(), _tab_of(w)))
    return [(t, tab) for t, tab in texts if mnemonic_of(t)]


def _tab_of(widget: QWidget) -> str:
    """The title of the tab whose page holds ``widget`` ("" when on no tab)."""
    page: QWidget | None = widget
    while page is not None:
        holder = page.parentWidget()
        tabs = holder.parentWidget() if holder is not None else None
        if isinstance(tabs, QTabWidget) and tabs.indexOf(page) >= 0:
            return plain(tabs.tabText(tabs.indexOf(page)))
        page = holder
    return ""


def mnemonic_clashes(window: QMainWindow) -> dict[str, list[str]]:
    """Letters that more than one reachable text uses (Alt+letter then goes to the first)."""
    by_letter: dict[str, list[str]] = {}
    for text in mnemonic_texts(window):
        by_letter.setdefault(mnemonic_of(text), []).append(text)
    return {k: v for k, v in by_letter.items() if len(v) > 1}


def shortcut_rows(window: QMainWindow) -> list[tuple[str, str]]:
    """(keys, what they do) for every key ``window`` answers to, in the order a person reads
    them: its commands, then the find box, the Alt+letters, and the keys that work from any
    application."""
    rows = [(key_text(a.shortcut()), plain(a.text())) for a in window.actions()
            if not a.shortcut().isEmpty()]
    rows += [(key_text(s.key()), s.whatsThis()) for s in window.findChildren(QShortcut)
             if s.parent() is window and s.whatsThis()]  # keys with no menu entry (gui/tab_keys.py)
    rows += [(key_text(keys), f"in the find box: {what}") for keys, what in FIND_KEYS]
    rows += _alt_rows(window)
    rows += [(key_text(keys), f"{what} (from any application, where the desktop allows)")
             for what, keys in SHORTCUTS.values()]
    return rows


def _alt_rows(window: QMainWindow) -> list[tuple[str, str]]:
    """One row per Alt+letter: a letter used on two tabs (only one tab shows at a time) says
    what it does on each."""
    by_key: dict[str, dict[str, str]] = {}  # keys -> {what: the tab it is on}
    for text, tab in _mnemonics(window, visible_only=False):
        keys = key_text(f"Alt+{mnemonic_of(text).upper()}")
        by_key.setdefault(keys, {}).setdefault(plain(text).rstrip(":"), tab)
    return [(keys, "; ".join(f"{what} (on {tab})" if tab and len(whats) > 1 else what
                             for what, tab in whats.items()))
            for keys, whats in by_key.items()]
