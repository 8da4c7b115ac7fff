"""Non-blocking time: asyncio.sleep and clock reads."""
# expect: none
import asyncio
import time
from asyncio import sleep


async def tick(period):
    started = time.monotonic()
    await asyncio.sleep(period)
    await sleep(0)
    return time.time() - started, time.perf_counter()
