"""The captions window on top of everything: its state band, placement per desktop (the
wlr-layer-shell surface on Wayland), stepping aside of dialogs, lingering lines."""
