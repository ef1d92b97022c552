"""Citation location throughput: ``locate`` on 2 KiB chunks of prose, against plain ``str.find``.

Run from the repository root::

    .venv/bin/python benchmarks/citations/run.py [--iterations N] [--repeats R] [--seed S]

Everything is generated from the seed, so two runs measure the same work. It is pure
CPU: no database, no model. Two regimes are timed, because ``locate`` caches each
chunk's normalised text (an LRU keyed by the text):

- ``cold``: 1,024 distinct chunks visited round-robin, more than the cache holds, so
  every call normalises its chunk from scratch;
- ``cold, double-spaced``: the same with two spaces between sentences, which takes
  normalisation's second pass (runs of spaces alone);
- ``warm``: 64 chunks, so every call after the first round finds its chunk cached,
  as when one answer's citations are checked against the same few evidence items.

The baseline is ``text.find(exact)`` on the same chunks, where ``exact`` is the
stored text each quote was made from: it forgives nothing, builds no span and makes
no citation, and is shown only for scale.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from graphrag_orm.citations import locate
from graphrag_orm.evidence import EvidenceItem

CHUNK_BYTES = 2048
COLD_CHUNKS = 1024
WARM_CHUNKS = 64

_WORDS = (  # noqa: SIM905 (one line of prose reads better than a column of words)
    "the a of and to in was it that she he said her his with for as on at but not rabbit garden "
    "queen door little time way thought voice house river long ever never again very quite "
    "nothing anything began looked moment curious wonder café naïve Grüße façade über rôle"
).split(" ")
_TYPOGRAPHY = {"“": '"', "”": '"', "’": "'", "‘": "'", "—": "-", "–": "-"}


@dataclass(frozen=True)
class Case:
    item: EvidenceItem
    quote: str
    exact: str  # the stored words the quote was made from: the baseline's quote


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 16))]
    if rng.random() < 0.3:
        at = rng.randrange(len(words))
        words[at] = f"_{words[at]}_"
    if rng.random() < 0.3:
        at = rng.randrange(1, len(words))
        words[at] = f"— {words[at]}"
    if rng.random() < 0.2:
        words[-1] = words[-1] + "’s"
    text = " ".join(words)
    text = text[0].upper() + text[1:] + "."
    if rng.random() < 0.35:
        text = f"“{text}”"
    return text


def _chunk(rng: random.Random, gap: str) -> str:
    """Sentences, ``gap`` or a paragraph apart, up to CHUNK_BYTES of UTF-8."""
    text = _sentence(rng)
    while True:
        separator = "\n\n" if rng.random() < 0.15 else gap
        longer = text + separator + _sentence(rng)
        if len(longer.encode()) > CHUNK_BYTES:
            return text
        text = longer


def _loosen(exact: str, rng: random.Random) -> str:
    """The forgiven differences a model makes: typography, whitespace, dropped marks."""
    quote = "".join(_TYPOGRAPHY.get(char, char) for char in exact)
    quote = quote.replace("_", "").replace("\n\n", " ")
    if rng.random() < 0.5:
        quote = quote.replace(" ", "  ", 1)
    return quote


def _cases(chunks: int, rng: random.Random, gap: str = " ") -> list[Case]:
    cases: list[Case] = []
    for number in range(chunks):
        text = _chunk(rng, gap)
        item = EvidenceItem(
            chunk_id=f"chunk-{number}",
            document_id="doc",
            source_uri="text:bench",
            text=text,
            start_byte=number * CHUNK_BYTES,
            end_byte=number * CHUNK_BYTES + len(text.encode()),
            score=1.0,
        )
        words = text.split(" ")
        begin = rng.randrange(len(words) - 24)
        exact = " ".join(words[begin : begin + rng.randint(8, 20)])
        kind = number % 4
        if kind == 0:
            quote = exact
        elif kind == 1:
            quote = _loosen(exact, rng)
        elif kind == 2:
            pieces = exact.split(" ")
            quote = _loosen(" ".join(pieces[:4]) + " ... " + " ".join(pieces[-3:]), rng)
        else:  # a miss: one letter changed to one the chunk's alphabet never uses
            at = next(i for i, char in enumerate(exact) if char.isalpha())
            quote = exact[:at] + "Z" + exact[at + 1 :]
        cases.append(Case(item, quote, exact))
    return cases


def _rate(calls: int, body: Callable[[], None], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        body()
        best = min(best, time.perf_counter() - started)
    return calls / best


def _locate_all(cases: Sequence[Case], iterations: int) -> Callable[[], None]:
    def body() -> None:
        count = len(cases)
        for index in range(iterations):
            case = cases[index % count]
            locate(case.item, case.quote)

    return body


def _find_all(cases: Sequence[Case], iterations: int) -> Callable[[], None]:
    def body() -> None:
        count = len(cases)
        for index in range(iterations):
            case = cases[index % count]
            case.item.text.find(case.exact)

    return body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--iterations", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=52)
    args = parser.parse_args()

    cold = _cases(COLD_CHUNKS, random.Random(args.seed))
    warm = cold[:WARM_CHUNKS]
    double_spaced = _cases(COLD_CHUNKS, random.Random(args.seed), gap="  ")
    located = sum(locate(case.item, case.quote) is not None for case in cold)
    exact_hits = sum(case.item.text.find(case.quote) >= 0 for case in cold)
    mean_bytes = sum(len(case.item.text.encode()) for case in cold) / len(cold)

    print(f"Python {platform.python_version()} ({platform.python_implementation()}), {platform.machine()}")
    print(
        f"{len(cold)} chunks, mean {mean_bytes:.0f} bytes; quotes: exact, loosened, one elision, miss "
        f"(one each in four); seed {args.seed}"
    )
    print(f"quotes located: {located}/{len(cold)} by locate, {exact_hits}/{len(cold)} by plain str.find")
    baseline = _rate(args.iterations, _find_all(cold, args.iterations), args.repeats)
    print(f"baseline, str.find:          {baseline:>9,.0f} per second")
    for name, cases in (("cold", cold), ("cold, double-spaced", double_spaced), ("warm", warm)):
        rate = _rate(args.iterations, _locate_all(cases, args.iterations), args.repeats)
        print(
            f"locate, {name + ':':<20} {rate:>9,.0f} locations per second ({baseline / rate:.1f}x the time of str.find)"
        )
    print(f"{args.iterations:,} calls per measurement, best of {args.repeats}")


if __name__ == "__main__":
    main()
