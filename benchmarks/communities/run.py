"""Community detection alone at a given number of facts: time twice, the same result, peak memory.

Usage: ``.venv/bin/python benchmarks/communities/run.py [facts]`` (default 100,000). The graph
is synthetic: things in planted groups of 200, 85% of facts inside a group, one document each.
"""

from __future__ import annotations

import random
import resource
import sys
import time

from graphrag_orm.communities import CommunityOptions, GraphFact, detect

GROUP = 200


def synthetic(facts: int, seed: int = 1) -> list[GraphFact]:
    things = max(facts // 5, GROUP)
    rng = random.Random(seed)
    found: set[GraphFact] = set()
    while len(found) < facts:
        a = rng.randrange(things)
        b = (a // GROUP) * GROUP + rng.randrange(GROUP) if rng.random() < 0.85 else rng.randrange(things)
        if a != b:
            found.add(GraphFact(f"t{a}", "RELATED_TO", f"t{b}", (f"d{a % 97}",)))
    return sorted(found)


def main(facts: int) -> None:
    graph = synthetic(facts)
    began = time.perf_counter()
    first = detect(graph, CommunityOptions())
    once = time.perf_counter() - began
    began = time.perf_counter()
    second = detect(graph, CommunityOptions())
    twice = time.perf_counter() - began
    levels = sorted({c.level for c in first.communities})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(
        f"facts={facts} detect={once:.2f}s/{twice:.2f}s same={first == second} "
        f"communities={len(first.communities)} levels={levels} "
        f"limits={[limit.name.value for limit in first.limits_reached]} peak={peak}MB"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
