"""QR codes of the share address (segno: a maintained, pure-Python QR library)."""

from __future__ import annotations

import io


def qr_png(text: str, scale: int = 6) -> bytes:
    """A PNG of ``text`` as a QR code (error correction M, a quiet zone of 2 modules)."""
    import segno

    buf = io.BytesIO()
    segno.make(text, error="m", micro=False).save(buf, kind="png", scale=scale, border=2)
    return buf.getvalue()
