"""Async generators, async with and async for bodies are async code too."""
import pickle


async def rollouts(env, policy, sink):
    async with sink:
        async for batch in policy:
            yield pickle.loads(batch)  # expect: high pickle.loads
            await sink.write(env)
