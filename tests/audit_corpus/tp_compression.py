"""Compression inline is CPU-heavy (medium)."""
import gzip
import zlib


async def pack_frames(frames, blob):
    small = zlib.compress(frames)  # expect: medium zlib.compress
    raw = gzip.decompress(blob)  # expect: medium gzip.decompress
    return small, raw
