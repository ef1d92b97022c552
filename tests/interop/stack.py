"""The other stack: neo4j-graphrag 1.22.0, run as a subprocess in ``.venv-interop``.

neo4j-graphrag needs a newer neo4j driver (>= 6.3) than graphrag-orm pins (6.1), so it
cannot be imported here. :func:`neo4j_graphrag` sends one JSON command to
``neo4j_graphrag_driver.py`` in that venv (``scripts/setup_interop.sh`` makes it) and
returns the JSON it prints; it runs against the suite's database (the same
``NEO4J_*`` settings). A failed run fails the test with the driver's stderr.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from graphrag_orm.store.connection import ConnectionSettings

REPO = Path(__file__).resolve().parents[2]
INTEROP_PYTHON = REPO / ".venv-interop" / "bin" / "python"
DRIVER = Path(__file__).with_name("neo4j_graphrag_driver.py")
TIMEOUT_SECONDS = 180

# Names a neo4j-graphrag user would give the indexes it creates (its docs' own style).
VECTOR_INDEX = "chunk_vectors"
FULLTEXT_INDEX = "chunk_fulltext"
DIMENSIONS = 256


async def neo4j_graphrag(command: dict[str, Any], settings: ConnectionSettings) -> dict[str, Any]:
    """Run one command in neo4j-graphrag's venv against ``settings``' database; its JSON reply."""
    if not INTEROP_PYTHON.is_file():
        raise AssertionError(f"{INTEROP_PYTHON} is missing: run `make interop` (scripts/setup_interop.sh makes it)")
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("NEO4J_", "PYTHON", "VIRTUAL_ENV"))
    }
    environment |= {"NEO4J_URI": settings.uri, "NEO4J_USER": settings.user, "NEO4J_PASSWORD": settings.password}
    if settings.database:
        environment["NEO4J_DATABASE"] = settings.database
    process = await asyncio.create_subprocess_exec(
        str(INTEROP_PYTHON),
        str(DRIVER),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment,
        cwd=REPO,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(json.dumps(command).encode()), TIMEOUT_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        raise AssertionError(f"neo4j-graphrag {command['command']} failed ({process.returncode}):\n{err.decode()}")
    reply: dict[str, Any] = json.loads(out.decode())
    return reply
