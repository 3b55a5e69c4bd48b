"""The Settings dialog: one page per part, the widgets each setting's declaration asks for, and
the controller that applies what was chosen."""
