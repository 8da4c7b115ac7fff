"""A call spread over lines is reported at its first line; two findings on one line."""
import time

import httpx


async def poll(url):
    time.sleep(  # expect: critical time.sleep
        0.5
    )
    return httpx.Client().get(url), httpx.get(url)  # expect: critical httpx.Client; critical httpx.get
