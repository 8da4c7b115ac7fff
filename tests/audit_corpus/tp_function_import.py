"""Imports inside the async function are resolved too."""


async def ping(url):
    import requests as rq

    return rq.head(url)  # expect: critical requests.head
