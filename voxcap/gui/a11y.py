"""What a screen reader hears: status labels whose accessible name IS their text, and
announcements of changes nobody has focus on.

A ``QLabel`` given a fixed accessible name exposes only that name over AT-SPI, never its text
("Engine status" instead of "Engine error: ..."). So a status label keeps Qt's default name
(its current text, announced as a name change when it changes) and says what it is in its
accessible *description*. ``announce`` raises an AT-SPI announcement (Qt's
``QAccessibleAnnouncementEvent``): Orca speaks it wherever the focus is, assertive ones at once.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent
from PySide6.QtWidgets import QLabel, QWidget


def status_label(label: QLabel, what: str) -> QLabel:
    """Expose ``label``'s text as its accessible name; ``what`` it is as its description.
    Shown as plain text: a status can carry text from outside voxcap (OBS's answers, a
    server's errors), which Qt's default would render as rich text (images, links)."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setAccessibleName("")
    label.setAccessibleDescription(what)
    return label


def announce(widget: QWidget, text: str, assertive: bool = False) -> None:
    """Have screen readers speak ``text`` (assertive: interrupting, for errors)."""
    if not text or not QAccessible.isActive():
        return
    ev = QAccessibleAnnouncementEvent(widget, text)
    ev.setPoliteness(QAccessible.AnnouncementPoliteness.Assertive if assertive
                     else QAccessible.AnnouncementPoliteness.Polite)
    QAccessible.updateAccessibility(ev)
