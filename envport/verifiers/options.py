"""What `envport verify` is asked to do: the levels, the target, the budgets and the lanes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from envport.errors import EnvportError

LEVELS = ("l1", "l2", "l3", "l4")
# L4 trains policies: minutes, not seconds, so it runs only when asked for.
DEFAULT_LEVELS = ("l1", "l2", "l3")
# Below this many episodes per lane, starting processes costs more than it saves.
EPISODES_PER_WORKER = 250


@dataclass
class L3Options:
    """What L3 plays: here, below the levels, because divergence replays name it too."""

    episodes: int
    steps: int
    mode: str
    seed: int = 0
    only_episode: int | None = None
    # Episodes first..last played as one batch, as a chunk of a full run played them: the
    # replay of a divergence that shows only beside the other envs of its batch.
    batch: tuple[int, int] | None = None


@dataclass
class VerifyOptions:
    levels: tuple[str, ...] = DEFAULT_LEVELS
    target: str = "auto"
    episodes: int | None = None
    steps: int | None = None
    mode: str | None = None
    seed: int = 0
    only_episode: int | None = None
    # `--episode A-B`: L3 episodes A..B played as one batch (a batch-coupled divergence).
    episode_batch: tuple[int, int] | None = None
    timeout: float = 120.0
    # Check one module of a port being generated: import the modules up to it (in the
    # spec's dependency order), check their exports, and run its L1 probes.
    module: str | None = None
    examples: int | None = None  # hypothesis examples for L1 and sequences for L2
    # L3 lanes, each a reference player and a port worker (None: one per core for big runs).
    workers: int | None = None
    # Address of an `envport serve --port` process to use instead of a local worker.
    port_server: str | None = None
    # Where that server's token is (envport.serve.token), if not in ENVPORT_SERVE_TOKEN.
    port_server_token_file: Path | None = None
    # Directory of proposed cases (`*.toml`) to run beside the harness's own checks.
    cases: Path | None = None
    shrink: bool = True  # shrink L1/L2 failures to a minimal example
    # The port cannot load a state (envpool, compiled vector envs): start the reference from
    # the port's own start states instead (envport.verifiers.levels.reverse).
    reverse: bool = False
    # Fail (not only warn) when more than 1% of the states L3's reference visits lie outside
    # a field's `[state.bounds]` (envport.verifiers.coverage.bounds).
    strict_bounds: bool = False
    # Reference steps l3.explore may take (None: the spec's `[coverage] explore_steps`; 0:
    # no exploration, as a replay of its rollouts runs them as cases instead).
    explore_steps: int | None = None
    # Fail (not only report) when a check passed but did not show everything it could
    # (envport.gaps: no state reads, an ending never reached, a check that did not apply).
    strict: bool = False
    # Stop at the first check that fails (a CI gate's verdict, a mutation self-check's
    # first catch): the checks after it are not run, and the report says so.
    fail_fast: bool = False
    # The port's source reviewed before it runs (`review.static`). Off only to test the
    # sandbox's own layers with hostile code that the review would refuse first.
    static_review: bool = True
    # Levels this port already passed before this run, on the same code (a translate run's
    # module checks run L1 on every module, the last one on the whole port, before its
    # composed check runs L2 and L3): with them the run answers for the reference's rules,
    # so a branch no check reached is a gap of its verdict.
    earlier_levels: tuple[str, ...] = ()
    # Batch sizes the port's speed will be measured at (`translate --optimize`'s
    # `bench_batch_sizes`): l2.sizes steps each of them too, so no speed is reported for a
    # size the checks never stepped.
    bench_sizes: tuple[int, ...] = ()
    # Where a JAX port's compilation cache directories go (`serve/compile_cache.py`): None,
    # the cache home's; a translate run keeps its ports' in its own `cache/jax`.
    compile_cache: Path | None = None
    # Where L3's chunks run: "local" (lanes on this machine) or "ray" (tasks on a Ray
    # cluster: `address`, else $RAY_ADDRESS, else a local Ray started for the run).
    executor: str = "local"
    address: str | None = None


def check_options(options: VerifyOptions, l3_options: L3Options) -> None:
    """Refuse a combination of options before any process starts."""
    unknown = [level for level in options.levels if level not in LEVELS]
    if unknown or not options.levels:
        raise EnvportError(
            f"--levels: unknown level {unknown[0] if unknown else ''!r}; "
            f"available: {', '.join(LEVELS)}"
        )
    last = l3_options.episodes - 1
    episode = l3_options.only_episode
    if episode is not None and not 0 <= episode <= last:
        raise EnvportError(f"--episode {episode}: expected 0..{last}")
    batch = l3_options.batch
    if batch is not None and not 0 <= batch[0] <= batch[1] <= last:
        raise EnvportError(f"--episode {batch[0]}-{batch[1]}: expected A-B within 0..{last}")
    if options.reverse:
        _check_reverse(options)
    if options.port_server_token_file is not None and options.port_server is None:
        raise EnvportError("--port-server-token-file goes with --port-server ADDRESS")
    if options.executor == "ray" and options.port_server is not None:
        raise EnvportError(
            "--port-server does not go with --executor ray: each Ray worker starts the port "
            "in a sandboxed worker of its own"
        )


def _check_reverse(options: VerifyOptions) -> None:
    if "l3" not in options.levels:
        raise EnvportError(
            "--reverse-injection runs the rollout checks, which --levels must include (l3)"
        )
    for given, flag, why in (
        (options.module, "--module", "a module's L1 probes take states the port must load"),
        (options.only_episode, "--episode", "every episode starts from one batched reset"),
        (options.port_server, "--port-server", "a served port is driven through state loads"),
    ):
        if given is not None:
            raise EnvportError(f"{flag} does not go with --reverse-injection: {why}")


def reference_workers(options: VerifyOptions, l3_options: L3Options) -> int:
    if options.workers is not None:
        return options.workers
    if l3_options.only_episode is not None or l3_options.batch is not None:
        return 1
    return max(1, min(os.cpu_count() or 1, l3_options.episodes // EPISODES_PER_WORKER))
