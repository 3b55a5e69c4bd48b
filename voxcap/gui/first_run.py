"""First run: where the model comes from (a folder, a download, or a vLLM server), and what the
machine's GPU means for it."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
)

from .. import gpu
from ..app.download import MODEL_REPO, DownloadCancelled, ModelDownload, default_model_dir
from ..app.engine_prep import EnginePreparation
from ..app.model_check import check_model_dir
from ..app.settings import ENGINE_STREAMS, AppSettings
from ..engine.sizing.cards import needs
from ..engine.sizing.memory import Sizing
from ..engine.sizing.verdict import read_gpu_facts, verdict
from ..errors import VoxcapError
from ..setting_refs import worded
from .a11y import announce, status_label
from .settings.api_key_row import ApiKeyRow
from .settings.fields import Note
from .settings.setting_words import for_the_app, say_in_the_app

log = logging.getLogger(__name__)

NO_GPU = ("<b>This computer has no NVIDIA graphics card</b> that voxcap can use. Captions "
          f"need {needs()}; without it, the model runs far slower than speech. "
          "The way forward: on a computer that has one, run <code>voxcap serve</code>, and "
          "choose “Use a vLLM server” below with the address it prints.")
SERVER_HINT = ("On the computer with the NVIDIA GPU: <code>voxcap serve --model FOLDER</code>. It "
               "prints the address to enter here, and a key file: copy that file to this "
               "computer as <code>{key}</code>.")


def _named(choice) -> str:
    """A check box's or radio button's label as a sentence names it: no mnemonic, nor what
    follows a colon."""
    return choice.text().replace("&", "").split(":")[0]


def default_download_dir() -> Path:
    return default_model_dir()  # where `voxcap download` puts it too


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n:.0f} B"
        n /= 1000
    return f"{n:.1f} GB"


def gpu_words(gpus, settings: AppSettings) -> tuple[bool, str]:
    """(fits, words) for the GPU vLLM would use, as the engine's start gate and doctor say it
    (engine/sizing/verdict.py), with the app's precision, streams and session length."""
    used = next((g for g in gpus if g.index == gpu.visible_gpu_index()), gpus[0])
    sizing = Sizing.of(settings.engine, streams=ENGINE_STREAMS)
    try:
        v = verdict(None, sizing, read_gpu_facts(used))
    except VoxcapError as exc:  # a precision this GPU cannot run
        return False, for_the_app(f"{exc.message} Fix: {exc.fix}")
    return v.fits, for_the_app(v.text)


class FirstRunDialog(QDialog):
    _progress = Signal(object)
    _finished = Signal(str, str, str, bool)  # path, error, fix, cancelled
    _checked = Signal(str, str, str, bool)  # path, problem, fix, only the weights missing
    _prep_done = Signal(str, str)  # state, message

    def __init__(self, parent=None, downloader=ModelDownload, gpus=None,
                 preparer=EnginePreparation, settings: AppSettings | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Welcome")  # Qt appends " — voxcap"
        self.setMinimumWidth(700)
        self._downloader_cls = downloader
        self.download: ModelDownload | None = None
        # While the weights download, an engine with stand-in weights compiles what the first
        # start needs (engine/inprocess/prepare.py): a GPU only, since that is where it takes a minute.
        self._preparer_cls = preparer
        self._settings = settings or AppSettings()
        self.prep: EnginePreparation | None = None
        self.result_choice: dict | None = None
        gpus = gpu.list_gpus() if gpus is None else gpus
        self._has_gpu = bool(gpus)
        if gpus:
            fits, words = gpu_words(gpus, self._settings)
            text = (("✓ " if fits else "⚠ ")
                    + "; ".join(f"{g.name}, {g.memory_total_gib:.0f} GiB" for g in gpus)
                    + f": {words}")
        else:
            text = NO_GPU
        self.gpu_label = status_label(Note(self), "GPU check")
        self.gpu_label.setText(text)
        if not gpus:  # the technical reason for whoever asks, not the headline
            self.gpu_label.setToolTip(gpu.nvml_unavailable_reason() or "no driver answered")
            self.gpu_label.setTextFormat(Qt.TextFormat.RichText)  # our own words, in bold
        intro = Note(self)
        intro.setText("voxcap needs the Voxtral Realtime model (Mistral's "
                      f"<code>{MODEL_REPO}</code>, about 9 GB) or a vLLM server that runs it.")

        self.opt_folder = QRadioButton("Use a model &folder I already have", self)
        self.opt_download = QRadioButton("&Download the model from Hugging Face", self)
        self.opt_server = QRadioButton("Use a vLLM &server", self)
        group = QButtonGroup(self)
        for b in (self.opt_folder, self.opt_download, self.opt_server):
            group.addButton(b)
        self.folder = QLineEdit(self)
        self.folder.setAccessibleName("Model folder")
        self.browse = QPushButton("&Browse…", self)
        self.folder_check = status_label(Note(self), "Model folder check")
        self.folder_check.hide()  # until there is a folder to check: no empty line
        # a folder with the model's files but no weights can still run the self-check
        self.self_check = QCheckBox("Self-check onl&y: random weights, gibberish captions", self)
        self.self_check.setToolTip("Tries the whole app without the 9 GB of weights")
        self.self_check.hide()
        self.target = QLineEdit(str(default_download_dir()), self)
        self.target.setAccessibleName("Download to folder")
        self.target.setCursorPosition(0)  # a long path shows from its start, not cut on the left
        self.target.setToolTip(self.target.text())
        self.target.textChanged.connect(self.target.setToolTip)
        self.start_dl = QPushButton("Start do&wnload", self)
        self.cancel_dl = QPushButton("&Cancel download", self)
        self.cancel_dl.setEnabled(False)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 1000)
        self.bar.setAccessibleName("Download progress")
        self.dl_status = status_label(Note(self), "Download status")
        self.dl_status.setText("A cancelled or broken download resumes where it stopped.")
        self.prep_status = status_label(Note(self), "Engine preparation")
        self.prep_status.hide()
        self.server = QLineEdit(self)
        self.server.setPlaceholderText("ws://gpu-box:8000")
        self.server.setAccessibleName("vLLM server address")
        from ..engine.remote.settings import default_api_key_path

        self.server_hint = Note(self)
        self.server_hint.setText(SERVER_HINT.format(key=default_api_key_path()))
        self.server_hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.key_row = ApiKeyRow("", self)  # where the key comes from; a field or a file for one
        # the core's advice in this dialog's words: its own choices, on screen below the check
        # (not "the welcome dialog", nor Settings' "Random weights")
        download, check = (_named(b) for b in (self.opt_download, self.self_check))
        self._advice = {"get_model": f"(about 9 GB) with “{download}” below",
                        "self_check": f"choose it here with “{check}” ticked",
                        "unless_dummy": f"unless “{check}” is ticked"}
        self._no_weights_fix = (f"download the model (about 9 GB) with “{download}” below, or "
                                f"tick “{check}”: the app runs with random weights, so everything "
                                "works but the captions are gibberish.")
        self._fetched = 0  # bytes a download fetched: "Resume" only when there is something

        grid = QGridLayout()
        grid.addWidget(self.opt_folder, 0, 0, 1, 3)
        grid.addWidget(self.folder, 1, 1)
        grid.addWidget(self.browse, 1, 2)
        grid.addWidget(self.folder_check, 2, 1, 1, 2)
        grid.addWidget(self.self_check, 3, 1, 1, 2)
        grid.addWidget(self.opt_download, 4, 0, 1, 3)
        grid.addWidget(self.target, 5, 1)
        dl_row = QHBoxLayout()
        dl_row.addWidget(self.start_dl)
        dl_row.addWidget(self.cancel_dl)
        grid.addLayout(dl_row, 5, 2)
        grid.addWidget(self.bar, 6, 1, 1, 2)
        grid.addWidget(self.dl_status, 7, 1, 1, 2)
        grid.addWidget(self.prep_status, 8, 1, 1, 2)
        grid.addWidget(self.opt_server, 9, 0, 1, 3)
        grid.addWidget(self.server, 10, 1, 1, 2)
        grid.addWidget(self.server_hint, 11, 1, 1, 2)
        grid.addWidget(self.key_row, 12, 1, 1, 2)
        grid.setColumnMinimumWidth(0, 20)
        grid.setColumnStretch(1, 1)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel, self)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Use this")
        lay = QVBoxLayout(self)
        lay.addWidget(self.gpu_label)
        lay.addWidget(intro)
        lay.addLayout(grid)
        lay.addWidget(self.buttons)

        self.opt_download.setChecked(True) if gpus else self.opt_server.setChecked(True)
        group.buttonToggled.connect(lambda *_: self._update())
        self.folder.textChanged.connect(lambda _t: self._check_timer.start())
        self.server.textChanged.connect(lambda _t: self._update())
        self.server.textChanged.connect(lambda t: self.key_row.refresh(t.strip()))
        self.browse.clicked.connect(self._browse)
        self.self_check.toggled.connect(self._self_check_toggled)
        self.start_dl.clicked.connect(self.start_download)
        self.cancel_dl.clicked.connect(self.cancel_download)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        self._progress.connect(self._show_progress)
        self._finished.connect(self._download_done)
        self._checked.connect(self._show_check)
        self._prep_done.connect(self._show_prep_done)
        self._check_timer: QTimer = QTimer(self, singleShot=True, interval=300)
        self._check_timer.timeout.connect(self._check_folder)
        self._folder_ok = False
        self._downloaded: str | None = None
        self._update()

    # ----------------------------------------------------------------------------------
    def _update(self) -> None:
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        if self.opt_folder.isChecked():
            ok.setEnabled(self._folder_ok or (self.self_check.isVisibleTo(self)
                                              and self.self_check.isChecked()))
        elif self.opt_download.isChecked():
            preparing = self.prep is not None and self.prep.running
            ok.setEnabled(self._downloaded is not None and not preparing)
            if self._downloaded is not None and preparing:  # it holds GPU memory: let it end
                self._say_prep("Finishing the engine's preparation (about a minute at most); "
                               "“Use this” is available when it ends.")
        else:
            ok.setEnabled(bool(self.server.text().strip()))
        self.key_row.setEnabled(self.opt_server.isChecked())

    def _self_check_toggled(self, on: bool) -> None:
        """Ticked, the missing weights are no longer a problem: the check says what happens."""
        if on:
            self.folder_check.setText("✓ Self-check: the model's files with random weights; "
                                      "everything works, but the captions are gibberish.")
            self.folder_check.show()
            self.fit_lines()  # one line where there were several: no gap left behind
            announce(self.folder_check, self.folder_check.text().replace("✓ ", ""))
        elif self.folder.text().strip():
            self._check_folder()
        self._update()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.fit_lines()

    def fit_lines(self) -> None:
        """As tall as its lines need at its width, no taller: ``adjustSize`` counts the wrapped
        lines at the narrower width of the size hint (the minimum width is wider), and the
        spare height was spread as gaps between the paragraphs."""
        QTimer.singleShot(0, self, self._fit_now)  # once the new text is laid out

    def _fit_now(self) -> None:
        layout, screen = self.layout(), self.screen()
        if layout is None or not self.isVisible():
            return
        layout.activate()
        height = max(layout.totalHeightForWidth(self.width()), self.minimumHeight())
        if screen is not None:
            height = min(height, screen.availableGeometry().height())
        if height != self.height():
            self.resize(self.width(), height)

    def _own_words(self, text: str) -> str:
        """A core text as this dialog says it (any thread: the words are made already)."""
        return worded(text, lambda name, value: self._advice.get(name)
                      or say_in_the_app(name, value))

    def _browse(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Voxtral Realtime model folder", str(Path.home()))
        if d:
            self.opt_folder.setChecked(True)
            self.folder.setText(d)

    def _check_folder(self) -> None:
        path = self.folder.text().strip()
        self.opt_folder.setChecked(True)
        if not path:
            return

        def work() -> None:
            reason, fix = check_model_dir(path, False)
            weights_only = bool(reason) and not check_model_dir(path, True)[0]
            self._checked.emit(path, self._own_words(reason), self._own_words(fix), weights_only)
        threading.Thread(target=work, daemon=True).start()

    def _show_check(self, path: str, reason: str, fix: str, weights_only: bool = False) -> None:
        if path != self.folder.text().strip():
            return
        self._folder_ok = not reason
        if weights_only:  # all but the weights: the box below is the other way
            fix = self._no_weights_fix
        text = ("✓ Voxtral Realtime model found" if not reason
                else f"✗ {reason}" + (f"\nFix: {fix}" if fix else ""))
        self.folder_check.setText(text)
        self.folder_check.show()
        self.self_check.setVisible(weights_only)
        if weights_only and self.self_check.isChecked():  # still the self-check: say so
            self._self_check_toggled(True)
            return
        self.fit_lines()  # the check's lines and the check box need room
        if not weights_only:
            self.self_check.setChecked(False)
        announce(self.folder_check, text.replace("✗ ", "Problem: ").replace("✓ ", ""))
        self._update()

    # ----------------------------------------------------------------------- download ----
    def start_download(self) -> None:
        if self.download is not None:
            return
        self.opt_download.setChecked(True)
        target = self.target.text().strip()
        self.download = self._downloader_cls(MODEL_REPO, target, on_progress=self._progress.emit)
        self.start_dl.setEnabled(False)
        self.cancel_dl.setEnabled(True)
        self.dl_status.setText("Connecting…")
        dl = self.download

        def work() -> None:
            try:
                path = str(dl.run())
                self._finished.emit(path, "", "", False)
            except DownloadCancelled as exc:
                self._finished.emit("", exc.message, exc.fix, True)
            except VoxcapError as exc:
                self._finished.emit("", exc.message, exc.fix, False)
            except Exception as exc:  # noqa: BLE001 - shown, never a silent stop
                self._finished.emit("", f"The download failed: {exc!r}", "try again", False)
        threading.Thread(target=work, daemon=True, name="voxcap-download").start()

    def cancel_download(self) -> None:
        if self.download is not None:
            self.download.cancel()
            self.dl_status.setText("Cancelling…")

    def _show_progress(self, p) -> None:
        if p.stage == "downloading" and p.file == "consolidated.safetensors":
            self._start_prep()  # params.json and tekken.json are in place: all it needs
        self._fetched = max(self._fetched, p.done_bytes)
        if p.total_bytes:
            self.bar.setValue(int(p.fraction * 1000))
            self.bar.setFormat(f"{p.fraction:.0%}")
        if p.stage == "listing":
            self.dl_status.setText("Listing the model's files…")
        elif p.stage == "verifying":
            self.dl_status.setText(f"Checking what was already downloaded of {p.file}…")
        elif p.stage == "downloading":
            rate = f", {_fmt_bytes(p.bytes_per_s)}/s" if p.bytes_per_s else ""
            self.dl_status.setText(f"{p.file}: {_fmt_bytes(p.done_bytes)} of "
                                   f"{_fmt_bytes(p.total_bytes)}{rate}")

    def _download_done(self, path: str, error: str, fix: str, cancelled: bool) -> None:
        self.download = None
        self.cancel_dl.setEnabled(False)
        self.start_dl.setEnabled(True)
        if path:
            self._downloaded = path
            self.bar.setValue(1000)
            self.dl_status.setText(f"✓ Downloaded to {path}")
            self.start_dl.setEnabled(False)
        else:
            if self._fetched:  # something to resume from; else it is a plain retry
                self.start_dl.setText("Resume do&wnload")
            else:
                self.start_dl.setText("Try the do&wnload again")
            self.dl_status.setText(("Cancelled. " if cancelled else "✗ ") + error
                                   + (f" ({fix})" if fix and not cancelled else ""))
        self._update()

    # ------------------------------------------------------------------ preparation ----
    def _start_prep(self) -> None:
        if self.prep is not None or not self._has_gpu:
            return
        target = self.target.text().strip()
        choice = self._settings.copy()
        choice.engine.kind, choice.engine.model_dir, choice.engine.dummy_weights = "local", target, False
        try:
            settings = choice.engine_settings()
        except VoxcapError:  # the settings are the app's to report; the start is just slower
            log.warning("the engine is not prepared during the download", exc_info=True)
            return
        self.prep = self._preparer_cls(target, settings, on_done=self._prep_done.emit).start()
        if self.prep.running:
            self._say_prep("Meanwhile the engine is being prepared for this GPU (once, about a "
                           "minute), so that the first start is quick.")

    def _show_prep_done(self, state: str, message: str) -> None:
        if state == "done":
            self._say_prep("✓ Engine prepared: the first start will be quick.")
        elif state == "failed":
            self._say_prep(f"⚠ The engine could not be prepared ahead ({message}); the first start "
                           "will take about a minute longer.")
        self._update()

    def _say_prep(self, text: str) -> None:
        if self.prep_status.text() != text:
            self.prep_status.setText(text)
            self.prep_status.show()
            announce(self.prep_status, text)

    def _cancel_prep(self) -> None:
        if self.prep is not None and self.prep.running:
            self.prep.cancel()

    # ----------------------------------------------------------------------------------
    def _accept(self) -> None:
        if not self.opt_download.isChecked():
            self._cancel_prep()  # another choice: its GPU memory is needed now
        if self.opt_folder.isChecked():
            self.result_choice = {"kind": "local", "model_dir": self.folder.text().strip(),
                                  "dummy_weights": not self._folder_ok}
        elif self.opt_download.isChecked():
            self.result_choice = {"kind": "local", "model_dir": self._downloaded or ""}
        else:
            self.result_choice = {"kind": "remote", "server_url": self.server.text().strip()}
        self.accept()

    def reject(self) -> None:
        self.cancel_download()
        self._cancel_prep()
        super().reject()
