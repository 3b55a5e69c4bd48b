"""Where the word list is kept: ``glossary.txt`` in the config folder (one term per line, UTF-8,
the format ``--glossary FILE`` reads, so a list can be shared as it is), or the file the
``glossary_file`` setting names.

    terms = read_terms(settings.glossary_file)      # [] when there is no list yet
    write_terms(["Kubernetes", "Dr. Okonkwo"])      # what Settings → Word list saves
    Glossary(terms)                                 # captions.glossary
"""

from __future__ import annotations

from pathlib import Path

from .. import paths
from ..captions.glossary import check_terms, load_glossary

GLOSSARY_NAME = "glossary.txt"
HEADER = "# voxcap word list: one name or term per line, spelled as captions should show it\n"


def glossary_path(glossary_file: str = "") -> Path:
    return Path(glossary_file).expanduser() if glossary_file else paths.config_dir() / GLOSSARY_NAME


def read_terms(glossary_file: str = "") -> list[str]:
    """The word list's terms; [] when the default list was never saved. ConfigError (one line
    and the fix) for a named file that is missing or not UTF-8 text, or a term too long."""
    path = glossary_path(glossary_file)
    if not glossary_file and not path.exists():
        return []
    return load_glossary(path)


def write_terms(terms: list[str], glossary_file: str = "") -> Path:
    """Save the terms (whole or not at all); OSError for the caller to say."""
    check_terms(terms, "the word list")
    text = HEADER + "".join(t + "\n" for t in terms)
    return paths.write_private(glossary_path(glossary_file), text.encode("utf-8"))
