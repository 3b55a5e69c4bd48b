"""First run: the model download against a local fake Hub (no network here): progress, cancel,
resume with a range request, checksum; the GPU notice; choosing a folder or a server."""

from __future__ import annotations

import threading
import time

import pytest
from support.fake_hub import FILES, FakeHub

from voxcap.app.download import MODEL_REPO, DownloadCancelled, DownloadError, ModelDownload
from voxcap.app.settings import AppSettings
from voxcap.engine.choice import EngineChoice
from voxcap.gpu import GpuReading
from voxcap.gui.first_run import FirstRunDialog


@pytest.fixture
def hub():
    server = FakeHub()
    yield server
    server.shutdown()
    server.server_close()


def test_download_cancel_and_resume(hub, tmp_path):
    hub.delay = 0.02
    progress = []
    dl = ModelDownload(MODEL_REPO, tmp_path / "model", endpoint=hub.url, on_progress=progress.append)
    result = {}

    def run():
        try:
            dl.run()
        except DownloadCancelled as exc:
            result["cancelled"] = exc
    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 10
    while not any(p.file == "consolidated.safetensors" and p.done_bytes > 200_000 for p in progress):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    dl.cancel()
    t.join(10)
    assert "cancelled" in result
    part = tmp_path / "model" / "consolidated.safetensors.part"
    kept = part.stat().st_size
    assert 0 < kept < len(FILES["consolidated.safetensors"])
    assert (tmp_path / "model" / "params.json").read_bytes() == FILES["params.json"]
    assert not (tmp_path / "model" / "README.md").exists()  # only what the engine needs

    hub.delay = 0.0
    progress.clear()
    dl2 = ModelDownload(MODEL_REPO, tmp_path / "model", endpoint=hub.url, on_progress=progress.append)
    assert dl2.run() == tmp_path / "model"
    assert hub.ranges == [f"bytes={kept}-"]  # resumed, not started over
    assert (tmp_path / "model" / "consolidated.safetensors").read_bytes() == FILES["consolidated.safetensors"]
    assert not part.exists()
    assert progress[-1].stage == "done" and progress[-1].fraction == 1.0


def test_a_download_that_fetched_nothing_offers_a_retry_not_a_resume(qtbot, tmp_path):
    def downloader(repo, target, on_progress):  # the Hub cannot be reached
        return ModelDownload(repo, target, endpoint="http://127.0.0.1:9", timeout_s=2,
                             on_progress=on_progress)
    dlg = FirstRunDialog(downloader=downloader, gpus=[])
    qtbot.addWidget(dlg)
    assert dlg.target.cursorPosition() == 0  # the folder shows from its start
    dlg.target.setText(str(tmp_path / "m"))
    dlg.start_dl.click()
    qtbot.waitUntil(lambda: "Cannot reach" in dlg.dl_status.text(), timeout=20000)
    assert dlg.start_dl.text().replace("&", "") == "Try the download again"


def test_download_reports_corruption_and_unreachable_hub(hub, tmp_path):
    target = tmp_path / "model"
    target.mkdir()
    (target / "consolidated.safetensors.part").write_bytes(b"\xff" * 1000)  # wrong bytes
    with pytest.raises(DownloadError, match="SHA-256"):
        ModelDownload(MODEL_REPO, target, endpoint=hub.url).run()
    assert not (target / "consolidated.safetensors.part").exists()
    with pytest.raises(DownloadError, match="Cannot reach") as exc:
        ModelDownload(MODEL_REPO, target, endpoint="http://127.0.0.1:9", timeout_s=2).run()
    assert exc.value.fix


def test_first_run_dialog_download_with_progress(qtbot, hub, tmp_path):
    hub.delay = 0.01

    def downloader(repo, target, on_progress):
        return ModelDownload(repo, target, endpoint=hub.url, on_progress=on_progress)
    dlg = FirstRunDialog(downloader=downloader, gpus=[])
    qtbot.addWidget(dlg)
    # plain words and the way forward, the driver's technical reason only in the tooltip
    assert "This computer has no NVIDIA graphics card" in dlg.gpu_label.text()
    assert "voxcap serve" in dlg.gpu_label.text() and "NVML" not in dlg.gpu_label.text()
    assert dlg.opt_server.isChecked()  # no GPU: the server is the sensible default
    assert "voxcap serve --model FOLDER" in dlg.server_hint.text()
    assert "remote-api-key" in dlg.server_hint.text()  # where the printed key file goes
    dlg.target.setText(str(tmp_path / "m"))
    dlg.start_dl.click()
    qtbot.waitUntil(lambda: 0 < dlg.bar.value() < 1000, timeout=10000)
    dlg.cancel_dl.click()
    qtbot.waitUntil(lambda: "Cancelled" in dlg.dl_status.text(), timeout=10000)
    assert "Resume" in dlg.start_dl.text()
    assert not dlg.buttons.button(dlg.buttons.StandardButton.Ok).isEnabled()
    hub.delay = 0.0
    dlg.start_dl.click()
    qtbot.waitUntil(lambda: "Downloaded" in dlg.dl_status.text(), timeout=10000)
    assert dlg.bar.value() == 1000
    dlg.buttons.button(dlg.buttons.StandardButton.Ok).click()
    assert dlg.result_choice == {"kind": "local", "model_dir": str(tmp_path / "m")}


def test_first_run_with_gpu_and_existing_folder(qtbot, tiny_model_dir):
    dlg = FirstRunDialog(gpus=[GpuReading(0, "NVIDIA GeForce RTX 4090", 2 * 2**30, 24 * 2**30, 3)])
    qtbot.addWidget(dlg)
    # the name as the driver gives it (no second "NVIDIA"), and whether the model fits
    assert dlg.gpu_label.text().startswith(
        "✓ NVIDIA GeForce RTX 4090, 24 GiB: bfloat16 (the model's own precision): fits this 24 GB "
        "card (≈13.0 GiB"), dlg.gpu_label.text()
    dlg.folder.setText(str(tiny_model_dir / "nope"))
    qtbot.waitUntil(lambda: "does not exist" in dlg.folder_check.text(), timeout=5000)
    ok = dlg.buttons.button(dlg.buttons.StandardButton.Ok)
    assert not ok.isEnabled()
    # the tiny model has no weights file: the dialog says so (a real model folder passes)
    dlg.folder.setText(str(tiny_model_dir))
    qtbot.waitUntil(lambda: "consolidated.safetensors" in dlg.folder_check.text(), timeout=5000)
    # ...and offers the self-check; ticked, the "✗" gives way to what the choice means
    assert dlg.self_check.isVisibleTo(dlg) and not ok.isEnabled()
    dlg.self_check.setChecked(True)
    assert dlg.folder_check.text().startswith("✓ Self-check") and "gibberish" in \
        dlg.folder_check.text() and ok.isEnabled()
    dlg.self_check.setChecked(False)
    qtbot.waitUntil(lambda: dlg.folder_check.text().startswith("✗"), timeout=5000)
    dlg.opt_server.setChecked(True)
    dlg.server.setText("ws://gpu-box:8000")
    assert ok.isEnabled()
    ok.click()
    assert dlg.result_choice == {"kind": "remote", "server_url": "ws://gpu-box:8000"}


def test_app_opens_first_run_when_unconfigured(qtbot, make_app):
    app = make_app(AppSettings(), first_run=True)
    dlg = app.settings_control.first_run_dialog
    assert dlg is not None and dlg.isVisible()
    app.settings_control.first_run_chosen({"engine": "local", "model_dir": "/tmp/fake-model"})
    qtbot.waitUntil(lambda: app.window.engine_status.state == "ready", timeout=10000)


class FakePreparation:
    """Stands in for EnginePreparation (whose own tests run the real child on the CPU build):
    the test decides when it ends."""

    made: list[FakePreparation] = []

    def __init__(self, model_dir, settings, on_done):
        self.model_dir, self.settings, self.on_done = model_dir, settings, on_done
        self.running = self.cancelled = False
        FakePreparation.made.append(self)

    def start(self):
        self.running = True
        return self

    def finish(self, state, message):  # from another thread, as the real one's watcher does
        self.running = False
        threading.Thread(target=self.on_done, args=(state, message)).start()

    def cancel(self):
        self.running, self.cancelled = False, True


GPU = [GpuReading(0, "NVIDIA GeForce RTX 4090", 2 * 2**30, 24 * 2**30, 3)]


def _download_dialog(qtbot, hub, tmp_path, settings=None):
    FakePreparation.made = []

    def downloader(repo, target, on_progress):
        return ModelDownload(repo, target, endpoint=hub.url, on_progress=on_progress)
    dlg = FirstRunDialog(downloader=downloader, gpus=GPU, preparer=FakePreparation,
                         settings=settings)
    qtbot.addWidget(dlg)
    dlg.target.setText(str(tmp_path / "m"))
    return dlg


def test_the_engine_is_prepared_while_the_weights_download(qtbot, hub, tmp_path):
    hub.delay = 0.01
    settings = AppSettings(engine=EngineChoice(graph_mode="PIECEWISE", delay_ms=960))
    dlg = _download_dialog(qtbot, hub, tmp_path, settings)
    ok = dlg.buttons.button(dlg.buttons.StandardButton.Ok)
    dlg.start_dl.click()
    qtbot.waitUntil(lambda: bool(FakePreparation.made), timeout=10000)
    (prep,) = FakePreparation.made
    # once params.json and tekken.json are there, for the folder and settings the app will use
    assert (tmp_path / "m" / "params.json").exists() and (tmp_path / "m" / "tekken.json").exists()
    assert prep.model_dir == str(tmp_path / "m") and prep.settings.model_dir == str(tmp_path / "m")
    assert (prep.settings.graph_mode, prep.settings.delay_ms) == ("PIECEWISE", 960)
    assert not prep.settings.dummy_weights  # the command itself swaps in stand-in weights
    assert "being prepared" in dlg.prep_status.text() and dlg.prep_status.isVisibleTo(dlg)
    hub.delay = 0.0
    qtbot.waitUntil(lambda: "Downloaded" in dlg.dl_status.text(), timeout=10000)
    # downloaded, still preparing: its GPU memory is in use, so the app must not start yet
    assert not ok.isEnabled() and "Finishing" in dlg.prep_status.text()
    prep.finish("done", "engine prepared in 61 s")
    qtbot.waitUntil(ok.isEnabled, timeout=5000)
    assert dlg.prep_status.text().startswith("✓ Engine prepared")
    ok.click()
    assert dlg.result_choice == {"kind": "local", "model_dir": str(tmp_path / "m")}
    assert not prep.cancelled


def test_a_failed_preparation_is_said_and_does_not_block(qtbot, hub, tmp_path):
    dlg = _download_dialog(qtbot, hub, tmp_path)
    dlg.start_dl.click()
    qtbot.waitUntil(lambda: bool(FakePreparation.made), timeout=10000)
    FakePreparation.made[0].finish("failed", "The GPU has 1.0 GiB free")
    qtbot.waitUntil(lambda: "could not be prepared" in dlg.prep_status.text(), timeout=5000)
    assert "1.0 GiB free" in dlg.prep_status.text()
    qtbot.waitUntil(lambda: "Downloaded" in dlg.dl_status.text(), timeout=10000)
    assert dlg.buttons.button(dlg.buttons.StandardButton.Ok).isEnabled()


def test_closing_the_dialog_stops_the_preparation(qtbot, hub, tmp_path):
    hub.delay = 0.01
    dlg = _download_dialog(qtbot, hub, tmp_path)
    dlg.start_dl.click()
    qtbot.waitUntil(lambda: bool(FakePreparation.made), timeout=10000)
    dlg.reject()
    assert FakePreparation.made[0].cancelled


def test_no_gpu_no_preparation(qtbot, hub, tmp_path):
    FakePreparation.made = []

    def downloader(repo, target, on_progress):
        return ModelDownload(repo, target, endpoint=hub.url, on_progress=on_progress)
    dlg = FirstRunDialog(downloader=downloader, gpus=[], preparer=FakePreparation)
    qtbot.addWidget(dlg)
    dlg.target.setText(str(tmp_path / "m"))
    dlg.start_dl.click()
    qtbot.waitUntil(lambda: "Downloaded" in dlg.dl_status.text(), timeout=10000)
    assert FakePreparation.made == [] and not dlg.prep_status.isVisibleTo(dlg)


def _shown(label) -> str:
    """A label's text as it is painted (and named to screen readers): rich text without its
    tags, plain text as it is."""
    from PySide6.QtGui import Qt, QTextDocument  # QtGui's Qt: mightBeRichText is Qt GUI's

    text, fmt = label.text(), label.textFormat()
    if fmt == Qt.TextFormat.RichText or (fmt == Qt.TextFormat.AutoText and Qt.mightBeRichText(text)):
        doc = QTextDocument()
        doc.setHtml(text)
        return doc.toPlainText()
    return text


def test_the_welcome_dialog_shows_no_markup_and_speaks_as_itself(qtbot, tiny_model_dir, tmp_path):
    """No GPU, a folder that does not exist, then one without weights: what each label shows
    and is named has no raw tags, and its fixes point at the dialog's own choices ("below"),
    never at "the welcome dialog" from inside it."""
    from PySide6.QtGui import QAccessible
    from PySide6.QtWidgets import QLabel

    dlg = FirstRunDialog(gpus=[])
    qtbot.addWidget(dlg)
    dlg.show()
    seen = []
    for folder, wait_for in ((tmp_path / "nope", "does not exist"),
                             (tiny_model_dir, "consolidated.safetensors")):
        dlg.folder.setText(str(folder))
        qtbot.waitUntil(lambda w=wait_for: w in dlg.folder_check.text(), timeout=5000)
        for label in dlg.findChildren(QLabel):
            if not label.isVisible() or not label.text():
                continue
            iface = QAccessible.queryAccessibleInterface(label)
            for words in (_shown(label), iface.text(QAccessible.Text.Name)):
                seen.append(words)
                assert not any(tag in words for tag in ("<b>", "</b>", "<code>", "</code>")), words
                assert "welcome dialog" not in words, words
        assert "“Download the model from Hugging Face” below" in dlg.folder_check.text()
    assert any(s.startswith("This computer has no NVIDIA graphics card") for s in seen), seen
    # no weights: the fix offers the self-check the box below it gives, once
    assert dlg.folder_check.text().count("Self-check only") == 1, dlg.folder_check.text()


def test_ticking_the_self_check_leaves_no_gaps(qtbot, tiny_model_dir):
    """The folder check's lines shrink to one when the self-check is ticked: the dialog shrinks
    with them, no label is left with empty lines, and it grows back when unticked."""
    from PySide6.QtWidgets import QLabel

    dlg = FirstRunDialog(gpus=[])
    qtbot.addWidget(dlg)
    dlg.show()
    dlg.folder.setText(str(tiny_model_dir))
    qtbot.waitUntil(dlg.self_check.isVisible, timeout=5000)

    def slack() -> list[tuple[str, int]]:
        qtbot.wait(50)  # laid out
        line = dlg.fontMetrics().lineSpacing()
        return [(lb.text()[:30], lb.height() - lb.heightForWidth(lb.width()))
                for lb in dlg.findChildren(QLabel) if lb.isVisible() and lb.wordWrap()
                and abs(lb.height() - lb.heightForWidth(lb.width())) > line // 2]
    assert slack() == []
    dlg.self_check.setChecked(True)
    assert dlg.folder_check.text().startswith("✓ Self-check")
    assert slack() == []
    dlg.self_check.setChecked(False)
    qtbot.waitUntil(lambda: dlg.folder_check.text().startswith("✗"), timeout=5000)
    assert slack() == []
