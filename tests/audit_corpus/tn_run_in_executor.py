"""loop.run_in_executor with a thread pool, a process pool and a lambda."""
# expect: none
import asyncio
import pickle
import subprocess
from concurrent.futures import ProcessPoolExecutor

POOL = ProcessPoolExecutor(max_workers=2)


def simulate(seed):
    return [i * seed for i in range(1_000_000)]


async def rollout(seed, blob):
    loop = asyncio.get_running_loop()
    trajectory = await loop.run_in_executor(POOL, simulate, seed)
    state = await loop.run_in_executor(None, pickle.loads, blob)
    await asyncio.get_running_loop().run_in_executor(
        None, lambda: subprocess.run(["sync"], check=True)
    )
    return trajectory, state
