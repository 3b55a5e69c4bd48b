"""One statement of the graphics card voxcap needs: README's card table and its
"You need" line, the installer's closing text and the first-run dialog all say what
engine/sizing/cards.py says, and the line follows the table's rows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from voxcap.engine.sizing.cards import CARD_TIERS, CardTier, markdown_table, needs

REPO = Path(__file__).resolve().parents[3]


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_readme_shows_the_table_and_says_the_line():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert markdown_table() in readme
    assert f"on your own computer {needs()} and" in flat(readme)


def test_the_first_run_dialog_says_the_line():
    from voxcap.gui.first_run import NO_GPU

    assert f"Captions need {needs()};" in NO_GPU


def test_the_installer_says_the_line_and_no_figure_of_its_own():
    script = (REPO / "installer" / "install.sh").read_text(encoding="utf-8")
    assert "-m voxcap.engine.sizing.cards" in script
    assert not re.findall(r"\d+ GB or\s*\"?\s*(?:say \")?\s*more", script)
    r = subprocess.run([sys.executable, "-m", "voxcap.engine.sizing.cards"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == needs() + "\n", r.stderr


def test_the_line_follows_the_rows():
    assert needs() == "an NVIDIA GPU with 6 GB or more (RTX 30 series or newer; RTX 20: 11 GB or more)"
    four_bit = CardTier("6 GB (RTX 2060, 3050 6 GB…)", "4-bit weights", "1", 6)
    assert needs(CARD_TIERS + (four_bit,)) == "an NVIDIA GPU with 6 GB or more"
    assert f"| {four_bit.cards} | 4-bit weights | 1 |" in markdown_table(CARD_TIERS + (four_bit,))
