"""Settings that announce their changes: the change is worked out once, by dotted name, and a
subscriber is called for the settings it named (a group's name covers its settings) and for no
other; the engine's subscribers for the settings declared to restart it."""

from __future__ import annotations

import logging

from voxcap.app.settings import AppSettings
from voxcap.app.settings_changes import SettingsChanges, changed_names
from voxcap.engine.choice import EngineChoice


def _changed(**overlay) -> AppSettings:
    s = AppSettings()
    for name, value in overlay.items():
        setattr(s.overlay, name, value)
    return s


def test_changed_names_are_dotted_and_in_field_order():
    old, new = AppSettings(), AppSettings(mask_profanity=True, source="mic")
    new.overlay.font_size, new.share.port = 40, 9000
    assert changed_names(old, new) == ("source", "mask_profanity", "overlay.font_size",
                                       "share.port")
    assert changed_names(old, AppSettings()) == ()


def test_a_subscriber_is_called_for_its_setting_and_not_for_another():
    changes = SettingsChanges()
    font, masker, overlay = [], [], []
    changes.subscribe(font.append, "overlay.font_size")
    changes.subscribe(masker.append, "mask_profanity")
    changes.subscribe(overlay.append, "overlay")  # the group: any of its settings
    change = changes.announce(AppSettings(), _changed(font_size=40))
    assert change.names == ("overlay.font_size",)
    assert font == [change] and masker == [] and overlay == [change]
    changes.announce(AppSettings(), AppSettings(mask_profanity=True))
    assert len(font) == 1 and len(masker) == 1 and len(overlay) == 1
    changes.announce(AppSettings(), _changed(bold=False))
    assert len(font) == 1 and len(overlay) == 2
    changes.announce(AppSettings(), AppSettings())  # nothing changed: nobody called
    assert len(font) + len(masker) + len(overlay) == 4


def test_a_subscriber_to_every_application_is_called_even_for_no_change():
    changes, calls = SettingsChanges(), []
    changes.subscribe(calls.append)  # e.g. sharing: Apply again retries what failed
    changes.announce(AppSettings(), AppSettings())
    changes.announce(AppSettings(), AppSettings(mask_profanity=True))
    assert [c.names for c in calls] == [(), ("mask_profanity",)]


def test_a_name_is_not_a_prefix_of_another():
    changes, calls = SettingsChanges(), []
    changes.subscribe(calls.append, "share")
    changes.announce(AppSettings(), AppSettings(start_captioning=True))  # "start..." not "share"
    assert calls == []


def test_the_engine_restarts_for_the_settings_declared_to_restart_it():
    changes, restarts = SettingsChanges(), []
    changes.subscribe(restarts.append, restarting_engine=True)
    changes.announce(AppSettings(), _changed(font_size=40))
    changes.announce(AppSettings(), AppSettings(source="mic", mask_profanity=True))
    assert restarts == []
    change = changes.announce(AppSettings(),
                              AppSettings(engine=EngineChoice(delay_ms=960), source="mic"))
    assert restarts == [change] and change.restarting_engine == ("engine.delay_ms",)


def test_a_failing_subscriber_is_logged_and_the_others_still_run(caplog):
    changes, calls = SettingsChanges(), []

    def broken(_change):
        raise RuntimeError("boom")
    changes.subscribe(broken, "overlay")
    changes.subscribe(calls.append, "overlay.font_size")
    with caplog.at_level(logging.ERROR):
        changes.announce(AppSettings(), _changed(font_size=40))
    assert len(calls) == 1 and "boom" in caplog.text
