"""An .npz file written by untrusted code, read with its sizes checked before any is trusted.

An .npz is a zip: a 2 MB file may hold members that inflate to gigabytes (their headers
may also lie about it), or thousands of members. `np.load` inflates a member whole when it
is asked for. Here the member count and each member's declared size are checked against
the limits before anything is inflated, and each member is read in bounded pieces, so one
that inflates past what it declared, or past the limit, is refused after at most the limit
is held. Arrays are parsed without unpickling.
"""

from __future__ import annotations

import io
import lzma
import zipfile
import zlib

import numpy as np

_PIECE = 1 << 20


class NpzRefused(ValueError):
    """An .npz over a limit or unreadable: the message says which and what the limit is."""


def read_npz(data: bytes, max_members: int, max_bytes: int) -> dict[str, np.ndarray]:
    """The arrays of the .npz `data`, keyed by name (without `.npy`), as long as it has at
    most `max_members` members whose contents total at most `max_bytes` bytes."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise NpzRefused(f"not an .npz file: {error}") from None
    with archive:
        members = archive.infolist()
        if len(members) > max_members:
            raise NpzRefused(f"it has {len(members)} members; at most {max_members} are read")
        declared = sum(member.file_size for member in members)
        if declared > max_bytes:
            raise NpzRefused(
                f"its members declare {declared} bytes; at most {max_bytes} are inflated"
            )
        arrays: dict[str, np.ndarray] = {}
        left = max_bytes
        for member in members:
            content = _inflate(archive, member, left)
            left -= len(content)
            name = member.filename.removesuffix(".npy")
            try:
                arrays[name] = np.lib.format.read_array(io.BytesIO(content), allow_pickle=False)
            except (OSError, ValueError) as error:
                raise NpzRefused(f"member {name!r} is not an array: {error}") from None
        return arrays


def _inflate(archive: zipfile.ZipFile, member: zipfile.ZipInfo, left: int) -> bytes:
    """A member's contents, read a piece at a time and refused once they pass `left` bytes
    or the size the member declared."""
    limit = min(left, member.file_size)
    pieces: list[bytes] = []
    held = 0
    try:
        with archive.open(member) as stream:
            while piece := stream.read(min(_PIECE, limit + 1 - held)):
                held += len(piece)
                if held > limit:
                    raise NpzRefused(
                        f"member {member.filename!r} inflates past {limit} bytes (declared "
                        f"{member.file_size}; {left} left of the limit)"
                    )
                pieces.append(piece)
    except (
        zipfile.BadZipFile,
        OSError,
        EOFError,
        NotImplementedError,
        RuntimeError,  # an encrypted member
        zlib.error,
        lzma.LZMAError,
    ) as error:
        raise NpzRefused(f"member {member.filename!r} is unreadable: {error}") from None
    return b"".join(pieces)
