"""A blocking nested def that is only handed to an executor, and a nested async def."""
# expect: none
import asyncio
import shutil
import time


async def cleanup(path):
    def remove():
        shutil.rmtree(path)

    async def pause():
        await asyncio.sleep(0)

    await pause()
    await asyncio.to_thread(remove)
    return time.time()
