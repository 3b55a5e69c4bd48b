"""Translation models from an index served on loopback: download, checksum, resume after a
cancel, install, translate, remove; corrupt, half-downloaded and full-disk cases say one line."""

from __future__ import annotations

import os
import threading

import pytest
from support.model_index import ModelIndexServer
from support.tiny_translation import copy_package, make_archive

from voxcap.commands.flag_words import in_flags
from voxcap.translate.models import (
    DownloadCancelled,
    PackageDownload,
    fetch_index,
    find_entry,
    install_archive,
)
from voxcap.translate.package import PairTranslator, TranslationModelError, installed_pairs


@pytest.fixture
def server():
    s = ModelIndexServer()
    yield s
    s.close()


@pytest.fixture
def archive(tiny_package, tmp_path):
    folder = copy_package(tiny_package, tmp_path / "src" / "fr_en", "fr", "en")
    (folder / "README").write_bytes(os.urandom(1 << 20))  # 1 MiB: many chunks to cancel between
    return make_archive(folder, tmp_path / "translate-fr_en-1_0.argosmodel")


def test_download_installs_a_pair_that_translates(server, archive, tmp_path):
    server.add(archive, "fr", "en")
    models = tmp_path / "models"
    seen = []
    entry = find_entry(fetch_index(server.index_url), "fr", "en")
    pair = PackageDownload(entry, models, on_progress=seen.append).run()
    assert (pair.source, pair.target, pair.folder) == ("fr", "en", models / "fr_en")
    assert list(installed_pairs(models)) == [("fr", "en")]
    assert PairTranslator(pair).translate(["bonjour le monde"])[0]
    assert seen[-1].stage == "done" and "verifying" in {p.stage for p in seen}
    assert not list((models / ".downloads").iterdir())  # nothing left behind


def test_a_cancelled_download_resumes_where_it_stopped(server, archive, tmp_path):
    server.add(archive, "fr", "en")
    server.delay_s = 0.02
    models = tmp_path / "models"
    entry = find_entry(fetch_index(server.index_url), "fr", "en")
    first = PackageDownload(entry, models)

    def cancel_midway(p):
        if p.done_bytes > 200_000:
            first.cancel()
    first.on_progress = cancel_midway
    with pytest.raises(DownloadCancelled):
        first.run()
    kept = first.part.stat().st_size
    assert 0 < kept < entry.size and installed_pairs(models) == {}
    server.delay_s = 0.0
    PackageDownload(entry, models).run()
    assert server.ranges == [f"bytes={kept}-"]
    assert ("fr", "en") in installed_pairs(models)


def test_a_corrupt_download_is_deleted_and_never_installed(server, archive, tmp_path):
    entry_json = server.add(archive, "fr", "en")
    entry_json["sha256"] = "0" * 64
    models = tmp_path / "models"
    download = PackageDownload(find_entry(fetch_index(server.index_url), "fr", "en"), models)
    with pytest.raises(TranslationModelError, match="SHA-256 does not match"):
        download.run()
    assert not download.part.exists() and installed_pairs(models) == {}


def test_a_half_downloaded_archive_is_refused(archive, tmp_path):
    half = tmp_path / "half.argosmodel"
    half.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(TranslationModelError, match="not a complete translation package"):
        install_archive(half, tmp_path / "models")
    assert installed_pairs(tmp_path / "models") == {}


def test_a_full_disk_says_so_and_how_to_resume(server, archive, tmp_path):
    server.add(archive, "fr", "en")
    models = tmp_path / "models"
    download = PackageDownload(find_entry(fetch_index(server.index_url), "fr", "en"), models)
    download.part.parent.mkdir(parents=True)
    download.part.symlink_to("/dev/full")  # every write: ENOSPC
    with pytest.raises(TranslationModelError) as err:
        download.run()
    assert err.value.message.startswith("The disk is full")
    assert "resumes" in err.value.fix


def test_an_unknown_pair_names_the_ones_the_index_has(server, archive):
    server.add(archive, "fr", "en")
    with pytest.raises(TranslationModelError) as err:
        find_entry(fetch_index(server.index_url), "ko", "en")
    assert "fr-en" in err.value.fix


def test_an_unreachable_index_says_what_to_do(server):
    url = server.index_url
    server.close()
    with pytest.raises(TranslationModelError, match="Cannot reach") as err:
        fetch_index(url)
    assert "--from FILE" in in_flags(err.value.fix)  # the terminal's words for the marker


def test_cancel_from_another_thread_stops_quickly(server, archive, tmp_path):
    server.add(archive, "fr", "en")
    server.delay_s = 0.05
    download = PackageDownload(find_entry(fetch_index(server.index_url), "fr", "en"), tmp_path / "m")
    threading.Timer(0.2, download.cancel).start()
    with pytest.raises(DownloadCancelled):
        download.run()


def test_what_a_route_still_needs(tiny_package, tmp_path):
    """Direct when the index has it, else the missing half or halves through English; nothing
    when a route is installed; an index without either names what it has."""
    from voxcap.translate.models import IndexEntry, needed_entries

    index = [IndexEntry(s, t, "1.0", (f"http://x/{s}_{t}",), 10) for s, t in
             (("fr", "en"), ("en", "de"), ("de", "en"))]
    installed: dict = {}
    names = lambda got: [e.name for e in got]  # noqa: E731
    assert names(needed_entries(index, installed, "de", "en")) == ["de-en"]
    assert names(needed_entries(index, installed, "fr", "de")) == ["fr-en", "en-de"]
    copy_package(tiny_package, tmp_path / "en_de", "en", "de")
    assert names(needed_entries(index, installed_pairs(tmp_path), "fr", "de")) == ["fr-en"]
    copy_package(tiny_package, tmp_path / "fr_en", "fr", "en")
    assert needed_entries(index, installed_pairs(tmp_path), "fr", "de") == []
    with pytest.raises(TranslationModelError) as err:
        needed_entries(index, {}, "ko", "de")
    assert err.value.message == ("The index has no ko-de translation model, nor ko-en and en-de "
                                 "to go through English.")
    with pytest.raises(TranslationModelError) as err:
        needed_entries(index, {}, "ko", "en")
    assert "fr-en" in err.value.fix  # the pairs it has
