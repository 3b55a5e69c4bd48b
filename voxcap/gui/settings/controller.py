"""The app's settings and the two dialogs that change them: Settings and the first-run choice
(one of each at a time, deleted once closed). What a dialog changed is applied to the settings
(a setting changed elsewhere meanwhile, the source from the main window, stays as it is now) and
saved; command-line values for this run only are never saved. ``on_applied(old, new)`` announces
the change (``app.settings_changes``): the parts of the app follow the settings they use. Where
the windows are is not a setting (``app.window_state``): a dialog never touches it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ...app.settings import AppSettings, RunOverrides, save_settings
from ...app.settings_changes import changed_names, set_value_at, value_at
from ...engine.vllm_adapter.platform import cuda_here
from ..first_run import FirstRunDialog
from ..share.panel import SharePanel
from .dialog import SettingsDialog

log = logging.getLogger(__name__)


class SettingsController:
    def __init__(self, settings: AppSettings, window, *, persist: bool,
                 overrides: RunOverrides | None, first_run: bool,
                 on_applied: Callable[[AppSettings, AppSettings], object],
                 on_new_address: Callable[[], None] = lambda: None,
                 on_word_list: Callable[[list[str]], None] = lambda _terms: None,
                 on_models_changed: Callable[[bool], None] = lambda _installed: None) -> None:
        self.settings = settings
        self.window = window
        self.persist = persist
        self.overrides = overrides  # command-line values for this run only: never saved
        self.first_run_enabled = first_run
        self.on_applied = on_applied  # (old, new): the app follows the change
        self.on_new_address = on_new_address  # Share captions → "New address", being applied
        self.on_word_list = on_word_list  # Word list saved: its terms
        self.on_models_changed = on_models_changed  # a translation model installed (True) or removed
        self.dialog: SettingsDialog | None = None
        self.first_run_dialog: FirstRunDialog | None = None
        self.cuda: bool | None = None  # a CUDA GPU here; None until known (NVML: not on this thread)
        threading.Thread(target=self._find_cuda, daemon=True, name="voxcap-cuda-check").start()

    def _find_cuda(self) -> None:
        try:
            self.cuda = cuda_here()
        except Exception:
            log.warning("could not tell whether a CUDA GPU is here", exc_info=True)

    # ----------------------------------------------------------------------- settings ----
    def open(self) -> None:
        if self.dialog is None:
            dlg = self.dialog = SettingsDialog(self.settings, self.window,
                                               cuda=self.cuda is not False)
            dlg.applied.connect(lambda new: self._dialog_applied(dlg, new))
            dlg.word_list_saved.connect(self.on_word_list)
            dlg.translation.models.installed_changed.connect(self.on_models_changed)
            dlg.finished.connect(self._closed)
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()

    def share_panel(self) -> SharePanel | None:
        return self.dialog.share if self.dialog is not None else None

    def _closed(self, _result: int) -> None:
        if self.dialog is not None:
            self.dialog.deleteLater()
            self.dialog = None

    def _dialog_applied(self, dlg: SettingsDialog, new: AppSettings) -> None:
        if dlg.share.take_new_address():
            self.on_new_address()  # first: sharing, applied with the settings, takes the new token
        # the dialog's base: the settings it opened (or last applied) with
        self.apply(new, base=dlg.base)

    def apply(self, new: AppSettings, base: AppSettings | None = None) -> None:
        """``new`` become the settings; with ``base`` (what a dialog started from), only what
        differs from it: a setting changed elsewhere since is not the dialog's to undo."""
        old = self.settings
        if base is not None:
            edited = new
            new = old.copy()
            for name in changed_names(base, edited):
                set_value_at(new, name, value_at(edited, name))
        self.settings = new
        self.on_applied(old, new)
        self.save()

    def save(self) -> None:
        if not self.persist:
            return
        settings = self.overrides.for_saving(self.settings) if self.overrides else self.settings
        try:
            save_settings(settings)
        except OSError as exc:
            log.warning("the settings could not be saved", exc_info=True)
            self.window.show_notice(f"Settings could not be saved: {exc.strerror or exc}",
                                    "check that the config folder is writable")

    # ---------------------------------------------------------------------- first run ----
    def open_first_run(self) -> None:
        """The first-run choice (a model folder, the download, or a vLLM server); raised if
        already open."""
        if self.first_run_dialog is not None:
            self.first_run_dialog.raise_()
            return
        dlg = FirstRunDialog(self.window, settings=self.settings)
        self.first_run_dialog = dlg
        dlg.accepted.connect(lambda: self.first_run_chosen(dlg.result_choice))
        dlg.rejected.connect(lambda: self.window.engine_status.message(
            "No model configured.", "press Start captioning (F5) to choose again: a model "
            "folder, the download, or a vLLM server (`voxcap serve` on a GPU computer)"))
        dlg.finished.connect(lambda _r: self._first_run_closed(dlg))
        dlg.open()

    def _first_run_closed(self, dlg) -> None:
        dlg.deleteLater()  # a closed dialog must not linger in the accessibility tree
        if self.first_run_dialog is dlg:
            self.first_run_dialog = None

    def first_run_chosen(self, choice: dict | None) -> None:
        if not choice:
            return
        new = self.settings.copy()
        for k, v in choice.items():  # the first-run dialog chooses the engine (EngineChoice)
            setattr(new.engine, k, v)
        self.apply(new)
