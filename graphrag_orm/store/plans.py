"""What EXPLAIN says of a statement: its query type, its operators, and the names it uses that
the database has never held.

The names come from the server's notices (GQL statuses ``01N50``-``01N52``), which a session
asks for with :data:`OTHER_CLASSIFICATIONS` disabled and the minimum severity ``WARNING``
(the driver has notices off). The driver logs each notice with the statement's text
(``neo4j.notifications``); while :func:`noticed` is on, those records are dropped, so no
statement text reaches a log.
"""

from __future__ import annotations

import contextvars
import logging
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import neo4j

__all__ = ["OTHER_CLASSIFICATIONS", "Plan", "UnknownName", "noticed", "plan_of"]


@dataclass(frozen=True)
class UnknownName:
    """A name a statement uses that the database has never held (the server's notice)."""

    #: ``label``, ``relationship type`` or ``property``.
    kind: str
    name: str


@dataclass(frozen=True)
class Plan:
    """What EXPLAIN says of one statement, which it does not run."""

    #: ``r`` (read only), ``rw``, ``w`` or ``s`` (schema), as the server reports it.
    query_type: str | None
    #: Every operator of the plan tree, depth first, without the ``@database`` suffix.
    operators: tuple[str, ...]
    #: The names the database has never held, in the server's order; read only in a
    #: transaction of ``read_work(..., notices=True)`` (empty otherwise).
    unknown: tuple[UnknownName, ...] = ()


#: The server's GQL status for a name the database has never held, by what it names.
_UNKNOWN_STATUSES = {"01N50": "label", "01N51": "relationship type", "01N52": "property"}
#: The first back-quoted name of a notice's description ("The label `Bikez` does not exist ...").
_QUOTED_NAME = re.compile(r"`((?:[^`]|``)+)`")
#: Everything but the notices of unknown names, which a noticed session asks for.
OTHER_CLASSIFICATIONS = tuple(item for item in neo4j.NotificationDisabledClassification if item.value != "UNRECOGNIZED")
#: Set while a noticed session works: the driver logs each notice with the statement's
#: text (``neo4j.notifications``), which the toolkit never lets reach a log.
_NOTICED: contextvars.ContextVar[bool] = contextvars.ContextVar("graphrag_orm_noticed", default=False)


class _DropNoticedRecords(logging.Filter):
    """Drops the driver's records of notices in a noticed session (they quote the statement)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _NOTICED.get()


logging.getLogger("neo4j.notifications").addFilter(_DropNoticedRecords())


def _unknown_names(summary: Any) -> tuple[UnknownName, ...]:
    found: list[UnknownName] = []
    for status in getattr(summary, "gql_status_objects", None) or ():
        kind = _UNKNOWN_STATUSES.get(str(getattr(status, "gql_status", "")))
        matched = _QUOTED_NAME.search(str(getattr(status, "status_description", "") or ""))
        if kind is not None and matched is not None:
            name = UnknownName(kind, matched.group(1).replace("``", "`"))
            if name not in found:
                found.append(name)
    return tuple(found)


def _operators(plan: Mapping[str, Any] | None) -> Iterator[str]:
    if not plan:
        return
    operator = str(plan.get("operatorType") or "")
    yield operator.split("@", 1)[0]
    for child in plan.get("children") or ():
        yield from _operators(child)


@contextmanager
def noticed(on: bool) -> Iterator[None]:
    """While ``on``, the driver's log records of notices are dropped (in this context only)."""
    token = _NOTICED.set(True) if on else None
    try:
        yield
    finally:
        if token is not None:
            _NOTICED.reset(token)


def plan_of(summary: Any) -> Plan:
    """The plan an EXPLAIN's result summary holds."""
    return Plan(summary.query_type, tuple(_operators(summary.plan)), _unknown_names(summary))
