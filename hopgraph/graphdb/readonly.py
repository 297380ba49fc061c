"""Read-only Cypher for exploration: reject anything that could write, before it runs.

The check never relies on the database refusing a write (ArcadeDB does not enforce READ mode, nor
run every procedure), so the statement is lexed as the Cypher grammar lexes it, left to right:

* a string literal is ``'…'`` or ``"…"``, a backslash escaping the next character;
* a backticked name is ```…``` (a doubled backtick inside stands for one);
* a block comment is ``/* … */`` (not nested);
* a line comment is ``//`` up to the first line terminator: ``\\n``, ``\\r`` (so ``\\r\\n``), U+2028,
  U+2029 or U+0085. Neo4j's lexer ends it at ``\\r`` or ``\\n`` only; ending it at the earliest
  terminator any engine might use means the guard checks at least the code every engine runs.

Comments, strings and backticked names are blanked out (an unclosed one is not, and its words are
checked); then every remaining word is checked against the clauses that write (``WRITE_WORDS``),
``CALL { … } IN TRANSACTIONS`` is refused, and every procedure (``CALL x.y``) and every function with a
namespace (``x.y(…)``) must be on the read-only allow-list (``READ_NAMES``, ``READ_NAMESPACES``).
Names are compared with backticks and spaces removed, in lower case (``CALL `apoc`.`create`.node``
is ``apoc.create.node``). Functions without a namespace are the engine's built-ins, which do not
write. The check is deliberately conservative: a map key or alias spelled like a write clause
(``{set: 1}``) is refused too; backtick it to use it.
"""

from __future__ import annotations

import re

from hopgraph.core.errors import BadInputError

WRITE_WORDS = frozenset({
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "NODETACH", "REMOVE", "DROP", "FOREACH", "LOAD",
    "ALTER", "RENAME", "GRANT", "DENY", "REVOKE", "START", "STOP", "TERMINATE", "USE", "INSERT",
    "FINISH", "ENABLE", "DEALLOCATE", "REALLOCATE", "CONCURRENT",
})
#: procedures and functions allowed by their exact name (lower case)
READ_NAMES = frozenset({
    "db.labels", "db.relationshiptypes", "db.propertykeys", "db.indexes", "db.constraints", "db.info",
    "db.index.fulltext.querynodes", "db.index.fulltext.queryrelationships",
    "db.index.vector.querynodes", "db.index.vector.queryrelationships", "dbms.components",
    "apoc.meta.stats", "apoc.meta.schema", "apoc.node.degree", "apoc.node.labels",
    "apoc.convert.tojson", "apoc.convert.fromjsonmap", "apoc.convert.fromjsonlist",
})
#: namespaces none of whose procedures or functions writes: every name under one is allowed
READ_NAMESPACES = frozenset({
    "db.schema", "apoc.coll", "apoc.text", "apoc.map", "apoc.math", "apoc.number", "apoc.agg",
    "apoc.path", "apoc.temporal", "point", "vector.similarity", "date", "datetime", "localdatetime",
    "localtime", "time", "duration",
})

LINE_TERMINATORS = "\n\r\u2028\u2029\u0085"
_BACKTICKED = r"`(?:[^`]|``)*`"
#: one lexeme that hides words: a string literal, a backticked name, a block or a line comment
_LEXEME = re.compile(r"(?P<string>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
                     rf"|(?P<name>{_BACKTICKED})|(?P<comment>/\*.*?\*/|//[^{LINE_TERMINATORS}]*)", re.DOTALL)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER_DOT = re.compile(r"(?<![\w$])\d\w*\s*\.$")
_CALL = re.compile(r"\bCALL\b", re.IGNORECASE)
_PART = rf"(?:[^\W\d]\w*|{_BACKTICKED})"
_DOTTED = rf"{_PART}(?:\s*\.\s*{_PART})*"
_PROCEDURE = re.compile(rf"\s*({_DOTTED})")
_FUNCTION = re.compile(rf"({_DOTTED})\s*\(")
_SUBQUERY = re.compile(rf"\s*(?:\(\s*(?:\*|{_PART}(?:\s*,\s*{_PART})*)?\s*\)\s*)?\{{")


class ReadOnlyViolation(BadInputError):
    """The statement could write to the graph."""


def strip_literals(cypher: str, keep_names: bool = False) -> str:
    """Blank out comments, string literals and (unless ``keep_names``) backticked names, keeping
    positions; lexed left to right, so a quote inside a name or a '//' inside a string is no lexeme."""
    def blank(m: re.Match[str]) -> str:
        return m.group(0) if keep_names and m.group("name") else " " * len(m.group(0))

    return _LEXEME.sub(blank, cypher)


def procedure_name(name: str) -> str:
    """A procedure's or function's dotted name as compared with the list: backticks and spaces gone,
    lower case."""
    parts = (p.strip() for p in re.findall(rf"{_BACKTICKED}|[^.`]+", name))
    return ".".join(p[1:-1].replace("``", "`") if p.startswith("`") else p for p in parts if p).lower()


def is_read_only_name(name: str) -> bool:
    """Whether a procedure or namespaced function (as ``procedure_name`` gives it) is allowed."""
    return name in READ_NAMES or any(name.startswith(ns + ".") for ns in READ_NAMESPACES)


def _property(text: str, start: int) -> bool:
    """Whether the word at ``start`` follows a '.' (``n.set`` is a property access, not a clause); not
    after a number (``1. CREATE``: a lexer that reads ``1.`` as a float would see a clause)."""
    before = text[:start].rstrip()
    return before.endswith(".") and not before.endswith("..") and _NUMBER_DOT.search(before) is None


def _called_procedures(text: str, named: str) -> list[tuple[int, str]]:
    """(position, name) of the procedure after each CALL (``text``: all blanked; ``named``: backticked
    names kept), none where a subquery follows; a CALL followed by anything else is refused."""
    out = []
    for m in _CALL.finditer(text):
        if _property(text, m.start()):
            continue
        rest = named[m.end():]
        if _SUBQUERY.match(rest):  # CALL { … } or CALL (n) { … }: its words are checked
            continue
        name = _PROCEDURE.match(rest)
        if name is None:
            raise ReadOnlyViolation("CALL must name a procedure (or open a subquery): "
                                    f"{rest.strip()[:40]!r} is neither")
        out.append((m.end() + name.start(1), name.group(1)))
    return out


def _called_functions(named: str) -> list[tuple[int, str]]:
    """(position, name) of every call of a name with a namespace, ``ns.fn(…)`` (a procedure written as
    a function included); a call of a bare name is a built-in function or a clause's parenthesis."""
    out = []
    for m in _FUNCTION.finditer(named):
        if "." in procedure_name(m.group(1)):
            out.append((m.start(), m.group(1)))
    return out


def _allow_list() -> str:
    return ", ".join([*sorted(READ_NAMES), *(f"{ns}.*" for ns in sorted(READ_NAMESPACES))])


def check_read_only(cypher: str) -> None:
    """Raise ReadOnlyViolation if the statement contains a write clause, a procedure or a namespaced
    function that is not on the read-only allow-list, or more than one statement."""
    if not cypher or not cypher.strip():
        raise ReadOnlyViolation("the statement is empty")
    text = strip_literals(cypher)
    if ";" in text.strip().rstrip(";"):
        raise ReadOnlyViolation("one statement at a time: ';' separates several statements")
    named = strip_literals(cypher, keep_names=True)
    procedures = _called_procedures(text, named)
    for kind, calls in (("procedure", procedures), ("function", _called_functions(named))):
        for at, called in calls:
            if kind == "function" and any(at == p for p, _ in procedures):
                continue  # CALL ns.proc(…): checked as the procedure it is
            if not is_read_only_name(procedure_name(called)):
                raise ReadOnlyViolation(f"{kind} {procedure_name(called)!r} is not on the read-only allow-list "
                                        f"({_allow_list()})")
    previous = ""
    for w in _WORD.finditer(text):
        word = w.group(0).upper()
        if not _property(text, w.start()):
            if word in WRITE_WORDS:
                raise ReadOnlyViolation(f"{word} is a write clause; exploration queries are read-only")
            if word == "TRANSACTIONS" and previous != "SHOW":
                raise ReadOnlyViolation("CALL { … } IN TRANSACTIONS commits in batches and is not allowed here")
        previous = word
