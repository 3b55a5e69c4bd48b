"""The settings panel. Edits a copy of ``AppSettings``; ``applied`` hands the new settings to
the app (which restarts the engine if an engine setting changed, and saves them)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFontComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ..app.settings import ENGINE_STREAMS, AppSettings
from ..engine.settings import GRAPH_MODES, MAX_DELAY_MS, MIN_DELAY_MS, TOKEN_MS
from ..engine.sizing.memory import Sizing
from ..engine.sizing.precision import BY_NAME as PRECISION_BY_NAME
from ..engine.sizing.precision import LABELS as PRECISION_LABELS
from ..engine.sizing.precision import PRECISIONS
from ..errors import VoxcapError
from .a11y import announce, status_label
from .api_key_row import ApiKeyRow
from .plain_words import for_the_app
from .share_panel import SharePanel

log = logging.getLogger(__name__)

GRAPH_MODE_HELP = {
    "NONE": "NONE: no CUDA graphs (slowest steps, fastest start)",
    "PIECEWISE": "PIECEWISE: graphs between attention layers",
    "FULL_DECODE_ONLY": "FULL_DECODE_ONLY: each decode step one full graph (default, fastest)",
    "FULL_AND_PIECEWISE": "FULL_AND_PIECEWISE: full graphs for decode, piecewise otherwise",
}


def kv_note(path: str, dummy_weights: bool, sizing) -> tuple[str, str]:
    """(the automatic GPU memory budget, the verdict on this GPU now) for this model folder and
    ``sizing`` (memory.Sizing: the dialog's precision and session length), in the words the
    engine's start gate and ``voxcap doctor`` use. Reads NVML: not on the GUI thread."""
    from ..engine.model.folder import inspect_model_dir
    from ..engine.sizing import memory
    from ..engine.sizing.verdict import read_gpu_facts, verdict

    try:
        info = inspect_model_dir(path, dummy_weights)
        facts = read_gpu_facts()
        v = verdict(info, sizing, facts)
        fp = memory.footprint(info, v.choice.streams, sizing.max_model_len, sizing.kv_cache_gib,
                              precision=v.choice.precision)
    except (VoxcapError, KeyError, TypeError, ValueError):
        log.warning("no memory estimate for %s", path, exc_info=True)
        return "", ""
    line = "" if facts is None else for_the_app(v.text)
    return (f"≈{memory.gib(fp.kv_cache_bytes)} KV cache for {v.choice.streams} streams, "
            f"≈{memory.gib(fp.total_bytes)} of GPU memory in all"), line


def choice_costs(path: str, dummy_weights: bool, sizing) -> str:
    """What each precision would take on this GPU now, where more than one fits (for a person
    choosing one); "" otherwise. Reads NVML: not on the GUI thread."""
    from ..engine.model.folder import inspect_model_dir
    from ..engine.sizing import memory
    from ..engine.sizing.verdict import read_gpu_facts

    try:
        facts = read_gpu_facts()
        fitting = [] if facts is None else memory.choices_that_fit(
            inspect_model_dir(path, dummy_weights), sizing, facts)
    except (VoxcapError, KeyError, TypeError, ValueError):
        log.warning("no per-choice estimate for %s", path, exc_info=True)
        return ""
    if len(fitting) < 2:
        return ""
    return "Each choice that fits now: " + "; ".join(
        f"{c.label} ≈{memory.gib(c.need_bytes)} for {c.streams} stream{'s' if c.streams > 1 else ''}"
        for c in fitting)


def check_model_dir(path: str, dummy_weights: bool) -> tuple[str, str]:
    """("", "") when ``path`` holds a usable model, else (reason, fix)."""
    from ..engine.model.folder import inspect_model_dir

    try:
        inspect_model_dir(path, dummy_weights)
    except VoxcapError as exc:
        return for_the_app(exc.message), for_the_app(exc.fix)
    return "", ""


class ColorButton(QPushButton):
    def __init__(self, color: str, name: str, parent=None) -> None:
        super().__init__(parent)
        self.setAccessibleName(name)
        self._name = name
        self.set_color(color)
        self.clicked.connect(self._pick)

    def set_color(self, color: str) -> None:
        self.color = QColor(color).name()
        self.setText(self.color)
        fg = "#000000" if QColor(color).lightness() > 128 else "#ffffff"
        self.setStyleSheet(f"background: {self.color}; color: {fg};")

    def _pick(self) -> None:
        c = QColorDialog.getColor(QColor(self.color), self, self._name)
        if c.isValid():
            self.set_color(c.name())


class SettingsDialog(QDialog):
    applied = Signal(object)  # AppSettings
    # path, reason, fix, KV note, precision on this GPU (from the check thread)
    _validated = Signal(str, str, str, str, str)

    def __init__(self, settings: AppSettings, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")  # Qt appends " — voxcap"
        self.setAccessibleName("Settings")
        self.base = settings.copy()
        s = self.base

        # -- engine ------------------------------------------------------------------------
        self.engine = QComboBox(self)
        self.engine.addItem("This computer (vLLM here; needs an NVIDIA GPU)", "local")
        self.engine.addItem("A vLLM server (its realtime endpoint)", "remote")
        self.engine.setCurrentIndex(max(0, self.engine.findData(s.engine)))
        self.engine.setAccessibleName("Engine")
        self.model_dir = QLineEdit(s.model_dir, self)
        self.model_dir.setAccessibleName("Model directory")
        self.browse = QPushButton("Bro&wse…", self)
        self.browse.setAccessibleName("Browse for the model directory")
        self.model_check = status_label(QLabel("", self), "Model folder check")
        self.model_check.setWordWrap(True)
        self.model_check.setMinimumHeight(int(self.fontMetrics().lineSpacing() * 3.2))
        self.dummy = QCheckBox("Random weights (self-check only: the text is gibberish)", self)
        self.dummy.setChecked(s.dummy_weights)
        self.server_url = QLineEdit(s.server_url, self)
        self.server_url.setPlaceholderText("ws://gpu-box:8000")
        self.server_url.setAccessibleName("vLLM server address")
        self.server_model = QLineEdit(s.server_model, self)
        self.server_model.setPlaceholderText("(the server's only model)")
        self.server_model.setAccessibleName("Model name on the server")
        self.api_key = ApiKeyRow(s.server_url, self)  # where the key comes from, and a new one
        self.server_url.textChanged.connect(lambda t: self.api_key.refresh(t.strip()))
        self.graph_mode = QComboBox(self)
        for mode in GRAPH_MODES:
            self.graph_mode.addItem(GRAPH_MODE_HELP[mode], mode)
        self.graph_mode.setCurrentIndex(max(0, self.graph_mode.findData(s.graph_mode)))
        self.graph_mode.setAccessibleName("CUDA graph mode")
        self.precision = QComboBox(self)
        for key in PRECISIONS:
            self.precision.addItem(PRECISION_LABELS[key], key)
        self.precision.setCurrentIndex(max(0, self.precision.findData(s.precision)))
        self.precision.setAccessibleName("Precision")
        self.precision_note = status_label(QLabel("", self), "Precision note")
        self.precision_note.setWordWrap(True)
        self._precision_here = ""
        self.delay = QSpinBox(self)
        self.delay.setRange(MIN_DELAY_MS, MAX_DELAY_MS)
        self.delay.setSingleStep(TOKEN_MS)
        self.delay.setSuffix(" ms")
        self.delay.setValue(s.delay_ms)
        self.delay.setAccessibleName("Transcription delay in milliseconds")
        self.delay.setToolTip("Less delay: captions sooner; more: more accurate. Steps of 80 ms.")
        self.kv = QDoubleSpinBox(self)
        self.kv.setRange(0.0, 256.0)
        self.kv.setDecimals(1)
        self.kv.setSingleStep(0.5)
        self.kv.setSuffix(" GiB")
        self.kv.setSpecialValueText("Automatic (sized for 2 streams)")
        self.kv.setValue(s.kv_cache_gib or 0.0)
        self.kv.setAccessibleName("GPU memory budget for the KV cache")
        self.max_len = QSpinBox(self)
        self.max_len.setRange(127, 131072)  # 127 shows "Automatic" (None)
        self.max_len.setSpecialValueText("Automatic (8192, or the model's maximum)")
        self.max_len.setSingleStep(1024)
        self.max_len.setSuffix(" tokens")
        self.max_len.setValue(s.max_model_len or 127)
        self.max_len.setAccessibleName("Maximum engine session length in tokens")
        self.max_len_note = QLabel("", self)
        self.eager = QCheckBox("Fast start: no compilation, no CUDA graphs (slower steps)", self)
        self.eager.setChecked(s.enforce_eager)

        model_row = QHBoxLayout()
        model_row.addWidget(self.model_dir, 1)
        model_row.addWidget(self.browse)
        eng = QFormLayout()
        eng.addRow("&Engine:", self.engine)
        self._model_row = _wrap(model_row)
        eng.addRow("&Model folder:", self._model_row)
        eng.addRow("", self.model_check)
        eng.addRow("", self.dummy)
        eng.addRow("&Server:", self.server_url)
        eng.addRow("Se&rver model:", self.server_model)
        eng.addRow("API &key:", self.api_key)
        eng.addRow("&Graph mode:", self.graph_mode)
        eng.addRow("Precision (&quantization):", self.precision)
        eng.addRow("", self.precision_note)
        eng.addRow("&Delay:", self.delay)
        eng.addRow("GPU memory &budget:", self.kv)
        eng.addRow("Max session &length:", self.max_len)
        eng.addRow("", self.max_len_note)
        eng.addRow("", self.eager)
        self._eng_form = eng
        eng_box = QGroupBox("Engine (changes restart it; captions shown stay)", self)
        eng_box.setLayout(eng)

        # -- captions ----------------------------------------------------------------------
        self.mask = QCheckBox("Mask &profanity in captions and exports (the journal keeps the words)")
        self.mask.setChecked(s.mask_profanity)
        self.start_min = QCheckBox("Start mi&nimized")
        self.start_min.setChecked(s.start_minimized)
        self.start_cap = QCheckBox("Start captioning on laun&ch")
        self.start_cap.setChecked(s.start_captioning)
        self.echo = QComboBox(self)
        self.echo.setAccessibleName("Echo cancellation for Both")
        for key, text in (("auto", "Automatic (on unless the output is headphones)"),
                          ("on", "On"), ("off", "Off")):
            self.echo.addItem(text, key)
        self.echo.setCurrentIndex(max(0, self.echo.findData(s.echo_cancel)))
        echo_label = QLabel("Ec&ho cancellation for \"Both\" (the microphone without the speakers):", self)
        echo_label.setBuddy(self.echo)
        cap = QVBoxLayout()
        for w in (self.mask, self.start_min, self.start_cap, echo_label, self.echo):
            cap.addWidget(w)
        cap.addStretch(1)
        cap_box = QGroupBox("Captions and start-up", self)
        cap_box.setLayout(cap)

        # -- overlay -----------------------------------------------------------------------
        o = s.overlay
        self.lines = QSpinBox(self)
        self.lines.setRange(1, 5)
        self.lines.setValue(o.lines)
        self.lines.setAccessibleName("Caption lines in the overlay")
        self.font_family = QFontComboBox(self)
        if o.font_family:
            self.font_family.setCurrentFont(QFont(o.font_family))
        self.font_family.setAccessibleName("Overlay font")
        self.font_default = QCheckBox("Desktop default", self)
        self.font_default.setChecked(not o.font_family)
        self.font_size = QSpinBox(self)
        self.font_size.setRange(8, 120)
        self.font_size.setSuffix(" pt")
        self.font_size.setValue(o.font_size)
        self.font_size.setAccessibleName("Overlay font size")
        self.bold = QCheckBox("Bold", self)
        self.bold.setChecked(o.bold)
        self.text_color = ColorButton(o.text_color, "Caption text colour", self)
        self.bg_color = ColorButton(o.background_color, "Caption background colour", self)
        self.opacity = QSpinBox(self)
        self.opacity.setRange(0, 100)
        self.opacity.setSuffix(" %")
        self.opacity.setValue(round(o.background_opacity * 100))
        self.opacity.setAccessibleName("Background opacity")
        self.outline = QCheckBox("Dark outline around the letters", self)
        self.outline.setChecked(o.outline)
        font_row = QHBoxLayout()
        font_row.addWidget(self.font_family, 1)
        font_row.addWidget(self.font_default)
        size_row = QHBoxLayout()
        size_row.addWidget(self.font_size)
        size_row.addWidget(self.bold)
        size_row.addStretch(1)
        ov = QFormLayout()
        ov.addRow("L&ines:", self.lines)
        ov.addRow("&Font:", _wrap(font_row))
        ov.addRow("Si&ze:", _wrap(size_row))
        ov.addRow("&Text colour:", self.text_color)
        ov.addRow("Bac&kground:", self.bg_color)
        ov.addRow("&Opacity:", self.opacity)
        ov.addRow("", self.outline)
        ov_box = QGroupBox("Caption overlay", self)
        ov_box.setLayout(ov)

        self.share = SharePanel(s.share, self)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel
                                        | QDialogButtonBox.StandardButton.Apply, self)
        general = QWidget(self)
        gen = QVBoxLayout(general)
        gen.addWidget(eng_box)
        cols = QHBoxLayout()
        cols.addWidget(cap_box)
        cols.addWidget(ov_box)
        gen.addLayout(cols)
        share_page = QWidget(self)
        sh = QVBoxLayout(share_page)
        sh.addWidget(self.share)
        sh.addStretch(1)
        self.tabs = QTabWidget(self)  # the dialog stays short enough for a 768-pixel screen
        self.tabs.addTab(general, "Engine, captions, overlay")
        self.tabs.addTab(share_page, "Share captions")
        lay = QVBoxLayout(self)
        lay.addWidget(self.tabs)
        lay.addWidget(self.buttons)

        self.buttons.accepted.connect(self._ok)
        self.buttons.rejected.connect(self.reject)
        self.buttons.button(QDialogButtonBox.StandardButton.Apply).clicked.connect(self.apply)
        self.buttons.button(QDialogButtonBox.StandardButton.Apply).setText("&Apply")
        for form in (eng, ov):
            point_buddies_at_fields(form)
        self.browse.clicked.connect(self._browse)
        self.engine.currentIndexChanged.connect(self._engine_kind)
        self.font_default.toggled.connect(lambda on: self.font_family.setEnabled(not on))
        self.font_family.setEnabled(not self.font_default.isChecked())
        self.max_len.valueChanged.connect(self._len_note)
        self.precision.currentIndexChanged.connect(self._precision_changed)
        self._check_timer = QTimer(self, singleShot=True, interval=300)
        self._check_timer.timeout.connect(self._check_model)
        self.model_dir.textChanged.connect(lambda _t: self._check_timer.start())
        self.dummy.toggled.connect(lambda _on: self._check_timer.start())
        self._validated.connect(self._show_check)
        self.model_ok = None
        self._len_note()
        self._engine_kind()
        self._check_model()

    # ----------------------------------------------------------------------------------
    def _engine_kind(self) -> None:
        local = self.engine.currentData() == "local"
        for w in (self.model_dir, self.browse, self.dummy, self.graph_mode, self.kv, self.max_len,
                  self.eager, self.precision):
            w.setEnabled(local)
        self.model_check.setVisible(local)
        self.precision_note.setVisible(local)
        for w in (self.server_url, self.server_model):
            w.setEnabled(not local)
        # only what applies to the engine chosen (a server's graph mode, precision, memory and
        # session length are its own: not set, nor estimated, here)
        for w in (self._model_row, self.model_check, self.dummy, self.graph_mode, self.precision,
                  self.precision_note, self.kv, self.max_len, self.max_len_note, self.eager):
            self._eng_form.setRowVisible(w, local)
        for w in (self.server_url, self.server_model, self.api_key):
            self._eng_form.setRowVisible(w, not local)

    def _len_note(self) -> None:
        if self.max_len.value() < 128:  # "Automatic"
            self.max_len_note.setText("≈ 10.9 min of audio per engine session (less if the model "
                                      "allows less); longer captioning rolls over to a new session "
                                      "without losing words")
            return
        minutes = self.max_len.value() / 12.5 / 60
        self.max_len_note.setText(f"≈ {minutes:.1f} min of audio per engine session; longer "
                                  "captioning rolls over to a new session without losing words")

    def _precision_changed(self) -> None:
        self._show_precision_note()
        self._check_timer.start()  # what it fits here, sized again for this choice

    def _show_precision_note(self) -> None:
        key = self.precision.currentData()
        if key == "auto":
            text = ("Automatic: bfloat16 where it fits, FP8 weights (12 GB cards) or FP8 weights "
                    "+ FP8 KV cache where it does not, 4-bit weights (6-8 GB cards, RTX 30+) only "
                    "where FP8 does not fit the streams; 4-bit accuracy may be lower (not yet "
                    "measured).")
        else:
            text = f"{PRECISION_BY_NAME[key].label}: {PRECISION_BY_NAME[key].accuracy}."
        if self._precision_here:
            text += f"\nOn this GPU now: {self._precision_here}"
        self.precision_note.setText(text)

    def _browse(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Voxtral Realtime model folder",
                                             self.model_dir.text() or str(Path.home()))
        if d:
            self.model_dir.setText(d)

    def _max_model_len(self) -> int | None:
        return self.max_len.value() if self.max_len.value() >= 128 else None  # below: automatic

    def _check_model(self) -> None:
        path, dummy = self.model_dir.text().strip(), self.dummy.isChecked()
        if not path:
            self._show_check("", "No model folder set.", "choose the folder holding params.json, "
                                                         "tekken.json and consolidated.safetensors")
            return
        self.model_check.setText("Checking…")

        sizing = Sizing(self.precision.currentData(), ENGINE_STREAMS, self._max_model_len(),
                        self.kv.value() or None)

        def work() -> None:  # tekken.json is megabytes of JSON: not on the GUI thread
            reason, fix = check_model_dir(path, dummy)
            kv, here = ("", "") if reason else kv_note(path, dummy, sizing)
            costs = "" if reason else choice_costs(path, dummy, sizing)
            self._validated.emit(path, reason, fix, kv, "\n".join(t for t in (here, costs) if t))
        threading.Thread(target=work, daemon=True, name="voxcap-model-check").start()

    def _show_check(self, path: str, reason: str, fix: str, kv: str = "", here: str = "") -> None:
        if path and path != self.model_dir.text().strip():
            return  # an older check
        self.model_ok = not reason
        self._precision_here = here
        self._show_precision_note()
        self.kv.setSpecialValueText(f"Automatic ({kv})" if kv else "Automatic (sized for 2 streams)")
        if reason:
            self.model_check.setText(f"✗ {reason}" + (f"\nFix: {fix}" if fix else ""))
            self.model_check.setStyleSheet("color: #c62828;")
        else:
            self.model_check.setText("✓ Voxtral Realtime model found")
            self.model_check.setStyleSheet("color: #2e7d32;")
        if self.isVisible():
            announce(self.model_check, self.model_check.text().replace("✗ ", "Problem: ")
                     .replace("✓ ", ""))

    # ----------------------------------------------------------------------------------
    def result_settings(self) -> AppSettings:
        s = self.base.copy()
        s.engine = self.engine.currentData()
        s.model_dir = self.model_dir.text().strip()
        s.dummy_weights = self.dummy.isChecked()
        s.server_url = self.server_url.text().strip()
        s.server_model = self.server_model.text().strip()
        s.graph_mode = self.graph_mode.currentData()
        s.precision = self.precision.currentData()
        s.delay_ms = self.delay.value() // TOKEN_MS * TOKEN_MS
        s.kv_cache_gib = self.kv.value() or None
        s.max_model_len = self._max_model_len()
        s.enforce_eager = self.eager.isChecked()
        s.mask_profanity = self.mask.isChecked()
        s.start_minimized = self.start_min.isChecked()
        s.start_captioning = self.start_cap.isChecked()
        s.echo_cancel = self.echo.currentData()
        o = s.overlay
        o.lines = self.lines.value()
        o.font_family = "" if self.font_default.isChecked() else self.font_family.currentFont().family()
        o.font_size = self.font_size.value()
        o.bold = self.bold.isChecked()
        o.text_color = self.text_color.color
        o.background_color = self.bg_color.color
        o.background_opacity = self.opacity.value() / 100
        o.outline = self.outline.isChecked()
        s.share = self.share.result()
        return s

    def apply(self) -> bool:
        """Apply the settings; False (nothing applied) while "Allow site" is not one site:
        the Share tab shows its line and the field gets the focus."""
        problem = self.share.origin_error()
        if problem:
            self.tabs.setCurrentIndex(self.tabs.indexOf(self.share.parentWidget()))
            self.share.origin.setFocus()
            announce(self.share.origin_problem, "Problem: " + problem, assertive=True)
            return False
        new = self.result_settings()
        self.applied.emit(new)
        self.base = new.copy()
        return True

    def _ok(self) -> None:
        if self.apply():
            self.accept()


def _wrap(layout) -> QWidget:
    w = QWidget()
    layout.setContentsMargins(0, 0, 0, 0)
    w.setLayout(layout)
    return w


def point_buddies_at_fields(form: QFormLayout) -> None:
    """A row whose field is a container (a line edit and its button): its label's mnemonic
    goes to the first control in it, not to the container."""
    for row in range(form.rowCount()):
        label_item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
        field_item = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
        label = label_item.widget() if label_item else None
        field = field_item.widget() if field_item else None
        if not isinstance(label, QLabel) or field is None:
            continue
        if field.focusPolicy() & Qt.FocusPolicy.TabFocus:
            continue
        controls = [w for w in field.findChildren(QWidget)
                    if w.focusPolicy() & Qt.FocusPolicy.TabFocus]
        if controls:
            label.setBuddy(controls[0])
