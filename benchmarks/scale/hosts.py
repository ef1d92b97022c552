"""Simulated hosts: network namespaces joined to this machine by veth pairs, with a latency proxy to Neo4j.

Host ``k`` is the namespace ``grb-hk``, joined to the root namespace by the veth pair
``grb-hk-r`` (root side, ``10.77.k.1/30``) and ``grb-hk-n`` (inside, ``10.77.k.2/30``).
This kernel has no ``netem`` queueing discipline, so the added latency comes from
Toxiproxy (v2.5.0, built with ``go install`` into ``.benchmarks/bin`` when missing),
running in the root namespace: one proxy per host listening on ``10.77.k.1:<db port>``
and forwarding to Neo4j on ``127.0.0.1:<db port>``, with one ``latency`` toxic per
direction. Toxiproxy's latency is whole milliseconds per direction, measured from
when each chunk was read (so chunks are not delayed cumulatively, and order is kept):
a round trip of ``ms`` is split ``ms - ms // 2`` upstream and ``ms // 2`` downstream.

Run alone, it measures the proxy's own cost: the median round trip of ``RETURN 1``
through a driver session from inside a namespace through the proxy, against the same
directly on loopback, at each added latency.

    .venv/bin/python benchmarks/scale/hosts.py                      # 2 hosts, 0,1,5 ms
    .venv/bin/python benchmarks/scale/hosts.py --port 7702 --home home-workers-dev
    .venv/bin/python benchmarks/scale/hosts.py --cleanup            # leftovers of a crashed run

Everything it creates (namespaces, veths, the proxy process) is removed on exit, on
Ctrl-C and on SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import neo4j
from common import BENCH_HOME, BENCH_PORT, REPO, SCRATCH, BenchServer, print_table

from graphrag_orm.store.connection import ConnectionSettings

PREFIX = "grb-"
SUBNET = "10.77"
TOXIPROXY_MODULE = "github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0"
TOXIPROXY_BIN = SCRATCH / "bin" / "server"  # the name ``go install`` gives the command
TOXIPROXY_PID = SCRATCH / "scale" / "toxiproxy.pid"
TOXIPROXY_LOG = SCRATCH / "scale" / "toxiproxy.log"
DEFAULT_API_PORT = 8479
PYTHON = REPO / ".venv" / "bin" / "python"


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``ip ARGS`` (iproute2), output captured; raise on failure when ``check``."""
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def netns_permitted() -> str | None:
    """None when namespaces can be made here, else why not (for a skip reason)."""
    if os.geteuid() != 0:
        return "not root: network namespaces need CAP_SYS_ADMIN"
    probe = f"{PREFIX}probe-{os.getpid()}"
    made = ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"`ip netns add` is not permitted: {made.stderr.strip()}"
    ip("netns", "del", probe, check=False)
    return None


@dataclass(frozen=True)
class Host:
    """One simulated host: its namespace, its addresses, and the proxy address it reaches Neo4j by."""

    index: int
    db_port: int

    @property
    def name(self) -> str:
        return f"{PREFIX}h{self.index}"

    @property
    def root_address(self) -> str:
        return f"{SUBNET}.{self.index}.1"

    @property
    def inside_address(self) -> str:
        return f"{SUBNET}.{self.index}.2"

    @property
    def uri(self) -> str:
        """Neo4j as seen from this host: the proxy on the root side of its veth."""
        return f"bolt://{self.root_address}:{self.db_port}"

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside this host's namespace (the environment is kept)."""
        return ["ip", "netns", "exec", self.name, *argv]


def _create_host(host: Host) -> None:
    """The namespace, its veth pair with a private /30, loopback and both ends up."""
    root, inside = f"{host.name}-r", f"{host.name}-n"
    ip("netns", "add", host.name)
    ip("link", "add", root, "type", "veth", "peer", "name", inside)
    ip("link", "set", inside, "netns", host.name)
    ip("addr", "add", f"{host.root_address}/30", "dev", root)
    ip("link", "set", root, "up")
    ip("-n", host.name, "addr", "add", f"{host.inside_address}/30", "dev", inside)
    ip("-n", host.name, "link", "set", inside, "up")
    ip("-n", host.name, "link", "set", "lo", "up")


def _names(kind: Sequence[str]) -> list[str]:
    """Names of ``ip ... list``-style output that start with our prefix."""
    out = ip(*kind, check=False).stdout
    names: list[str] = []
    for line in out.splitlines():
        words = line.replace(":", " ").split()
        names.extend(w.split("@")[0] for w in words[:2] if w.startswith(PREFIX))
    return names


def leftovers() -> dict[str, list[str]]:
    """Our namespaces, veths and proxy process still present (empty lists when clean)."""
    pid = _proxy_pid()
    return {
        "namespaces": _names(("netns", "list")),
        "links": _names(("-o", "link", "show")),
        "proxy": [str(pid)] if pid is not None else [],
    }


def _proxy_pid() -> int | None:
    """The recorded proxy pid, if that process is still our Toxiproxy binary."""
    try:
        pid = int(TOXIPROXY_PID.read_text().strip())
        executable = os.readlink(f"/proc/{pid}/exe")
    except (OSError, ValueError):
        return None
    return pid if Path(executable) == TOXIPROXY_BIN.resolve() else None


def cleanup() -> dict[str, list[str]]:
    """Remove every ``grb-`` namespace and veth and our recorded proxy process; returns what was removed."""
    found = leftovers()
    for namespace in found["namespaces"]:
        ip("netns", "del", namespace, check=False)  # takes the veth pair's inside end, and so the pair
    for link in _names(("-o", "link", "show")):
        ip("link", "del", link, check=False)
    pid = _proxy_pid()
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            if _proxy_pid() is None or not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.1)
    TOXIPROXY_PID.unlink(missing_ok=True)
    return found


def ensure_toxiproxy() -> Path:
    """The Toxiproxy server binary, built with ``go install`` into ``.benchmarks/bin`` when missing."""
    if TOXIPROXY_BIN.is_file():
        return TOXIPROXY_BIN
    TOXIPROXY_BIN.parent.mkdir(parents=True, exist_ok=True)
    print(f"building Toxiproxy: go install {TOXIPROXY_MODULE}")
    env = dict(os.environ, GOBIN=str(TOXIPROXY_BIN.parent))
    subprocess.run(["go", "install", TOXIPROXY_MODULE], env=env, check=True)
    return TOXIPROXY_BIN


class Toxiproxy:
    """Our Toxiproxy process and its HTTP API on ``127.0.0.1:api_port``."""

    def __init__(self, api_port: int = DEFAULT_API_PORT) -> None:
        self.api = f"http://127.0.0.1:{api_port}"
        self.api_port = api_port
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> None:
        """Start the server in its own session and wait until its API answers."""
        binary = ensure_toxiproxy()
        TOXIPROXY_LOG.parent.mkdir(parents=True, exist_ok=True)
        with TOXIPROXY_LOG.open("ab") as log:
            self.process = subprocess.Popen(
                [str(binary), "-host", "127.0.0.1", "-port", str(self.api_port)],
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        TOXIPROXY_PID.write_text(str(self.process.pid))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.call("GET", "/proxies")
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit(f"Toxiproxy did not answer on {self.api} within {timeout:.0f} s (see {TOXIPROXY_LOG})")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        TOXIPROXY_PID.unlink(missing_ok=True)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """One API request; the decoded JSON answer (None when empty)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.api + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=5) as response:
            text = response.read()
        return json.loads(text) if text else None

    def add_proxy(self, name: str, listen: str, upstream: str) -> None:
        self.call("POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream, "enabled": True})

    def set_latency(self, name: str, round_trip_ms: int) -> None:
        """Replace the proxy's toxics by a latency toxic per direction adding up to ``round_trip_ms``."""
        for toxic in self.call("GET", f"/proxies/{name}/toxics"):
            self.call("DELETE", f"/proxies/{name}/toxics/{toxic['name']}")
        halves = {"upstream": round_trip_ms - round_trip_ms // 2, "downstream": round_trip_ms // 2}
        for stream, latency in halves.items():
            if latency:
                toxic = {"latency": latency, "jitter": 0}
                self.call(
                    "POST",
                    f"/proxies/{name}/toxics",
                    {
                        "name": f"latency-{stream}",
                        "type": "latency",
                        "stream": stream,
                        "toxicity": 1.0,
                        "attributes": toxic,
                    },
                )


class _Terminated(Exception):
    """SIGTERM turned into an exception, so ``finally`` blocks run and remove what was made."""


def raise_terminated(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM handler: raise, so the ``finally`` blocks and context exits on the way out run."""
    raise _Terminated(f"signal {signum}")


class SimulatedHosts:
    """``with SimulatedHosts(k, db_port) as hosts``: k hosts and their proxies, all removed on exit.

    Leftovers of an earlier crashed run are removed first. SIGTERM raises inside the
    block (as Ctrl-C does), so the removal runs either way.
    """

    def __init__(self, count: int, db_port: int, api_port: int = DEFAULT_API_PORT) -> None:
        if not 1 <= count <= 250:
            raise SystemExit(f"--hosts must be between 1 and 250, not {count}")
        self.hosts = [Host(index, db_port) for index in range(1, count + 1)]
        self.proxy = Toxiproxy(api_port)
        self._previous: Any = None

    def __enter__(self) -> SimulatedHosts:
        removed = cleanup()
        if any(removed.values()):
            print(f"hosts: removed leftovers of an earlier run: {removed}")
        self._previous = signal.signal(signal.SIGTERM, raise_terminated)
        try:
            self.proxy.start()
            for host in self.hosts:
                _create_host(host)
                self.proxy.add_proxy(host.name, f"{host.root_address}:{host.db_port}", f"127.0.0.1:{host.db_port}")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.proxy.stop()
        cleanup()
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
            self._previous = None

    def set_latency(self, round_trip_ms: int) -> None:
        for host in self.hosts:
            self.proxy.set_latency(host.name, round_trip_ms)


# ------------------------------------------------------------------ the proxy's own cost


def round_trips(uri: str, user: str, password: str, count: int) -> list[float]:
    """Milliseconds of ``count`` ``RETURN 1`` round trips in one session (after 20 unmeasured)."""
    with neo4j.GraphDatabase.driver(uri, auth=(user, password)) as driver, driver.session() as session:
        times = []
        for number in range(count + 20):
            began = time.perf_counter()
            session.run("RETURN 1").consume()
            if number >= 20:
                times.append((time.perf_counter() - began) * 1000)
    return times


def _probe_in(host: Host | None, settings: ConnectionSettings, count: int) -> list[float]:
    """Round trips measured by a fresh process, inside ``host``'s namespace (or here on loopback)."""
    uri = host.uri if host is not None else settings.uri
    argv = [str(PYTHON), __file__, "--probe", uri, "--count", str(count)]
    env = dict(os.environ, NEO4J_USER=settings.user, NEO4J_PASSWORD=settings.password)
    command = host.command(argv) if host is not None else argv
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    times: list[float] = json.loads(result.stdout.strip().splitlines()[-1])
    return times


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure_proxy(
    hosts: SimulatedHosts, settings: ConnectionSettings, latencies: Sequence[int], count: int, rounds: int = 3
) -> list[dict[str, Any]]:
    """The proxy's cost: median ``RETURN 1`` round trip via the proxy at each latency against loopback.

    The paths are measured in ``rounds`` interleaved rounds and pooled, so a burst of
    other work on this shared machine falls on all of them alike.
    """
    samples: dict[int | None, list[float]] = {None: [], **{latency: [] for latency in latencies}}
    for _ in range(rounds):
        samples[None].extend(_probe_in(None, settings, count))
        for latency in latencies:
            hosts.set_latency(latency)
            samples[latency].extend(_probe_in(hosts.hosts[0], settings, count))
    hosts.set_latency(0)
    base = statistics.median(samples[None])
    results = []
    for added, times in samples.items():
        path = "loopback, direct" if added is None else f"{hosts.hosts[0].name} via proxy"
        median = statistics.median(times)
        results.append(
            {
                "path": path,
                "added_ms": added or 0,
                "median_ms": median,
                "p95_ms": _percentile(times, 0.95),
                "over_direct_ms": median - base,
            }
        )
    return results


def print_proxy_table(results: Sequence[dict[str, Any]]) -> None:
    print_table(
        ["Path", "Added round trip", "Median RETURN 1", "p95", "Over direct", "Proxy's own cost"],
        [
            [
                r["path"],
                f"{r['added_ms']} ms",
                f"{r['median_ms']:.2f} ms",
                f"{r['p95_ms']:.2f} ms",
                f"{r['over_direct_ms']:.2f} ms",
                f"{r['over_direct_ms'] - r['added_ms']:.2f} ms" if r["path"] != "loopback, direct" else "",
            ]
            for r in results
        ],
    )


def main(args: argparse.Namespace) -> None:
    if args.probe:
        user, password = os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", "")
        print(json.dumps(round_trips(args.probe, user, password, args.count)))
        return
    if args.cleanup:
        print(f"removed: {cleanup()}")
        return
    reason = netns_permitted()
    if reason:
        raise SystemExit(reason)
    latencies = [int(v) for v in args.latency.split(",")]
    with BenchServer(port=args.port, home=args.home) as server:
        port = int(server.settings.uri.rsplit(":", 1)[1])
        with SimulatedHosts(args.hosts, port, args.api_port) as hosts:
            print(f"hosts: {', '.join(f'{h.name} ({h.inside_address}) -> {h.uri}' for h in hosts.hosts)}")
            results = measure_proxy(hosts, server.settings, latencies, args.count, args.rounds)
        print(f"\nRETURN 1 round trips ({args.rounds} x {args.count} per row, interleaved, 20 unmeasured each):\n")
        print_proxy_table(results)
    out = SCRATCH / "scale" / f"hosts-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(results, indent=2))
    print(f"\nwritten: {out.relative_to(REPO)}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=2, help="simulated hosts to create")
    parser.add_argument("--latency", default="0,1,5", help="added round trips to measure, in whole ms")
    parser.add_argument("--count", type=int, default=200, help="RETURN 1 round trips per path and round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds over the paths")
    parser.add_argument("--port", type=int, default=BENCH_PORT, help="the local Neo4j's bolt port")
    parser.add_argument("--home", default=BENCH_HOME, help="the local Neo4j's home under tools/neo4j")
    parser.add_argument("--api-port", type=int, default=DEFAULT_API_PORT, help="Toxiproxy's HTTP API port")
    parser.add_argument("--cleanup", action="store_true", help="remove leftovers of a crashed run, then exit")
    parser.add_argument("--probe", help=argparse.SUPPRESS)  # internal: measure round trips to this URI
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse_args())
