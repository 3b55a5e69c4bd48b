"""The names a source is given by (no sound-server or numpy imports: the settings and `voxcap
doctor` read them in installs that cannot capture)."""

SOURCE_HELP = ('system (what the computer plays), mic, both, a device name from `voxcap devices`, '
               '"app:NAME" (one application\'s sound), or "both:NAME" (that application and the mic)')
ECHO_MODES = ("auto", "on", "off")
