"""The async counterparts of every blocking client."""
# expect: none
import asyncio

import aiofiles
import httpx
import litellm
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI


class Grader:
    def __init__(self):
        self.client = AsyncOpenAI()

    async def grade(self, url, prompt, path):
        async with httpx.AsyncClient() as http:
            page = await http.get(url)
        first = await self.client.chat.completions.create(model="m", messages=[])
        second = await AsyncAnthropic().messages.create(model="m", messages=[], max_tokens=8)
        third = await litellm.acompletion(model="m", messages=[])
        proc = await asyncio.create_subprocess_exec("cargo", "build")
        await proc.wait()
        async with aiofiles.open(path) as handle:
            text = await handle.read()
        return page, first, second, third, text
