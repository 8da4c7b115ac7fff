"""Sync httpx: the module-level helpers and httpx.Client, also inside `with`."""
import httpx


async def fetch_reference(url):
    first = httpx.get(url)  # expect: critical httpx.get
    with httpx.Client(timeout=5) as client:  # expect: critical httpx.Client
        second = client.post(url, json={})  # expect: critical httpx.Client.post
    return first, second
