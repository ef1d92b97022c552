"""The text gate on Cypher a caller or a model supplies (the first of the sandbox's gates).

The gate reads the query's *code*: its tokens, with comments blanked, string literals
emptied and quoted names unquoted, so a comment cannot hide a keyword (``CALL/**/db.x()``,
``LOAD // x`` then ``CSV`` on the next line) and a string cannot trip one
(``WHERE d.title = 'LOAD CSV'`` is refused nothing). A backtick-quoted name is a name,
never a keyword, but its parts still name a function: APOC's namespace quoted in
backticks is still APOC's.

Refused with ``not-allowed`` (:class:`~graphrag_orm.errors.QueryRefused`):

- a query over ``max_chars`` characters;
- more than one statement;
- a first clause other than MATCH, OPTIONAL MATCH, WITH, UNWIND, RETURN or a CALL
  subquery, after an optional ``CYPHER 5`` or ``CYPHER 25``; the same for each part
  after UNION and for each CALL, EXISTS, COUNT or COLLECT subquery's body, so CREATE,
  EXPLAIN, PROFILE and every administration command are refused;
- SHOW and TERMINATE commands (another session's queries and parameters, or its end);
- LOAD CSV, which reads files and URLs from the database server;
- a procedure call (``CALL name``; ``CALL { }`` and ``CALL (x) { }`` subqueries are fine);
- a function outside Neo4j's own namespaces (:data:`FUNCTION_NAMESPACES`): a plugin's
  function, such as APOC's ``apoc.cypher.*``, can run a string as Cypher;
- USE and IN TRANSACTIONS.

``invalid-query`` for a text that is not Cypher at all (empty, or an unterminated
string, comment or quoted name). The keywords USE, CALL, LOAD, SHOW, TERMINATE and
TRANSACTIONS are refused wherever they stand as words (not as ``n.use`` or
``{use: 1}``): a variable of such a name must be backtick-quoted. Reads nothing; pure
and deterministic. The sandbox (:mod:`graphrag_orm.store.sandbox`) then asks the
server's plan, which decides what the query reaches whatever this gate let through.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import QueryRefused
from graphrag_orm.store.cypher_code import Kind, Token, code_of, tokenize
from graphrag_orm.values import Options

__all__ = ["DEFAULT_MAX_CHARS", "FIRST_CLAUSES", "FUNCTION_NAMESPACES", "MAX_CHARS", "CypherGate", "code_of"]

DEFAULT_MAX_CHARS = 20_000
MAX_CHARS = 100_000
#: Namespaces of Neo4j's own functions; a dotted function elsewhere (a plugin's) is refused.
FUNCTION_NAMESPACES = frozenset(
    {"date", "datetime", "localdatetime", "localtime", "time", "duration", "point", "vector.similarity", "coll"}
)
FIRST_CLAUSES = ("MATCH", "OPTIONAL MATCH", "WITH", "UNWIND", "RETURN", "CALL { }")
_FIRST_WORDS = frozenset({"MATCH", "WITH", "UNWIND", "RETURN"})
_VERSIONS = frozenset({"5", "25"})


def _invalid(message: str) -> QueryRefused:
    return QueryRefused(ErrorCode.INVALID_QUERY, message)


def _refused(message: str) -> QueryRefused:
    return QueryRefused(ErrorCode.NOT_ALLOWED, message)


def _is(tokens: Sequence[Token], i: int, symbol: str) -> bool:
    return 0 <= i < len(tokens) and tokens[i].kind is Kind.SYMBOL and tokens[i].text == symbol


def _keyword(tokens: Sequence[Token], i: int) -> str:
    """``tokens[i]``'s keyword where it stands as a word: not a property (``n.use``, ``use.id``),
    a label or a map key."""
    word = tokens[i].word
    if not word or any(_is(tokens, j, symbol) for j in (i - 1, i + 1) for symbol in (".", ":")):
        return ""
    return word


def _closing(tokens: Sequence[Token], i: int) -> int:
    """The index of the ``)`` matching the ``(`` at ``i``, or -1."""
    depth = 0
    for j in range(i, len(tokens)):
        if _is(tokens, j, "("):
            depth += 1
        elif _is(tokens, j, ")"):
            depth -= 1
            if depth == 0:
                return j
    return -1


def _shown(token: Token) -> str:
    text = token.code()
    return text if len(text) <= 40 else text[:40] + "..."


def _first_clause(tokens: Sequence[Token], i: int, where: str) -> None:
    """The clause at ``i`` may start ``where``: MATCH, OPTIONAL MATCH, WITH, UNWIND, RETURN or a CALL subquery."""
    if i >= len(tokens):
        raise _refused(f"{where} has no clause")
    word, k = tokens[i].word, i
    if word == "OPTIONAL":  # OPTIONAL MATCH, OPTIONAL CALL { }
        k = i + 1
        word = tokens[k].word if k < len(tokens) else ""
        if word == "MATCH":
            return
    elif word in _FIRST_WORDS:
        return
    if word == "CALL" and (_is(tokens, k + 1, "{") or _is(tokens, k + 1, "(")):
        return  # the subquery's body is checked where the CALL is met
    raise _refused(f"{where} starts with {_shown(tokens[i])}; only {', '.join(FIRST_CLAUSES)} may start it")


def _call(tokens: Sequence[Token], i: int) -> None:
    """CALL at ``i``: a subquery (its body checked), never a procedure."""
    if _is(tokens, i + 1, "{"):
        _first_clause(tokens, i + 2, "a CALL subquery")
        return
    if _is(tokens, i + 1, "("):
        end = _closing(tokens, i + 1)
        if end > 0 and _is(tokens, end + 1, "{"):
            _first_clause(tokens, end + 2, "a CALL subquery")
            return
    raise _refused("a procedure call (CALL name) is not allowed; only CALL { } subqueries are")


def _function(tokens: Sequence[Token], i: int) -> None:
    """The name before the ``(`` at ``i``, when it is dotted, must be in Neo4j's own namespaces."""
    parts: list[str] = []
    j = i - 1
    while j >= 0 and tokens[j].kind is Kind.NAME:
        parts.append(tokens[j].text)
        if _is(tokens, j - 1, ".") and j >= 2 and tokens[j - 2].kind is Kind.NAME:
            j -= 2
            continue
        break
    if not parts:
        return
    name = ".".join(reversed(parts))
    if _is(tokens, j - 1, "."):
        raise _refused(f"a function called on a value ({_shown(tokens[j])}) is not allowed")
    if "." not in name:
        return
    namespace = name.rsplit(".", 1)[0]
    if namespace not in FUNCTION_NAMESPACES:
        shown = name if len(name) <= 60 else name[:60] + "..."
        raise _refused(
            f"the function {shown} is outside Neo4j's own namespaces ({', '.join(sorted(FUNCTION_NAMESPACES))})"
        )


class CypherGate(Options):
    """The text gate; :meth:`check` refuses what the module's docstring lists, or returns."""

    max_chars: int = Field(DEFAULT_MAX_CHARS, ge=1, le=MAX_CHARS)

    def check(self, cypher: str) -> None:
        """Return when ``cypher`` passes the text gate; otherwise raise :class:`QueryRefused`."""
        if len(cypher) > self.max_chars:
            raise _refused(f"the query has {len(cypher):,} characters; the bound is {self.max_chars:,}")
        tokens = tokenize(cypher)
        if tokens and _is(tokens, len(tokens) - 1, ";"):
            tokens = tokens[:-1]
        if not tokens:
            raise _invalid("the query is empty")
        if any(_is(tokens, i, ";") for i in range(len(tokens))):
            raise _refused("more than one statement is not allowed")
        start = 0
        if tokens[0].word == "CYPHER":
            if len(tokens) < 2 or tokens[1].kind is not Kind.NUMBER or tokens[1].text not in _VERSIONS:
                raise _refused("only CYPHER 5 or CYPHER 25 may precede the query (no other options)")
            start = 2
        _first_clause(tokens, start, "the query")
        for i in range(start, len(tokens)):
            if _is(tokens, i, "("):
                _function(tokens, i)
                continue
            # LOAD CSV wherever the two words meet, not only where LOAD stands as a keyword.
            if tokens[i].word == "LOAD" and i + 1 < len(tokens) and tokens[i + 1].word == "CSV":
                raise _refused("LOAD CSV is not allowed: it reads files and URLs from the database server")
            word = _keyword(tokens, i)
            if word == "CALL":
                _call(tokens, i)
            elif word in ("EXISTS", "COUNT", "COLLECT") and _is(tokens, i + 1, "{"):
                # A pattern (``(a)-->(b)``, ``p = (a)-->(b)``) or a query.
                pattern = _is(tokens, i + 2, "(") or (
                    i + 2 < len(tokens) and tokens[i + 2].kind is Kind.NAME and _is(tokens, i + 3, "=")
                )
                if not pattern:
                    _first_clause(tokens, i + 2, f"a {word} subquery")
            elif word == "UNION":
                after = i + 2 if i + 1 < len(tokens) and tokens[i + 1].word in ("ALL", "DISTINCT") else i + 1
                _first_clause(tokens, after, "a part after UNION")
            elif word in ("SHOW", "TERMINATE"):
                raise _refused(f"{word} commands are not allowed")
            elif word == "USE":
                raise _refused("USE is not allowed: the query reads the database it is given")
            elif word == "TRANSACTIONS":
                raise _refused("IN TRANSACTIONS and transaction commands are not allowed")
