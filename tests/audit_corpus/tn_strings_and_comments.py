"""Blocking calls that only appear in strings, comments and docstrings.

    time.sleep(1)
"""
# expect: none
import time


async def explain():
    # time.sleep(1) would block here, so we do not call it
    message = "call time.sleep(1) and requests.get(url) to see the loop stall"
    return message, time.monotonic()
