"""envport.io: atomic writes, the kernel-held lock and the keyed JSON cache, on real files."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from pydantic import BaseModel

from envport.errors import EnvportError
from envport.io import FileLock, JsonCache, write_atomically


class Entry(BaseModel):
    name: str
    value: int


def test_write_atomically_replaces_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "file.json"
    write_atomically(target, "first")
    write_atomically(target, "second")
    assert target.read_text() == "second"
    assert os.listdir(target.parent) == ["file.json"]


def test_a_cache_round_trips_and_a_damaged_entry_is_a_miss(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = JsonCache(tmp_path / "cache", Entry, "test cache")
    assert cache.get("k") is None
    cache.put("k", Entry(name="a", value=1))
    assert cache.get("k") == Entry(name="a", value=1)
    cache.path("k").write_text('{"name": "a"')  # torn by hand
    with caplog.at_level(logging.WARNING):
        assert cache.get("k") is None
    assert "ignoring unreadable test cache entry" in caplog.text
    cache.path("k").write_text('{"name": "a", "value": "x"}')  # the wrong shape
    assert cache.get("k") is None


def test_a_lock_is_one_holder_at_a_time(tmp_path: Path) -> None:
    first, second = FileLock(tmp_path / "x.lock"), FileLock(tmp_path / "x.lock")
    first.acquire()
    assert first.holder() == os.getpid()
    with pytest.raises(EnvportError, match=f"held by process {os.getpid()}"):
        second.acquire()
    first.release()
    assert not (tmp_path / "x.lock").exists()
    second.acquire()
    second.release()
