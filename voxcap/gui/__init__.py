"""The desktop app (PySide6). Every Qt import of voxcap lives in this package; the layers below
(engine, capture, captions, ``voxcap.app``) know nothing of Qt and reach the GUI only as plain
events through ``bridge.EventBridge``. One widget per module:

- ``app``            VoxcapApp: builds everything, routes events, quits cleanly
- ``bridge``         EventBridge: events from any thread -> one Qt signal on the GUI thread
- ``overlay``        CaptionOverlay: the frameless always-on-top caption window
- ``overlay_placement`` how the overlay stays on top on this desktop (X11, layer-shell,
  XWayland on GNOME, else a normal window and one message); ``layer_shell``: the overlay as a
  wlr-layer-shell surface (pywayland); ``global_shortcuts``: X11 key grabs / the portal
- ``main_window``    MainWindow: start/stop, source, history, sessions, status, meter dock
- ``history``        HistoryView: the session's captions, append-only, screen-reader readable
- ``search_bar``     SearchBar: find in the history
- ``sessions_view``  SessionsView: previous sessions from the journal, export
- ``engine_status``  EngineStatus: loading stages with progress, ready, error with its fix and
  Retry; each change painted and announced at once
- ``meter``          MeterWidget: measured throughput figures; ``chart`` MiniChart: last minute
- ``settings_dialog`` SettingsDialog: its parts one module each (``settings_engine``,
  ``settings_captions``, ``settings_overlay``, ``share_panel``), their widgets made from the
  settings' declarations (``settings_fields``); ``first_run`` FirstRunDialog; ``tray`` Tray
- ``api_key_row``    ApiKeyRow: where the vLLM server's key comes from, and a way to give one
- ``instance``       one running app per user: a second ``voxcap gui`` talks to the first
- ``qt_probe``       Qt checks for front ends that run without Qt (doctor, the launcher)
"""
