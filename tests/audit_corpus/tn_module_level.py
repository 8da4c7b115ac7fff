"""Blocking at import time or under __main__ is not event-loop code."""
# expect: none
import asyncio
import json
import time
from pathlib import Path

CONFIG = json.loads(Path("config.json").read_text())
time.sleep(0)


class Settings:
    data = open("settings.toml").read()


async def main():
    return CONFIG


if __name__ == "__main__":
    time.sleep(1)
    asyncio.run(main())
