"""Settings → Engine: this computer's vLLM (model folder, checked as it is typed, graph mode,
precision and what it costs on this GPU, delay, memory, session length) or a vLLM server
(address, model, key); only the rows of the engine chosen are shown."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QWidget,
)

from ...app.model_check import check_model_dir, choice_costs, kv_note
from ...app.settings import ENGINE_STREAMS, AppSettings
from ...engine.choice import EngineChoice
from ...engine.settings import applies
from ...engine.sizing.memory import Sizing
from ...engine.sizing.precision import explained as precision_explained
from ...framing import TOKENS_PER_SECOND
from ...settings_schema import specs
from ..a11y import announce, status_label
from .api_key_row import ApiKeyRow
from .delay_row import DelayRow
from .fields import Note, check_box, choice_box, decimal_box, number_box, number_of, row_label, wrap
from .setting_words import for_the_app

SPECS = specs(EngineChoice)
NO_CUDA = ("Not applicable on this computer: no NVIDIA GPU, so vLLM runs without CUDA graphs "
           "whatever is chosen here, and memory is the computer's own.")

class EnginePanel(QGroupBox):
    # path, reason, fix, KV note, precision on this GPU (from the check thread)
    _validated = Signal(str, str, str, str, str)

    def __init__(self, s: AppSettings, parent=None, cuda: bool = True) -> None:
        super().__init__("Engine (changes restart it; captions shown stay)", parent)
        self.cuda = cuda  # a CUDA GPU here (``platform.cuda_here``): else CUDA-only rows do not apply
        e = s.engine
        self.engine = choice_box(SPECS["kind"], e.kind, self, "Engine")
        self.model_dir = QLineEdit(e.model_dir, self)
        self.model_dir.setAccessibleName("Model directory")
        self.browse = QPushButton("Bro&wse…", self)
        self.browse.setAccessibleName("Browse for the model directory")
        self.model_check = status_label(Note(self), "Model folder check")
        self.dummy = check_box(SPECS["dummy_weights"], e.dummy_weights, self)
        self.server_url = QLineEdit(e.server_url, self)
        self.server_url.setPlaceholderText("ws://gpu-box:8000")
        self.server_url.setAccessibleName("vLLM server address")
        self.server_model = QLineEdit(e.server_model, self)
        self.server_model.setPlaceholderText("(the server's only model)")
        self.server_model.setAccessibleName("Model name on the server")
        self.api_key = ApiKeyRow(e.server_url, self)  # where the key comes from, and a new one
        self.server_url.textChanged.connect(lambda t: self.api_key.refresh(t.strip()))
        self.graph_mode = choice_box(SPECS["graph_mode"], e.graph_mode, self, "CUDA graph mode")
        self.precision = choice_box(SPECS["precision"], e.precision, self, "Precision")
        self.precision_note = status_label(Note(self), "Precision note")
        self._precision_here = ""
        self.delay = DelayRow(SPECS["delay_ms"], e.delay_ms, self)  # presets, trained delays only
        self.kv = decimal_box(SPECS["kv_cache_gib"], e.kv_cache_gib, self, suffix=" GiB",
                              decimals=1, step=0.5, name="GPU memory budget for the KV cache")
        self.max_len = number_box(SPECS["max_model_len"], e.max_model_len, self, suffix=" tokens",
                                  step=1024, name="Maximum engine session length in tokens")
        self.kv_note = status_label(Note(self), "Memory estimate")  # too long for the box's line
        self.max_len_note = Note(self)
        self.eager = check_box(SPECS["enforce_eager"], e.enforce_eager, self)
        self.graph_note = status_label(Note(self), "Graph mode note")
        self.graph_note.setText(NO_CUDA)
        self.form = self._layout()
        self.browse.clicked.connect(self._browse)
        self.engine.currentIndexChanged.connect(self._engine_kind)
        self.max_len.valueChanged.connect(self._len_note)
        self.precision.currentIndexChanged.connect(self._precision_changed)
        self._check_timer = QTimer(self, singleShot=True, interval=300)
        self._check_timer.timeout.connect(self._check_model)
        self.model_dir.textChanged.connect(lambda _t: self._check_timer.start())
        self.dummy.toggled.connect(lambda _on: self._check_timer.start())
        self._validated.connect(self._show_check)
        self.model_ok: bool | None = None  # None: not checked yet
        self._len_note()
        self._engine_kind()
        self._check_model()

    def _layout(self) -> QFormLayout:
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_dir, 1)
        model_row.addWidget(self.browse)
        self._model_row = wrap(model_row)
        form = QFormLayout(self)
        for name, field in (("kind", self.engine), ("model_dir", self._model_row)):
            form.addRow(row_label(SPECS[name]), field)
        form.addRow("", self.model_check)
        form.addRow("", self.dummy)
        form.addRow(row_label(SPECS["server_url"]), self.server_url)
        form.addRow(row_label(SPECS["server_model"]), self.server_model)
        form.addRow("API &key:", self.api_key)
        form.addRow(row_label(SPECS["graph_mode"]), self.graph_mode)
        form.addRow("", self.graph_note)
        form.addRow(row_label(SPECS["precision"]), self.precision)
        form.addRow("", self.precision_note)
        form.addRow(row_label(SPECS["delay_ms"]), self.delay)
        form.addRow("", self.delay.note)
        form.addRow(row_label(SPECS["kv_cache_gib"]), self.kv)
        form.addRow("", self.kv_note)
        form.addRow(row_label(SPECS["max_model_len"]), self.max_len)
        form.addRow("", self.max_len_note)
        form.addRow("", self.eager)
        return form

    def _engine_kind(self) -> None:
        local = self.engine.currentData() == "local"
        for w in (self.model_dir, self.browse, self.dummy, self.kv, self.max_len,
                  self.eager, self.precision):
            w.setEnabled(local)
        # shown as what it is here: not applicable without a CUDA GPU (offered, it would only
        # restart the engine to run the same way)
        self.graph_mode.setEnabled(local and applies("graph_mode", self.cuda))
        self.model_check.setVisible(local)
        self.precision_note.setVisible(local)
        for w in (self.server_url, self.server_model):
            w.setEnabled(not local)
        # only what applies to the engine chosen (a server's graph mode, precision, memory and
        # session length are its own: not set, nor estimated, here)
        local_rows: tuple[QWidget, ...] = (
            self._model_row, self.model_check, self.dummy, self.graph_mode, self.precision,
            self.precision_note, self.kv, self.max_len, self.max_len_note, self.eager)
        for row in local_rows:
            self.form.setRowVisible(row, local)
        self.form.setRowVisible(self.kv_note, local and bool(self.kv_note.text()))
        remote_rows: tuple[QWidget, ...] = (self.server_url, self.server_model, self.api_key)
        for row in remote_rows:
            self.form.setRowVisible(row, not local)
        self.form.setRowVisible(self.graph_note, local and not applies("graph_mode", self.cuda))

    def _len_note(self) -> None:
        length = self._max_model_len()
        if length is None:
            self.max_len_note.setText("≈ 10.9 min of audio per engine session (less if the model "
                                      "allows less); longer captioning rolls over to a new session "
                                      "without losing words")
            return
        minutes = length / TOKENS_PER_SECOND / 60
        self.max_len_note.setText(f"≈ {minutes:.1f} min of audio per engine session; "
                                  "longer captioning rolls over to a new session without losing "
                                  "words")

    def _precision_changed(self) -> None:
        self._show_precision_note()
        self._check_timer.start()  # what it fits here, sized again for this choice

    def _show_precision_note(self) -> None:
        key = self.precision.currentData()
        text = precision_explained(key)
        if self._precision_here:
            text += f"\nOn this GPU now: {self._precision_here}"
        self.precision_note.setText(text)

    def _browse(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Voxtral Realtime model folder",
                                             self.model_dir.text() or str(Path.home()))
        if d:
            self.model_dir.setText(d)

    def _max_model_len(self) -> int | None:
        return number_of(self.max_len, SPECS["max_model_len"])

    def _check_model(self) -> None:
        path, dummy = self.model_dir.text().strip(), self.dummy.isChecked()
        if not path:
            self._show_check("", "No model folder set.", "choose the folder holding params.json, "
                                                         "tekken.json and consolidated.safetensors")
            return
        self.model_check.setText("Checking…")
        sizing = Sizing(self.precision.currentData(), ENGINE_STREAMS, self._max_model_len(),
                        number_of(self.kv, SPECS["kv_cache_gib"]))

        def work() -> None:  # tekken.json is megabytes of JSON: not on the GUI thread
            reason, fix = check_model_dir(path, dummy)
            kv, here = ("", "") if reason else kv_note(path, dummy, sizing, gpu=self.cuda)
            costs = "" if reason else choice_costs(path, dummy, sizing)
            self._validated.emit(path, for_the_app(reason), for_the_app(fix), kv,
                                 "\n".join(for_the_app(t) for t in (here, costs) if t))
        threading.Thread(target=work, daemon=True, name="voxcap-model-check").start()

    def _show_check(self, path: str, reason: str, fix: str, kv: str = "", here: str = "") -> None:
        if path and path != self.model_dir.text().strip():
            return  # an older check
        self.model_ok = not reason
        self._precision_here = here
        self._show_precision_note()
        # the estimate is a sentence: wrapped under the box, whose own line stays short
        self.kv.setSpecialValueText("Automatic" if kv else SPECS["kv_cache_gib"].automatic)
        self.kv_note.setText(f"Automatic: {kv}" if kv else "")
        self.kv.setAccessibleDescription(self.kv_note.text())
        self.form.setRowVisible(self.kv_note, bool(kv) and self.engine.currentData() == "local")
        if reason:
            self.model_check.setText(f"✗ {reason}" + (f"\nFix: {fix}" if fix else ""))
            self.model_check.setStyleSheet("color: #c62828;")
        else:
            self.model_check.setText("✓ Voxtral Realtime model found")
            self.model_check.setStyleSheet("color: #2e7d32;")
        if self.isVisible():
            announce(self.model_check, self.model_check.text().replace("✗ ", "Problem: ")
                     .replace("✓ ", ""))

    def result_into(self, s: AppSettings) -> None:
        """The panel's values into ``s``."""
        s.engine.kind = self.engine.currentData()
        s.engine.model_dir = self.model_dir.text().strip()
        s.engine.dummy_weights = self.dummy.isChecked()
        s.engine.server_url = self.server_url.text().strip()
        s.engine.server_model = self.server_model.text().strip()
        s.engine.graph_mode = self.graph_mode.currentData()
        s.engine.precision = self.precision.currentData()
        s.engine.delay_ms = self.delay.value()
        s.engine.kv_cache_gib = number_of(self.kv, SPECS["kv_cache_gib"])
        s.engine.max_model_len = self._max_model_len()
        s.engine.enforce_eager = self.eager.isChecked()
