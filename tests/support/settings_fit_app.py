"""Settings, and the first-use offer of a translation model, on a real screen at a font scale,
walked by Tab as a keyboard user does (``tests/gui/test_gui_settings_fit.py``). Prints one JSON
report: the screen, the dialog's frame, OK and Cancel, and for each tab the stops Tab reached
(each as it was shown once focused: inside the visible part of its page or not), the controls
it did not reach, and whether the page scrolls sideways.

    python tests/support/settings_fit_app.py SCALE [SHOTS_DIR]   # DISPLAY set by the test
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QFont
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDialogButtonBox,
    QLabel,
    QWidget,
)

from support.app_process import qt_app
from support.model_index import ModelIndexServer
from support.xvfb import pump
from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice
from voxcap.engine.model.tiny import write_tiny_model
from voxcap.share.service import ShareStatus
from voxcap.translate.models import IndexEntry, default_models_dir

LAN_URL = "http://192.168.1.20:8765/?token=Zm9vYmFyYmF6cXV4cXV1eGNvcmdl"


def _fake_pair(root: Path, source: str, target: str) -> None:
    """An installed pair as the models list reads it (no weights: never loaded here)."""
    folder = root / f"{source}_{target}"
    (folder / "model").mkdir(parents=True)
    (folder / "metadata.json").write_text(json.dumps({"from_code": source, "to_code": target,
                                                      "package_version": "1.9"}))
    (folder / "model" / "model.bin").write_bytes(b"\0" * 4096)
    (folder / "sentencepiece.model").write_bytes(b"\0" * 1024)


def _rect(w: QWidget) -> list[int]:
    top_left = w.mapToGlobal(w.rect().topLeft())
    return [top_left.x(), top_left.y(), w.width(), w.height()]


def _shown_in(w: QWidget, area: QWidget) -> bool:
    """``w`` inside ``area`` (a page's viewport, a dialog): all of it, or of a control stretched
    wider than the area at least as much as it needs (a list's text and its arrow)."""
    shown = QRect(w.mapTo(area, w.rect().topLeft()), w.size()).intersected(area.rect())
    return (shown.height() == w.height()
            and shown.width() >= min(w.width(), w.minimumSizeHint().width()))


def _on_screen(w: QWidget) -> bool:
    x, y, width, height = _rect(w)
    return w.screen().availableGeometry().contains(QRect(x, y, width, height))


def squeezed(area: QWidget) -> list[str]:
    """What is shown smaller than its text needs (a wrapped label: its lines at its width)."""
    def need(w: QWidget) -> QSize:
        hint = w.minimumSizeHint()
        if isinstance(w, QLabel) and w.wordWrap() and w.text():
            return QSize(0, w.heightForWidth(w.width()))
        return hint
    return [f"{_describe(w)} {w.width()}x{w.height()} < {need(w).width()}x{need(w).height()}"
            for w in area.findChildren(QWidget) if w.isVisible() and not w.isWindow()
            and not isinstance(w.parent(), QAbstractSpinBox | QComboBox)  # their own line edit
            and (w.width() < need(w).width() or w.height() < need(w).height())]


def _stops(w: QWidget) -> list[QWidget]:
    return [c for c in w.findChildren(QWidget) if c.isVisible() and c.isEnabled()
            and c.focusPolicy() & Qt.FocusPolicy.TabFocus and c.focusProxy() is None]


def _describe(w: QWidget) -> str:
    text = w.text() if hasattr(w, "text") and callable(w.text) else ""
    return f"{type(w).__name__} {w.accessibleName() or text or w.objectName()}".strip()


def walk(window: QWidget, area: QWidget, first: QWidget, limit: int = 120) -> dict:
    """Tab from ``first`` round the window once: each stop inside ``area``, as shown focused."""
    window.activateWindow()
    pump(QApplication.instance(), 3.0, lambda: QApplication.activeWindow() is window)
    first.setFocus()
    pump(QApplication.instance(), 0.1)
    reached: list[QWidget] = [first] if area.isAncestorOf(first) and first.hasFocus() else []
    hidden: list[str] = []
    for _ in range(limit):
        QTest.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_Tab)
        pump(QApplication.instance(), 0.05)
        w = QApplication.focusWidget()
        if w is None or w is first or w in reached:  # round once
            break
        if area.isAncestorOf(w):
            reached.append(w)
            if not _shown_in(w, area) or not _on_screen(w):
                hidden.append(f"{_describe(w)} at {_rect(w)}, in {_rect(area)}")
    missed = [_describe(c) for c in _stops(area) if c not in reached]
    return {"reached": [_describe(w) for w in reached], "hidden": hidden, "missed": missed}


def settings_report(qapp, shots: Path | None, scale: float) -> dict:
    from voxcap.gui.settings.dialog import SettingsDialog

    models = default_models_dir()
    for source, target in (("fr", "en"), ("en", "de"), ("es", "en"), ("en", "es"), ("it", "en"),
                           ("en", "it"), ("de", "en"), ("en", "fr")):
        _fake_pair(models, source, target)
    tiny = write_tiny_model(Path(tempfile.mkdtemp(prefix="voxcap-fit-")) / "tiny")
    # a model found: every note the first page can show (the memory estimate among them)
    settings = AppSettings(engine=EngineChoice(model_dir=str(tiny), dummy_weights=True))
    settings.translation.translate_to = "de"
    settings.share.enabled = settings.share.lan = settings.share.obs = True  # all its fields
    dlg = SettingsDialog(settings, cuda=False)
    dlg.show()
    pump(qapp, 20.0, lambda: dlg.engine_panel.model_ok is not None)
    # sharing on the network: its address and QR code shown, as the app shows them
    dlg.share.reveal.setChecked(True)
    dlg.share.show_status(ShareStatus(running=True, url=LAN_URL, lan=True, viewers=2,
                                      obs="sending", token=True))
    pump(qapp, 1.0)  # laid out again for the notes it set
    screen = dlg.screen().availableGeometry()
    report: dict = {"screen": [screen.x(), screen.y(), screen.width(), screen.height()],
                    "frame": dlg.frameGeometry().getRect(), "tabs": {}}
    for i in range(dlg.tabs.count()):
        dlg.tabs.setCurrentIndex(i)
        pump(qapp, 0.5)
        page = dlg.tabs.currentWidget()
        title = dlg.tabs.tabText(i).replace("&", "")
        scrolls = hasattr(page, "viewport")  # (before every tab scrolled: a plain page)
        tab = walk(dlg, page.viewport() if scrolls else page, dlg.tabs.tabBar())
        tab["frame"] = dlg.frameGeometry().getRect()
        tab["squeezed"] = squeezed(page.widget() if scrolls else page)
        tab["sideways"] = scrolls and page.horizontalScrollBar().isVisible()
        tab["buttons"] = _ok_cancel(dlg)
        report["tabs"][title] = tab
        if shots:
            dlg.tabs.tabBar().setFocus()
            if scrolls:
                page.verticalScrollBar().setValue(page.verticalScrollBar().maximum())  # its end
            pump(qapp, 0.3)
            name = f"settings-{screen.width()}x{screen.height()}-{scale}x-{i}.png"
            subprocess.run(["import", "-window", "root", str(shots / name)], check=False,
                           timeout=30)
    report["tabs"]["Translation, downloading"] = downloading(qapp, dlg, shots, scale)
    dlg.reject()
    return report


def _ok_cancel(dlg) -> list:
    """OK and Cancel: (text, where, shown whole on the screen)."""
    buttons = [dlg.buttons.button(b) for b in (QDialogButtonBox.StandardButton.Ok,
                                               QDialogButtonBox.StandardButton.Cancel)]
    return [(b.text().replace("&", ""), _rect(b), _shown_in(b, dlg) and _on_screen(b))
            for b in buttons]


def _download_by_keyboard(qapp, window: QWidget, button: QWidget, cancel: QWidget) -> None:
    window.activateWindow()
    pump(qapp, 3.0, lambda: QApplication.activeWindow() is window)
    button.setFocus()
    QTest.keyClick(button, Qt.Key.Key_Space)
    pump(qapp, 10.0, lambda: cancel.isEnabled())
    pump(qapp, 1.0)  # its progress shown


def downloading(qapp, dlg, shots: Path | None, scale: float) -> dict:
    """The Translation tab with a model on offer chosen and its download running."""
    models = dlg.translation.models
    dlg.show_tab(dlg.translation)
    pump(qapp, 10.0, lambda: models.available.currentData() is not None)
    _download_by_keyboard(qapp, dlg, models.download_button, models.cancel_button)
    page = dlg.tabs.currentWidget()
    tab = walk(dlg, page.viewport(), dlg.tabs.tabBar())
    tab.update(frame=dlg.frameGeometry().getRect(), squeezed=squeezed(page.widget()),
               sideways=page.horizontalScrollBar().isVisible(), buttons=_ok_cancel(dlg))
    if shots:
        screen = dlg.screen().availableGeometry()
        name = f"settings-{screen.width()}x{screen.height()}-{scale}x-downloading.png"
        subprocess.run(["import", "-window", "root", str(shots / name)], check=False, timeout=30)
    models.cancel()
    pump(qapp, 5.0, lambda: not models.jobs.busy)
    return tab


def offer_report(qapp, shots: Path | None, scale: float) -> dict:
    from voxcap.gui.translation_offer import ModelOfferDialog

    url = os.environ["VOXCAP_TRANSLATE_INDEX"].removesuffix("index.json")
    index = [IndexEntry("en", "pt", "1.0", (f"{url}files/translate-en_pt-1_0.argosmodel",),
                        2 * 2**20)]
    dlg = ModelOfferDialog("pt", "en", index, "", default_models_dir())
    dlg.show()
    pump(qapp, 1.0)
    report = walk(dlg, dlg, dlg.source)
    report["frame"] = dlg.frameGeometry().getRect()
    report["squeezed"] = squeezed(dlg)
    if shots:
        subprocess.run(["import", "-window", "root", str(shots / f"offer-{scale}x.png")],
                       check=False, timeout=30)
    _download_by_keyboard(qapp, dlg, dlg.download_button, dlg.cancel_button)
    busy = walk(dlg, dlg, dlg.source)
    busy["squeezed"] = squeezed(dlg)
    report["downloading"] = busy
    if shots:
        subprocess.run(["import", "-window", "root", str(shots / f"offer-{scale}x-downloading.png")],
                       check=False, timeout=30)
    dlg.jobs.cancel()
    pump(qapp, 5.0, lambda: not dlg.jobs.busy)
    dlg.reject()
    return report


def main() -> int:
    for name in ("CONFIG", "DATA", "CACHE"):  # none of the user's (read when first asked)
        os.environ[f"VOXCAP_{name}_DIR"] = tempfile.mkdtemp(prefix="voxcap-fit-")
    index = ModelIndexServer()  # models on offer, each download slow enough to walk past
    index.delay_s = 0.5
    folder = Path(tempfile.mkdtemp(prefix="voxcap-fit-"))
    for source, target in (("en", "pt"), ("pt", "en"), ("en", "ja"), ("nl", "en")):
        archive = folder / f"translate-{source}_{target}-1_0.argosmodel"
        archive.write_bytes(os.urandom(2 * 2**20))
        index.add(archive, source, target)
    os.environ["VOXCAP_TRANSLATE_INDEX"] = index.index_url
    scale = float(sys.argv[1])
    shots = Path(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None
    qapp = qt_app()
    font = QFont(qapp.font())
    font.setPointSizeF(font.pointSizeF() * scale)
    qapp.setFont(font)
    report = {"settings": settings_report(qapp, shots, scale),
              "offer": offer_report(qapp, shots, scale)}
    print("REPORT " + json.dumps(report), flush=True)
    sys.stdout.flush()
    os._exit(0)  # the models section's jobs thread: nothing to wait for


if __name__ == "__main__":
    main()
