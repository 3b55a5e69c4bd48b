"""The throughput meter: measured figures (``voxcap.app.meter``) and charts of the last minute."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QLabel, QVBoxLayout, QWidget

from ...app.meter import pace
from ...engine.stats import STEP_BUDGET_MS
from ..a11y import status_label
from .chart import MiniChart

NA = "n/a"


def _ms(v) -> str:
    return NA if v is None else f"{v:.1f} ms"


class MeterWidget(QWidget):
    FIELDS = (
        ("server", "Server"),
        ("graph", "Graph mode (vLLM)"),
        ("precision", "Precision"),
        ("full", "Steps as full graphs"),
        ("tokens", "Tokens/s"),
        ("step", "Step p50 / p95"),
        ("headroom", "Headroom (80 ms budget)"),
        ("lag", "Caption lag p50 / p95"),
        ("paint", "Delta → painted p50 / p95"),
        ("backlog", "Backlog"),
        ("dropped", "Dropped audio"),
        ("sources", "Streams from"),
        ("gpu_mem", "GPU memory"),
        ("gpu_load", "GPU load"),
    )

    # what each row means, in words (its tooltip)
    EXPLAINED = {
        "graph": "How vLLM runs each 80 ms step: FULL_DECODE_ONLY replays it as one CUDA graph "
                 "(fastest); NONE on a CPU",
        "full": "Share of steps that ran as one full CUDA graph",
        "step": "Time from an 80 ms chunk of audio handed to the engine to its text back",
        "headroom": "80 ms divided by the typical step time: above 1 the engine keeps up with "
                    "speech, below 1 captions fall behind",
        "lag": "Time from the sound to its words on the screen",
        "paint": "Time from the engine's text to it being drawn on the screen",
        "backlog": "Audio waiting for the engine; it grows when the engine cannot keep up",
        "dropped": "Audio lost because the engine or the capture fell too far behind",
    }
    # captions from a vLLM server: what this side can measure, under its own name; the rest
    # (how the server runs the model, its GPU) is not known here and not shown
    REMOTE_TITLES = {"step": "Round trip p50 / p95"}
    REMOTE_EXPLAINED = {
        "server": "The vLLM server the captions come from, and its model",
        "step": "Time from an 80 ms chunk of audio handed to the network to its text back: "
                "the network both ways, the server's queue and its step",
    }
    LOCAL_ONLY = ("graph", "precision", "full", "headroom", "gpu_mem", "gpu_load")

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Throughput meter")
        self.pending = ""  # "restarting → FULL": the engine the figures will be about
        form = QFormLayout()
        self.form = form
        self.remote: bool | None = None  # which rows are shown
        self.expect_remote = False  # the settings' engine, until one is ready (set by the app)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.values: dict[str, QLabel] = {}
        for key, title in self.FIELDS:
            value = status_label(QLabel(NA, self), title)  # e.g. the server's address
            value.setWordWrap(True)
            self.values[key] = value
            form.addRow(title + ":", value)
            if key in self.EXPLAINED:
                value.setToolTip(self.EXPLAINED[key])
                form.labelForField(value).setToolTip(self.EXPLAINED[key])
        self.tokens_chart = MiniChart("Tokens/s", "", "#43a047")
        self.step_chart = MiniChart("Step p95", "ms", "#1e88e5", budget=STEP_BUDGET_MS,
                                    budget_label="80 ms budget")
        self.lag_chart = MiniChart("Caption lag p50", "s", "#8e24aa")
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        for chart in (self.tokens_chart, self.step_chart, self.lag_chart):
            lay.addWidget(chart)
        lay.addStretch(1)
        self._set_remote(False)

    def _set_remote(self, remote: bool) -> None:
        """Rows and names for captions from a vLLM server (``remote``) or from this computer."""
        if remote == self.remote:
            return
        self.remote = remote
        titles = dict(self.FIELDS) | (self.REMOTE_TITLES if remote else {})
        explained = self.EXPLAINED | (self.REMOTE_EXPLAINED if remote else {})
        for key, value in self.values.items():
            shown = (key not in self.LOCAL_ONLY) if remote else key != "server"
            self.form.setRowVisible(value, shown)
            label = self.form.labelForField(value)
            if isinstance(label, QLabel):  # (each row's label is one)
                label.setText(titles[key] + ":")
            value.setAccessibleDescription(titles[key])
            if key in explained:
                value.setToolTip(explained[key])
                self.form.labelForField(value).setToolTip(explained[key])
        self.step_chart.title = "Round trip p95" if remote else "Step p95"
        self.step_chart.budget = None if remote else STEP_BUDGET_MS  # a round trip has none
        self.step_chart.setAccessibleName(f"{self.step_chart.title}, last minute")

    def set_origin(self, label: str, origin: str) -> None:
        """Which application or device a caption stream comes from ("" label: forget them all)."""
        if not label:
            self._origins = {}
        else:
            self._origins = {**getattr(self, "_origins", {}), label: origin}
        text = "; ".join(f"{k}: {v}" for k, v in self._origins.items())
        self.values["sources"].setText(text or NA)

    def show_reading(self, r, sampler=None) -> None:
        v = self.values
        self._set_remote(bool(r.server) if r.engine_ready else self.expect_remote)
        v["server"].setText(r.server or "not connected")
        if self.pending:
            v["graph"].setText(self.pending)
        elif r.resolved_mode:
            asked = "" if r.resolved_mode == r.requested_mode else f" (asked: {r.requested_mode})"
            v["graph"].setText(r.resolved_mode + asked)
        else:
            v["graph"].setText("engine not ready")
        v["precision"].setText(r.precision or NA)
        v["full"].setText(NA if r.full_share is None else f"{r.full_share:.0%} of {r.steps} steps")
        v["tokens"].setText(NA if r.tokens_per_s is None else f"{r.tokens_per_s:.1f}")
        v["step"].setText(f"{_ms(r.step_p50_ms)} / {_ms(r.step_p95_ms)}")
        if r.headroom is None:
            v["headroom"].setText(NA)
        else:
            v["headroom"].setText(f"{r.headroom:.1f}× ({pace(r)})")
        v["lag"].setText(NA if r.lag_p50_s is None
                         else f"{r.lag_p50_s:.2f} s / {r.lag_p95_s:.2f} s")
        v["paint"].setText(f"{_ms(r.paint_p50_ms)} / {_ms(r.paint_p95_ms)}")
        v["backlog"].setText(NA if r.backlog_ms is None else f"{r.backlog_ms:.0f} ms")
        held = f", {r.held_s:.1f} s held for the engine" if r.held_s > 0 else ""
        v["dropped"].setText(f"{r.dropped_s:.2f} s{held}")
        if r.gpu is None:
            v["gpu_mem"].setText(NA + " (no NVIDIA GPU or driver)")
            v["gpu_load"].setText(NA)
        else:
            v["gpu_mem"].setText(f"{r.gpu.memory_used_gib:.1f} / {r.gpu.memory_total_gib:.1f} GiB "
                                 f"({r.gpu.name})")
            v["gpu_load"].setText(NA if r.gpu.load_pct is None else f"{r.gpu.load_pct} %")
        if sampler is not None:
            self.tokens_chart.set_points(sampler.series("tokens_per_s"))
            self.step_chart.set_points(sampler.series("step_p95_ms"))
            self.lag_chart.set_points(sampler.series("lag_p50_s"))
