"""Settings → Translation → Translation models, for real: the tiny CTranslate2 package served by a
loopback Argos-format index (no network here), downloaded through the core's jobs thread with its
progress shown, cancelled mid-way and resumed with a range request, removed after the question,
installed from a folder; each bad input is one line in the page, and the app goes on."""

from __future__ import annotations

import os
import shutil

import pytest
from PySide6.QtWidgets import QMessageBox, QWidget
from support.model_index import ModelIndexServer
from support.tiny_translation import copy_package, make_archive, make_package

from voxcap.gui.settings.translation_models import ModelsSection
from voxcap.translate.package import installed_pairs


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    return make_package(tmp_path_factory.mktemp("tiny-mt") / "fr_en", "fr", "en")


@pytest.fixture
def archive(package, tmp_path):
    folder = copy_package(package, tmp_path / "src" / "fr_en", "fr", "en")
    (folder / "README").write_bytes(os.urandom(1 << 20))  # 1 MiB: a download with steps
    return make_archive(folder, tmp_path / "translate-fr_en-1_0.argosmodel")


@pytest.fixture
def server(monkeypatch):
    s = ModelIndexServer()
    monkeypatch.setenv("VOXCAP_TRANSLATE_INDEX", s.index_url)
    yield s
    s.close()


@pytest.fixture
def section(qtbot, tmp_path):
    s = ModelsSection(models_dir=tmp_path / "models")
    qtbot.addWidget(s)
    return s


def offered(section: ModelsSection) -> list[str]:
    return [section.available.itemData(i).name for i in range(section.available.count())
            if section.available.itemData(i) is not None]


def test_a_download_shows_its_progress_then_the_pair_is_listed_with_its_size(
        qtbot, server, archive, section):
    server.add(archive, "fr", "en")
    server.add(archive, "sq", "en")  # Albanian: no caption is in it, so it is not offered
    server.delay_s = 0.01
    section.show()  # the tab looked at: the index is asked
    qtbot.waitUntil(lambda: offered(section) == ["fr-en"], timeout=10000)
    assert section.available.currentText() == \
        f"French → English (fr-en), {archive.stat().st_size / 1e6:.1f} MB"
    values = []
    section.progress.bar.valueChanged.connect(values.append)
    section.download_button.click()
    assert section.cancel_button.isEnabled() and not section.download_button.isEnabled()
    qtbot.waitUntil(lambda: "fr-en" in section.remove_buttons, timeout=20000)
    assert any(0 < v < 1000 for v in values), values  # seen part-way, not only at the end
    assert section.progress.status.text() == "✓ Installed fr-en."
    pair = installed_pairs(section.models_dir)[("fr", "en")]
    row = [section.installed_rows.itemAtPosition(0, c).widget() for c in range(3)]
    assert [w.text() for w in row] == ["French → English (fr-en)",
                                       f"{pair.disk_bytes() / 1e6:.1f} MB", "Remove"]
    assert row[2].accessibleName() == "Remove French → English (fr-en)"
    assert offered(section) == []  # nothing left to download
    assert not section.cancel_button.isEnabled()


def test_a_cancelled_download_resumes_where_it_stopped(qtbot, server, archive, section):
    server.add(archive, "fr", "en")
    server.delay_s = 0.03
    section.show()
    qtbot.waitUntil(lambda: offered(section) == ["fr-en"], timeout=10000)
    section.download_button.click()
    qtbot.waitUntil(lambda: section.progress.bar.value() > 100, timeout=10000)
    section.cancel_button.click()
    qtbot.waitUntil(lambda: section.progress.status.text().startswith("Cancelled"), timeout=10000)
    part = section.models_dir / ".downloads" / (archive.name + ".part")
    kept = part.stat().st_size
    assert 0 < kept < archive.stat().st_size and installed_pairs(section.models_dir) == {}
    assert section.download_button.text() == "Resume do&wnload"
    server.delay_s = 0.0
    section.download_button.click()
    qtbot.waitUntil(lambda: "fr-en" in section.remove_buttons, timeout=20000)
    assert server.ranges == [f"bytes={kept}-"]  # went on from what was kept
    assert not part.exists()


def test_remove_asks_first(qtbot, package, section):
    shutil.copytree(package, section.models_dir / "fr_en")
    section.refresh()
    section.remove_buttons["fr-en"].click()
    box = section.confirm
    assert box is not None and box.isVisible() and "French → English (fr-en)" in box.text()
    box.button(QMessageBox.StandardButton.No).click()  # "Keep it"
    qtbot.waitUntil(lambda: section.confirm is None)
    assert ("fr", "en") in installed_pairs(section.models_dir)
    section.remove_buttons["fr-en"].click()
    section.confirm.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: not section.remove_buttons)
    assert installed_pairs(section.models_dir) == {}
    assert section.progress.status.text() == "Removed fr-en."
    labels = [section.installed_rows.itemAt(i).widget().text()
              for i in range(section.installed_rows.count())]
    assert labels == ["No translation models are installed yet."]


def test_install_from_a_folder(qtbot, package, tmp_path, section):
    usb = tmp_path / "usb"
    usb.mkdir()
    make_archive(copy_package(package, tmp_path / "src" / "de_en", "de", "en"),
                 usb / "translate-de_en-1_9.argosmodel")
    copy_package(package, usb / "en_fr", "en", "fr")  # an unpacked package folder too
    section.install_from(usb)
    qtbot.waitUntil(lambda: set(section.remove_buttons) == {"de-en", "en-fr"}, timeout=20000)
    assert section.progress.status.text() == "✓ Installed de-en, en-fr."
    assert set(installed_pairs(section.models_dir)) == {("de", "en"), ("en", "fr")}


def said(qtbot, section: ModelsSection, start: str) -> str:
    qtbot.waitUntil(lambda: section.progress.status.text().startswith(start), timeout=20000)
    return section.progress.status.text()


@pytest.mark.parametrize("case", ["unreachable index", "corrupt archive", "empty folder",
                                  "full disk"])
def test_bad_input_is_one_line_naming_the_fix(qtbot, server, archive, tmp_path, section, case,
                                              monkeypatch):
    if case == "unreachable index":
        monkeypatch.setenv("VOXCAP_TRANSLATE_INDEX", "http://127.0.0.1:9/index.json")
        section.show()
        line = said(qtbot, section, "✗ Cannot reach http://127.0.0.1:9/index.json")
        assert "from a model file" in line  # the app's words: Install from a file
        assert section.download_button.text() == "Look up a&gain"
        assert section.download_button.isEnabled()
    elif case == "corrupt archive":
        half = tmp_path / "translate-fr_en-1_0.argosmodel.half"
        half.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
        section.install_from(half)
        line = said(qtbot, section, "✗ ")
        assert "is not a complete translation package" in line
        assert "Fix: delete it and download it again." in line
    elif case == "empty folder":
        (tmp_path / "empty").mkdir()
        section.install_from(tmp_path / "empty")
        line = said(qtbot, section, "✗ ")
        assert "has no translation models" in line and "Fix: pick the folder" in line
    else:
        server.add(archive, "fr", "en")
        section.show()
        qtbot.waitUntil(lambda: offered(section) == ["fr-en"], timeout=10000)
        part = section.models_dir / ".downloads" / (archive.name + ".part")
        part.parent.mkdir(parents=True)
        part.symlink_to("/dev/full")  # every write: ENOSPC
        section.download_button.click()
        line = said(qtbot, section, "✗ The disk is full")
        assert "Fix: free some space" in line
    assert "\n" not in line and "Traceback" not in line
    assert section.file_button.isEnabled() and section.folder_button.isEnabled()
    assert installed_pairs(section.models_dir) == {}


def alt_letters(root) -> list[str]:
    """The Alt keys of the visible labels and buttons under ``root`` (one each, or a clash)."""
    from PySide6.QtGui import QKeySequence
    from PySide6.QtWidgets import QAbstractButton, QLabel

    keys = [QKeySequence.mnemonic(w.text()).toString() for w in root.findChildren(QWidget)
            if isinstance(w, (QAbstractButton, QLabel)) and w.isVisibleTo(root)]
    return [k for k in keys if k]


def test_no_two_alt_letters_clash_in_the_tab_or_the_offer(qtbot, monkeypatch, tmp_path):
    from voxcap.app.settings import AppSettings
    from voxcap.gui.settings.dialog import SettingsDialog
    from voxcap.gui.translation_offer import ModelOfferDialog

    monkeypatch.setenv("VOXCAP_TRANSLATE_INDEX", "http://127.0.0.1:9/index.json")
    dialog = SettingsDialog(AppSettings())
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.tabs.setCurrentWidget(dialog.translation)
    section = dialog.translation.models
    for problem in ("", "✗ the index cannot be reached"):  # Download, then Look up again
        section.index_problem = problem
        section._name_download_button()
        keys = alt_letters(dialog)
        assert len(keys) == len(set(keys)) and "Alt+M" in keys, keys
    offer = ModelOfferDialog("de", "en", [], "", tmp_path / "models")
    qtbot.addWidget(offer)
    offer.show()
    for text in ("&Download", "&Resume download", "Try a&gain"):
        offer.download_button.setText(text)
        keys = alt_letters(offer)
        assert len(keys) == len(set(keys)) and "Alt+T" in keys, keys
