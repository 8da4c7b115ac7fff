"""A module-level helper reached from two entry points is reported once."""
import time


def backoff(attempt):
    time.sleep(2**attempt)  # expect: critical time.sleep


async def first(attempt):
    backoff(attempt)


async def second(attempt):
    backoff(attempt + 1)
