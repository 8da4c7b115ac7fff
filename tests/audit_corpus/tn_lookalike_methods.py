"""Methods whose names match blocking functions, on receivers that are not paths or
sync clients."""
# expect: none


async def tidy(cache, text, registry, lock, config):
    cleaned = text.replace("a", "b")
    if await cache.exists("key"):
        await cache.unlink("key")
    await registry.open()
    lock.release()
    merged = config.copy()
    session = registry.get("session")
    return cleaned, merged, session.get("x")
