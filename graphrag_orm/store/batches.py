"""Batched UNWIND statements rendered from the model classes' declarations.

Services never spell a property name the model already knows: a :class:`NodeWrites`
reads a neomodel class's properties (``db_property``, ``deflate``) and label, and
renders the statements that write many rows at once; :class:`EdgeWrites` does the
same for a relationship declared on a class. Rows carry stored (camelCase) names.

Labels, types and keys come from classes whose names the layout validated as plain
identifiers, so they are placed in query text; every value is a parameter.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from neomodel import ArrayProperty, AsyncStructuredNode, AsyncStructuredRel, FloatProperty
from neomodel.properties import Property

from graphrag_orm.layout import validate_identifier
from graphrag_orm.tenancy import TENANT_PARAMETER, TENANT_PROPERTY

__all__ = ["EdgeWrites", "NodeWrites"]


def _stored_properties(cls: type[Any]) -> dict[str, tuple[str, Property[Any]]]:
    return {
        attribute: (prop.get_db_property_name(attribute), prop)
        for attribute, prop in cls.defined_properties(aliases=False, rels=False).items()
    }


def parameter_name(name: str) -> str:
    """``name`` if it is a plain identifier, to follow ``$`` in a statement (the toolkit's own names)."""
    return validate_identifier(name, "statement parameter")


def _deflate(prop: Property[Any], value: Any) -> Any:
    if value is None:
        return None
    if isinstance(prop, ArrayProperty) and isinstance(prop.base_property, FloatProperty):
        # Vectors are validated (finite, float32 range, dimensions) before any write;
        # deflating each coordinate through neomodel would cost one call per float.
        return value if isinstance(value, list) else list(value)
    return prop.deflate(value)


@dataclass(frozen=True)
class NodeWrites:
    """Rows and statements for one node class."""

    cls: type[AsyncStructuredNode]

    @functools.cached_property
    def label(self) -> str:
        return str(self.cls.__label__)

    @functools.cached_property
    def properties(self) -> dict[str, tuple[str, Property[Any]]]:
        return _stored_properties(self.cls)

    @functools.cached_property
    def key(self) -> str:
        """The stored name of the class's key (its ``unique_index`` property)."""
        keys = [db for db, prop in self.properties.values() if prop.unique_index]
        if len(keys) != 1:
            raise TypeError(f"{self.cls.__name__} must declare exactly one unique_index key, found {keys}")
        return keys[0]

    def stored(self, attribute: str) -> str:
        """The stored name of ``attribute`` (raises KeyError for an undeclared one)."""
        return self.properties[attribute][0]

    def row(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """One row: every declared property by its stored name, deflated; unknown names refused.

        Properties not given are written as null, so ``SET n += row`` removes what a
        previous version had and this one does not.
        """
        unknown = set(values) - set(self.properties)
        if unknown:
            raise KeyError(f"{self.cls.__name__} declares no properties {sorted(unknown)}")
        row: dict[str, Any] = {}
        for attribute, (db_name, prop) in self.properties.items():
            value = values.get(attribute)
            if value is None and prop.required:
                raise ValueError(f"{self.cls.__name__}.{attribute} is required")
            row[db_name] = _deflate(prop, value)
        return row

    def rows(self, records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [self.row(record) for record in records]

    def create_statement(self, rows: str = "rows", *, tenant: bool = False) -> str:
        """Create one node per row (the key's uniqueness constraint refuses duplicates).

        ``rows`` names the list parameter (every statement here takes one: ``$rows`` by default);
        with ``tenant`` each node is stamped with the ``$tenant`` parameter (a tenanted graph).
        """
        return f"UNWIND ${parameter_name(rows)} AS row CREATE (n:{self.label}) SET n = row{_stamp('n', tenant)}"

    def create_linked_statement(self, edge: EdgeWrites, rows: str = "rows", *, tenant: bool = False) -> str:
        """Create one node per row and its ``edge`` to the node found by key, in one statement.

        Rows are ``{"props": <row>, "target": <key>, "edge": <edge props>}``; the edge is
        declared on this class, so it is stored from the new node to its target. With
        ``tenant`` the node is stamped with ``$tenant`` and its target must be the tenant's.
        """
        target = NodeWrites(edge.target)
        return (
            f"UNWIND ${parameter_name(rows)} AS row CREATE (n:{self.label}) SET n = row.props{_stamp('n', tenant)} "
            "WITH n, row "
            f"MATCH (t:{target.label} {{{target.key}: row.target{_owned(tenant)}}}) "
            f"CREATE (n)-[r:{edge.relationship_type}]->(t) SET r = row.edge"
        )

    def upsert_statement(self, rows: str = "rows", *, tenant: bool = False) -> str:
        """Create or update one node per row by key; nulls remove properties. With ``tenant``
        the key is the tenant's (``$tenant`` is part of the merged pattern)."""
        return (
            f"UNWIND ${parameter_name(rows)} AS row "
            f"MERGE (n:{self.label} {{{self.key}: row.{self.key}{_owned(tenant)}}}) SET n += row"
        )

    def delete_statement(self, by: str) -> str:
        """Delete nodes whose stored ``by`` property is in ``$keys`` (their edges must be gone first)."""
        return f"MATCH (n:{self.label}) WHERE n.{self.stored_or_same(by)} IN $keys DELETE n RETURN count(n)"

    def stored_or_same(self, name: str) -> str:
        return self.properties[name][0] if name in self.properties else name


@dataclass(frozen=True)
class EdgeWrites:
    """Rows and statements for a relationship declared on ``source`` as ``attribute``."""

    source: type[AsyncStructuredNode]
    attribute: str

    @functools.cached_property
    def _definition(self) -> dict[str, Any]:
        definition: dict[str, Any] = getattr(self.source, self.attribute).definition
        return definition

    @functools.cached_property
    def relationship_type(self) -> str:
        return str(self._definition["relation_type"])

    @functools.cached_property
    def target(self) -> type[AsyncStructuredNode]:
        target: type[AsyncStructuredNode] = getattr(self.source, self.attribute)._raw_class
        return target

    @functools.cached_property
    def model(self) -> type[AsyncStructuredRel]:
        model: type[AsyncStructuredRel] = self._definition["model"]
        return model

    @functools.cached_property
    def properties(self) -> dict[str, tuple[str, Property[Any]]]:
        return _stored_properties(self.model)

    def row(self, source_key: str, target_key: str, values: Mapping[str, Any]) -> dict[str, Any]:
        props = {db: _deflate(prop, values.get(attr)) for attr, (db, prop) in self.properties.items()}
        return {"source": source_key, "target": target_key, "props": props}

    def create_statement(self, rows: str = "rows", *, tenant: bool = False) -> str:
        """Create one edge per row between nodes found by key, stored source to target; with
        ``tenant``, between the tenant's nodes only."""
        source = NodeWrites(self.source)
        target = NodeWrites(self.target)
        return (
            f"UNWIND ${parameter_name(rows)} AS row "
            f"MATCH (a:{source.label} {{{source.key}: row.source{_owned(tenant)}}}) "
            f"MATCH (b:{target.label} {{{target.key}: row.target{_owned(tenant)}}}) "
            f"CREATE (a)-[r:{self.relationship_type}]->(b) SET r = row.props"
        )

    def props(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The edge's own properties by stored name, deflated."""
        return {db: _deflate(prop, values.get(attr)) for attr, (db, prop) in self.properties.items()}


def _stamp(variable: str, tenant: bool) -> str:
    """``, n.tenant = $tenant`` for a tenanted write, else nothing."""
    return f", {variable}.{TENANT_PROPERTY} = ${TENANT_PARAMETER}" if tenant else ""


def _owned(tenant: bool) -> str:
    """``, tenant: $tenant`` inside a node pattern for a tenanted write, else nothing."""
    return f", {TENANT_PROPERTY}: ${TENANT_PARAMETER}" if tenant else ""
