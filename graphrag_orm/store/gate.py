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

Bounds on what one expression may cost the server, each with its own code:

- ``too-deep``: expressions nested deeper than ``max_depth`` (64; at most
  :data:`MAX_DEPTH`). The depth counts every open bracket, parenthesis and brace, each
  ``CASE`` until its ``END``, and, inside each of them, the operators chained since the
  last separator (``+ - * / % ^``, a property access ``.``, a subscript, ``NOT``,
  ``||``): the server's parser recurses on each, and about 200 of them overflow its
  stack (``RETURN [[[...1...]]]``, ``'a' + 'a' + ...``, ``n.a.a.a...``, ``NOT NOT ...``),
  after which it never answers. A comma, ``|``, a comparison, ``AND``, ``OR``, ``XOR``,
  ``IN`` or a clause keyword ends a chain (the server flattens those);
- ``regex-not-allowed``: the regular expression operator ``=~`` unless ``allow_regex``:
  a backtracking pattern runs in one expression for minutes, where the server's
  transaction timeout never looks;
- ``range-too-large``: a ``range()`` whose bounds are number literals and which would
  yield more than ``max_range_items`` items (100,000; at most
  :data:`MAX_RANGE_ITEMS`), and one with a bound that is neither a number literal nor
  ``size(...)``/``length(...)`` (plus or minus a number), which the gate cannot size.
  ``UNWIND range(...) AS x`` is exempt: it streams row by row, and the server's timeout
  holds between rows.

:func:`check_vector_reads` (which the sandbox calls with its vector property names)
refuses with ``vector-not-readable`` a query that names a stored vector property,
reads every property at once (``properties(n)``, ``n {.*}``) or reads one by a computed
key (``n[k]``, ``n['emb' + 'edding']``): a subscript may hold one string literal, or
number literals, parameters and arithmetic. A parameter's value that is such a name is
refused by the sandbox, which knows the parameters.

``invalid-query`` for a text that is not Cypher at all (empty, or an unterminated
string, comment or quoted name). The keywords USE, CALL, LOAD, SHOW, TERMINATE and
TRANSACTIONS are refused wherever they stand as words (not as ``n.use`` or
``{use: 1}``): a variable of such a name must be backtick-quoted. Reads nothing; pure
and deterministic. The sandbox (:mod:`graphrag_orm.store.sandbox`) then asks the
server's plan, which decides what the query reaches whatever this gate let through.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import Field

from graphrag_orm.codes import ErrorCode
from graphrag_orm.errors import QueryRefused
from graphrag_orm.store.cypher_code import Kind, Token, code_of, tokenize
from graphrag_orm.values import Options

__all__ = [
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_RANGE_ITEMS",
    "FIRST_CLAUSES",
    "FUNCTION_NAMESPACES",
    "MAX_CHARS",
    "MAX_DEPTH",
    "MAX_RANGE_ITEMS",
    "CypherGate",
    "check_vector_reads",
    "code_of",
]

DEFAULT_MAX_CHARS = 20_000
MAX_CHARS = 100_000
#: Expression depth (brackets, CASE and chained operators together); the server overflows near 200.
DEFAULT_MAX_DEPTH = 64
MAX_DEPTH = 100
#: Items a ``range()`` with literal bounds may yield (outside ``UNWIND range(...) AS x``).
DEFAULT_MAX_RANGE_ITEMS = 100_000
MAX_RANGE_ITEMS = 100_000_000
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


def _word(tokens: Sequence[Token], i: int) -> str:
    return tokens[i].word if 0 <= i < len(tokens) else ""


#: Symbols that chain an expression one level deeper (``-`` only outside a pattern's arrow).
_CHAIN_SYMBOLS = frozenset({"+", "-", "*", "/", "%", "^", "."})
#: Where a chain of operators ends: the server flattens these, or a new expression starts.
_CHAIN_ENDS = frozenset({",", "|", ":", "=", "<", ">", ";"})
_CHAIN_END_WORDS = frozenset(
    {
        "AND", "OR", "XOR", "IN", "WHERE", "WHEN", "THEN", "ELSE", "AS", "RETURN", "WITH", "MATCH",
        "OPTIONAL", "UNWIND", "ORDER", "BY", "SKIP", "LIMIT", "OFFSET", "UNION", "CALL", "DISTINCT",
        "ASC", "DESC", "ASCENDING", "DESCENDING", "YIELD", "FILTER", "LET", "SEARCH", "SCORE",
    }
)  # fmt: skip
#: Words after which ``[`` opens a list, not a subscript.
_LIST_AFTER = _CHAIN_END_WORDS | frozenset({"NOT", "CASE", "CONTAINS", "STARTS", "ENDS", "IS", "NULL"})
_OPENING = {"(": ")", "[": "]", "{": "}"}


def _is_subscript(tokens: Sequence[Token], i: int) -> bool:
    """``tokens[i]`` is a ``[`` that indexes the value before it (``l[0]``, ``f(x)[1]``, ``n['k']``)."""
    if i == 0 or not _is(tokens, i, "["):
        return False
    before = tokens[i - 1]
    if before.kind is Kind.SYMBOL:
        return before.text in (")", "]", "}")
    if before.kind is Kind.NAME:
        return before.quoted or before.word not in _LIST_AFTER
    return before.kind in (Kind.PARAMETER, Kind.STRING)


def _is_arrow(tokens: Sequence[Token], i: int) -> bool:
    """The ``-`` at ``i`` is part of a pattern's arrow (``-->``, ``<-[``, ``]->``, ``--``)."""
    return (
        any(_is(tokens, i + 1, s) for s in ("-", ">", "["))
        or any(_is(tokens, i - 1, s) for s in ("-", "<"))
        or (_is(tokens, i - 1, "]") and _is(tokens, i + 1, "("))
    )


@dataclass
class _Frame:
    closing: str
    chain: int = 0


def _check_depth(tokens: Sequence[Token], max_depth: int) -> None:
    """Refuse ``too-deep`` once open brackets, CASEs and chained operators pass ``max_depth``."""
    frames: list[_Frame] = [_Frame("")]
    depth = 0
    for i, token in enumerate(tokens):
        text, word = token.text if token.kind is Kind.SYMBOL else "", token.word
        chained = False
        if text in _OPENING:
            if _is_subscript(tokens, i):
                frames[-1].chain += 1
                depth += 1
            frames.append(_Frame(_OPENING[text]))
            depth += 1
        elif word == "CASE":
            frames.append(_Frame("END"))
            depth += 1
        elif (text and text == frames[-1].closing) or (word == "END" and frames[-1].closing == "END"):
            if len(frames) > 1:
                depth -= 1 + frames.pop().chain
            continue
        elif text in _CHAIN_SYMBOLS and not (text == "-" and _is_arrow(tokens, i)):
            chained = True
        elif text == "|" and _is(tokens, i + 1, "|"):
            chained = True  # ``||``, string and list concatenation
        elif text == "|" and _is(tokens, i - 1, "|"):
            pass  # the second half of ``||``
        elif word == "NOT":
            chained = True
        elif text in _CHAIN_ENDS or word in _CHAIN_END_WORDS:
            depth -= frames[-1].chain
            frames[-1].chain = 0
        if chained:
            frames[-1].chain += 1
            depth += 1
        if depth > max_depth:
            raise QueryRefused(
                ErrorCode.TOO_DEEP,
                f"the query nests or chains expressions deeper than {max_depth} (brackets, CASE and operators)",
            )


def _check_regex(tokens: Sequence[Token]) -> None:
    for i in range(len(tokens) - 1):
        if _is(tokens, i, "=") and _is(tokens, i + 1, "~"):
            raise QueryRefused(
                ErrorCode.REGEX_NOT_ALLOWED,
                "the regular expression operator =~ is not allowed: one match can run past every timeout",
            )


def _arguments(tokens: Sequence[Token], open_at: int, close_at: int) -> list[list[Token]]:
    """The arguments of the call whose ``(`` is at ``open_at``, split at top-level commas."""
    arguments: list[list[Token]] = [[]]
    depth = 0
    for j in range(open_at + 1, close_at):
        token = tokens[j]
        if token.kind is Kind.SYMBOL and token.text in _OPENING:
            depth += 1
        elif token.kind is Kind.SYMBOL and token.text in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and _is(tokens, j, ","):
            arguments.append([])
            continue
        arguments[-1].append(token)
    return arguments


def _literal(argument: Sequence[Token]) -> int | None:
    """An integer literal argument (``7``, ``-3``, ``0x1F``), or None."""
    sign = 1
    if len(argument) == 2 and argument[0].kind is Kind.SYMBOL and argument[0].text in "+-":
        sign = -1 if argument[0].text == "-" else 1
        argument = argument[1:]
    if len(argument) != 1 or argument[0].kind is not Kind.NUMBER:
        return None
    try:
        return sign * int(argument[0].text.replace("_", ""), 0)
    except ValueError:
        return None


def _sized(argument: Sequence[Token]) -> bool:
    """``size(...)`` or ``length(...)``, plus or minus a number literal: a bound the list already has."""
    if len(argument) < 3 or argument[0].word not in ("SIZE", "LENGTH") or not _is(argument, 1, "("):
        return False
    end = _closing(argument, 1)
    rest = argument[end + 1 :] if end > 0 else [argument[0]]
    return not rest or (len(rest) == 2 and rest[0].text in "+-" and rest[1].kind is Kind.NUMBER)


def _check_range(tokens: Sequence[Token], i: int, end: int, max_items: int) -> None:
    """The ``range`` call at ``i`` (its ``(`` at ``i + 1``, its ``)`` at ``end``) yields at most
    ``max_items``, or is streamed."""
    if end < 0:
        return  # unbalanced: the server refuses it as a syntax error
    if _word(tokens, i - 1) == "UNWIND" and _word(tokens, end + 1) == "AS":
        return  # streamed row by row: the server's timeout holds between rows
    arguments = _arguments(tokens, i + 1, end)
    values = [_literal(argument) for argument in arguments]
    if not all(value is not None or _sized(argument) for value, argument in zip(values, arguments, strict=True)):
        raise QueryRefused(
            ErrorCode.RANGE_TOO_LARGE,
            "a range() bound must be a number literal or size(...)/length(...), so its length is known",
        )
    if len(values) < 2 or values[0] is None or values[1] is None:
        return
    step = values[2] if len(values) > 2 and values[2] else 1
    items = max(0, (values[1] - values[0]) // step + 1)
    if items > max_items:
        raise QueryRefused(
            ErrorCode.RANGE_TOO_LARGE, f"a range() of {items:,} items is over the bound of {max_items:,}"
        )


def _vector_refused(message: str) -> QueryRefused:
    return QueryRefused(ErrorCode.VECTOR_NOT_READABLE, message)


#: What a subscript may hold: it can never name a property then.
_INDEX_SYMBOLS = frozenset({"+", "-", "*", "/", "%", "(", ")", ".."})


def check_vector_reads(cypher: str, names: Iterable[str]) -> None:
    """Refuse (``vector-not-readable``) a query that could read a stored vector property.

    ``names`` are the vector property names (every embedding set's, staged ones
    included). Refused: any of them as a name (bare, backtick-quoted, a property, a map
    key, a projection's ``.name``) or a string literal (``n['embedding']``), any
    ``properties(...)`` call or ``{.*}`` projection, and a subscript holding anything but
    one string literal, or number literals, parameters and arithmetic (``n[k]``,
    ``n['emb' + 'edding']``, ``n[toLower('EMBEDDING')]``).
    """
    vectors = frozenset(names)
    tokens = tokenize(cypher)
    pairs = _pairs(tokens)
    for i, token in enumerate(tokens):
        if token.kind is Kind.NAME and token.text in vectors:
            raise _vector_refused("the query names a stored vector property; vectors are not readable")
        if token.kind is Kind.STRING and token.value in vectors:
            raise _vector_refused(
                "the query holds the name of a stored vector property as a string; vectors are not readable"
            )
        if token.word == "PROPERTIES" and _is(tokens, i + 1, "(") and not _is(tokens, i - 1, "."):
            raise _vector_refused("properties(...) is not allowed: it would return stored vectors")
        if _is(tokens, i, ".") and _is(tokens, i + 1, "*"):
            raise _vector_refused("a {.*} projection is not allowed: it would return stored vectors")
        if _is_subscript(tokens, i):
            inside = tokens[i + 1 : pairs.get(i, len(tokens))]
            if len(inside) == 1 and inside[0].kind is Kind.STRING:
                continue  # one literal key, not a vector's (checked above)
            if not all(
                t.kind in (Kind.NUMBER, Kind.PARAMETER) or (t.kind is Kind.SYMBOL and t.text in _INDEX_SYMBOLS)
                for t in inside
            ):
                raise _vector_refused(
                    "a subscript may hold a string, numbers and parameters only: a computed key could read a vector"
                )


def _pairs(tokens: Sequence[Token]) -> dict[int, int]:
    """Each opening bracket's index to its closing one's (in one pass; an unclosed one is left out)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for j, token in enumerate(tokens):
        if token.kind is not Kind.SYMBOL:
            continue
        if token.text in _OPENING:
            stack.append(j)
        elif token.text in (")", "]", "}") and stack:
            pairs[stack.pop()] = j
    return pairs


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
    #: Expression depth: brackets, CASE and chained operators together (``too-deep``).
    max_depth: int = Field(DEFAULT_MAX_DEPTH, ge=1, le=MAX_DEPTH)
    #: Whether ``=~`` may be used (``regex-not-allowed``); only the sandbox's deadline then stops a slow match.
    allow_regex: bool = False
    #: Items a ``range()`` with literal bounds may yield (``range-too-large``).
    max_range_items: int = Field(DEFAULT_MAX_RANGE_ITEMS, ge=1, le=MAX_RANGE_ITEMS)

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
        _check_depth(tokens, self.max_depth)
        if not self.allow_regex:
            _check_regex(tokens)
        start = 0
        if tokens[0].word == "CYPHER":
            if len(tokens) < 2 or tokens[1].kind is not Kind.NUMBER or tokens[1].text not in _VERSIONS:
                raise _refused("only CYPHER 5 or CYPHER 25 may precede the query (no other options)")
            start = 2
        _first_clause(tokens, start, "the query")
        pairs = _pairs(tokens)
        for i in range(start, len(tokens)):
            if _is(tokens, i, "("):
                _function(tokens, i)
                if i > 0 and tokens[i - 1].word == "RANGE" and not _is(tokens, i - 2, "."):
                    _check_range(tokens, i - 1, pairs.get(i, -1), self.max_range_items)
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
