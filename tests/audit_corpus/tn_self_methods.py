"""Methods that share names with blocking functions but are async, or pure."""
# expect: none
import asyncio


class Worker:
    async def sleep(self, seconds):
        await asyncio.sleep(seconds)

    def open(self):
        return {"opened": True}

    async def run(self):
        await self.sleep(1)
        return self.open()
