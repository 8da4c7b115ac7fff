"""Async helpers and pure sync helpers."""
# expect: none
import asyncio
import math


def norm(vector):
    return math.sqrt(sum(x * x for x in vector))


async def fetch(queue):
    return await queue.get()


async def step(queue):
    item = await fetch(queue)
    await asyncio.gather(fetch(queue), fetch(queue))
    return norm(item)
