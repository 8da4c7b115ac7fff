"""Property: L3's chunks cover every planned episode exactly once, in order.

`l3.episode_indices` plans the episodes (all of a run, one replayed episode, or a replayed
batch), `chunks.chunk_size` sizes chunks for the number of lanes, and `chunks.Chunks`
hands them out to whichever lane asks first. Whatever the episode count, chunk size, lane
count and timing of the lanes, each episode is played once (a missed one would be a
divergence never looked for, a repeated one counted twice), each chunk is a run of
consecutive planned episodes, and taken in turn they are the plan. `l3.merge` then adds
the chunks' counts up to the run's.
"""

from __future__ import annotations

import itertools
import random
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from envport.verifiers.draws.hypo import keep_caches_out_of_cwd
from envport.verifiers.levels.l3.chunks import MAX_CHUNK, MIN_CHUNK, Chunks, chunk_size
from envport.verifiers.levels.l3.rollout import KEEP_DIVERGENCES, episode_indices, merge
from envport.verifiers.options import L3Options
from envport.verifiers.reporting.divergence import Divergence, LevelResult

# Hypothesis's own caches go under envport's cache, as in a verify run, not ./.hypothesis.
keep_caches_out_of_cwd()


def take_all(chunks: Chunks) -> list[list[int]]:
    taken = []
    while (chunk := chunks.take()) is not None:
        taken.append(chunk)
    return taken


def options(episodes: int, only: int | None, batch: tuple[int, int] | None) -> L3Options:
    return L3Options(episodes=episodes, steps=10, mode="free", only_episode=only, batch=batch)


plans = st.one_of(
    st.builds(lambda n: options(n, None, None), st.integers(0, 5000)),
    st.builds(lambda n, e: options(n, e, None), st.integers(0, 5000), st.integers(0, 4999)),
    st.builds(
        lambda n, a, length: options(n, None, (a, a + length)),
        st.integers(0, 5000),
        st.integers(0, 4000),
        st.integers(0, 999),
    ),
)


@settings(max_examples=300, database=None, derandomize=True, deadline=None)
@given(plan=plans, lanes=st.integers(1, 16))
def test_chunks_are_the_plan_cut_in_order(plan: L3Options, lanes: int) -> None:
    indices = episode_indices(plan)
    # As run_l3 sizes them: a replayed batch is the one chunk it was.
    size = len(indices) if plan.batch else chunk_size(len(indices), lanes)
    taken = take_all(Chunks(indices, size, lanes))
    assert [index for chunk in taken for index in chunk] == indices
    assert all(chunk for chunk in taken)
    for chunk in taken:
        assert chunk == list(range(chunk[0], chunk[0] + len(chunk)))  # consecutive
        assert len(chunk) <= size  # the port worker's free-running batch is padded to `size`
    # Chunks shrink towards the end, never below an eighth of the size (but the last).
    smallest = max(MIN_CHUNK, size // 8)
    assert all(len(chunk) >= min(smallest, size) for chunk in taken[:-1])
    if plan.batch:
        assert len(taken) == 1 and taken[0] == list(range(plan.batch[0], plan.batch[1] + 1))
    if plan.only_episode is not None:
        assert taken == [[plan.only_episode]]


@settings(max_examples=300, database=None, derandomize=True, deadline=None)
@given(episodes=st.integers(0, 10**6), lanes=st.integers(1, 64))
def test_chunk_size_stays_within_its_bounds(episodes: int, lanes: int) -> None:
    size = chunk_size(episodes, lanes)
    assert MIN_CHUNK <= size <= MAX_CHUNK
    # Enough chunks for every lane while there are episodes enough.
    if MIN_CHUNK * lanes * 4 <= episodes <= MAX_CHUNK * lanes * 4:
        assert size * lanes * 4 >= episodes


@settings(max_examples=60, database=None, derandomize=True, deadline=None)
@given(
    episodes=st.integers(0, 3000),
    lanes=st.integers(2, 8),
    stop_after=st.one_of(st.none(), st.integers(0, 20)),
)
def test_lanes_taking_at_once_never_share_or_drop_an_episode(
    episodes: int, lanes: int, stop_after: int | None
) -> None:
    """Lanes are threads: each chunk goes to exactly one of them. When a lane fails and
    sets `stop`, the others stop taking, and what was taken is still a prefix of the plan."""
    indices = list(range(episodes))
    chunks = Chunks(indices, chunk_size(episodes, lanes), lanes)
    taken: list[list[list[int]]] = [[] for _ in range(lanes)]
    counter = iter(range(10**9))
    start = threading.Barrier(lanes)

    def lane(number: int) -> None:
        start.wait()
        while (chunk := chunks.take()) is not None:
            taken[number].append(chunk)
            if stop_after is not None and next(counter) >= stop_after:
                chunks.stop.set()

    threads = [threading.Thread(target=lane, args=(n,)) for n in range(lanes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = sorted((chunk for mine in taken for chunk in mine), key=lambda c: c[0])
    flat = [index for chunk in everything for index in chunk]
    if stop_after is None:
        assert flat == indices
    else:
        assert flat == indices[: len(flat)]
    for mine in taken:  # each lane's chunks come in plan order
        firsts = [chunk[0] for chunk in mine]
        assert firsts == sorted(firsts)


@settings(max_examples=100, database=None, derandomize=True, deadline=None)
@given(
    parts=st.lists(
        st.tuples(st.integers(0, 100), st.integers(0, 10**4), st.integers(0, 100), st.booleans()),
        min_size=1,
        max_size=8,
    )
)
def test_merged_chunks_count_what_the_chunks_counted(
    parts: list[tuple[int, int, int, bool]],
) -> None:
    results = [
        LevelResult(
            level="l3",
            mode="free",
            passed=passed,
            episodes=episodes,
            steps_compared=steps,
            diverged_episodes=min(diverged, episodes),
        )
        for episodes, steps, diverged, passed in parts
    ]
    merged = merge(results)
    assert merged.episodes == sum(r.episodes for r in results)
    assert merged.steps_compared == sum(r.steps_compared for r in results)
    assert merged.diverged_episodes == sum(r.diverged_episodes for r in results)
    assert merged.passed == all(r.passed for r in results)


@settings(max_examples=100, database=None, derandomize=True, deadline=None)
@given(
    diverged=st.lists(st.integers(0, 5000), unique=True, max_size=30),
    cuts=st.lists(st.integers(0, 30), max_size=6),
    order=st.randoms(use_true_random=False),
)
def test_merged_divergences_are_the_first_by_episode_whatever_order_chunks_end(
    diverged: list[int], cuts: list[int], order: random.Random
) -> None:
    """Lanes finish chunks in any order; the report keeps the first episodes that diverged."""
    ranked = sorted(diverged)
    # Equal bounds make chunks in which nothing diverged.
    bounds = sorted([0, len(ranked), *(min(cut, len(ranked)) for cut in cuts)])
    parts = [
        LevelResult(
            level="l3",
            mode="free",
            passed=not ranked[a:b],
            diverged_episodes=b - a,
            divergences=[Divergence(level="l3", episode=e) for e in ranked[a:b][:KEEP_DIVERGENCES]],
        )
        for a, b in itertools.pairwise(bounds)
    ]
    order.shuffle(parts)
    merged = merge(parts)
    assert [d.episode for d in merged.divergences] == ranked[:KEEP_DIVERGENCES]
    assert merged.diverged_episodes == len(ranked)
    assert merged.passed == (not ranked)
