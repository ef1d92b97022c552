"""Cost against corpus size: one SVG from the scale benchmark's result JSONs.

Reads ``.benchmarks/scale/result-<size>-<dimensions>.json`` (written by ``run.py``; the
20k, 100k and 1m runs, and with ``--every`` the dev runs of ``--documents N`` too) and draws
four panels into ``docs/images/scale.svg``: chunks/s per size for graphrag-orm and the
floor; chunks/s per 10% slice (does ingestion slow as the indexes grow?) in the largest
run with contenders side by side, and dashed a contender's larger run alone; hybrid
retrieval p95, ours against the two raw index queries, per size; and reset seconds per
size. Needs matplotlib (the ``eval`` extra).

    .venv/bin/python benchmarks/scale/plot.py
    .venv/bin/python benchmarks/scale/plot.py --dimensions 384 --out docs/images/scale-384.svg
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import matplotlib
import matplotlib.ticker

matplotlib.use("svg")
import matplotlib.pyplot as plt
from common import REPO, SCRATCH

CONTENDERS = (("ours", "graphrag-orm"), ("floor", "floor"), ("neo4j-graphrag", "neo4j-graphrag"))


def load_results(folder: Path, dimensions: int, every: bool) -> list[dict[str, Any]]:
    """The results of ``dimensions`` at the named sizes (``every``: dev runs of ``--documents N`` too), smallest first."""
    sizes = "*" if every else "[0-9]*[km]"
    paths = folder.glob(f"result-{sizes}-{dimensions}.json")
    results = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    return sorted(results, key=lambda result: result["corpus"]["documents"])


def chunks_of(result: dict[str, Any]) -> int:
    return int(sum(result["corpus"]["slice_chunks"]))


def draw(results: list[dict[str, Any]], target: Path) -> None:
    """The four panels, sizes on a log axis, into ``target``."""
    figure, ((ingest, slices), (latency, reset)) = plt.subplots(2, 2, figsize=(11, 8))
    sizes = [chunks_of(result) for result in results]
    # Per slice: the largest run with contenders side by side (solid), and a contender's
    # larger run alone, if any (dashed): runs apart are not side by side.
    # A result's ``apart`` names contenders merged into it from a run of their own (run.py
    # writes one result per run; a contender run later alone at that size is added by hand).
    together = next(
        (r for r in reversed(results) if sum(key in r and key not in r.get("apart", {}) for key, _ in CONTENDERS) >= 2),
        results[-1],
    )
    for number, (key, label) in enumerate(CONTENDERS):
        points = [(chunks_of(r), r[key]["ingest"]["chunks_per_second"]) for r in results if key in r]
        if points:
            ingest.plot(*zip(*points, strict=True), marker="o", label=label)
        biggest = next((r for r in reversed(results) if key in r), None)
        for run, style in ((together, "-"), (biggest, "--")):
            if run is None or key not in run or (style == "--" and run is together):
                continue
            if style == "-" and key in run.get("apart", {}):
                continue
            rates = [s["chunks"] / s["seconds"] for s in run[key]["ingest"]["slices"]]
            slices.plot(
                range(10, 10 * len(rates) + 1, 10),
                rates,
                style,
                color=f"C{number}",
                marker="o",
                label=f"{label}, {run['size']}" + ("" if style == "-" else " (another run)"),
            )
    for phase, style in (("warm", "-"), ("cold", ":")):
        for who, label, colour in (("ours", "graphrag-orm", "C0"), ("floor", "two raw index queries", "C1")):
            points = [
                (chunks_of(r), r["ours"][phase][who]["p95"] * 1000) for r in results if phase in r.get("ours", {})
            ]
            if points:
                latency.plot(*zip(*points, strict=True), style, color=colour, marker="o", label=f"{label}, {phase}")
    for key, label in CONTENDERS[:2]:
        points = [(chunks_of(r), r[key]["reset"]["seconds"]) for r in results if "reset" in r.get(key, {})]
        if points:
            reset.plot(*zip(*points, strict=True), marker="o", label=label)
    for axes, title, unit in (
        (ingest, "Ingestion over the whole run", "chunks/s"),
        (slices, "Ingestion per 10% slice", "chunks/s"),
        (latency, "Hybrid retrieval p95", "ms"),
        (reset, "Reset of everything", "seconds"),
    ):
        axes.set_title(title)
        axes.set_ylabel(unit)
        axes.grid(alpha=0.3)
        if axes.get_legend_handles_labels()[0]:
            axes.legend(fontsize="small")
        if axes is not slices:
            axes.set_xscale("log")
            axes.set_xlabel("chunks in the corpus")
            axes.set_xticks(sizes, [f"{size:,}" for size in sizes])
            axes.minorticks_off()
    slices.set_xlabel("% of the corpus ingested")
    for axes in (ingest, slices, reset):
        axes.set_ylim(bottom=0)  # rates and times from zero, so the gaps read at their size
    latency.set_yscale("log")  # cold and warm differ by orders of magnitude
    latency.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    latency.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    latency.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    figure.suptitle(f"graphrag-orm at scale, one machine ({results[0]['dimensions']} dimensions)")
    figure.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target, format="svg")
    plt.close(figure)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=SCRATCH / "scale", help="folder of result-*.json")
    parser.add_argument("--dimensions", type=int, default=256)
    parser.add_argument("--every", action="store_true", help="also the dev runs (--documents N)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "scale.svg")
    args = parser.parse_args(argv)
    results = load_results(args.results, args.dimensions, args.every)
    if not results:
        raise SystemExit(f"no result-*-{args.dimensions}.json in {args.results}: run benchmarks/scale/run.py first")
    draw(results, args.out)
    print(f"plot: {args.out} from {len(results)} results ({', '.join(r['size'] for r in results)})")


if __name__ == "__main__":
    main()
