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
checked). The console reads one collection's database and nothing else, so what it runs is an allow-list
per backend (``READ_RULES``, by dialect name): a statement opens with a read clause (``READ_STARTS``,
after an optional ``EXPLAIN`` or ``PROFILE``) or is a ``SHOW`` of what the backend lists for the current
database alone (indexes and constraints on Neo4j and ArcadeDB); every other ``SHOW`` (transactions,
databases, users, settings…: the whole server's) is refused, as is ``USE``. Every remaining word is
checked against the clauses that write (``WRITE_WORDS``), ``CALL { … } IN TRANSACTIONS`` is refused,
and every procedure (``CALL x.y``) and every function with a namespace (``x.y(…)``) must be on the
backend's allow-list (``READ_NAMES``, ``READ_NAMESPACES``: each reads the current database, or, like
``dbms.components``, only the server's name and version; ``dbms.*`` procedures that list queries,
transactions, connections, users or databases are refused).
Names are compared with backticks and spaces removed, in lower case (``CALL `apoc`.`create`.node``
is ``apoc.create.node``). Functions without a namespace are the engine's built-ins, which do not
write. The check is deliberately conservative: a map key or alias spelled like a write clause
(``{set: 1}``) is refused too; backtick it to use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hopgraph.core.errors import BadInputError
from hopgraph.graphdb.bolt.dialect import ARCADEDB, NEO4J

WRITE_WORDS = frozenset({
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "NODETACH", "REMOVE", "DROP", "FOREACH", "LOAD",
    "ALTER", "RENAME", "GRANT", "DENY", "REVOKE", "START", "STOP", "TERMINATE", "INSERT",
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

#: the clauses a read statement opens with (after an optional EXPLAIN or PROFILE)
READ_STARTS = ("MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL")
#: SHOW … INDEXES and SHOW … CONSTRAINTS: the words that may stand between SHOW and the object (filters)
SHOW_FILTERS = frozenset({
    "ALL", "FULLTEXT", "LOOKUP", "POINT", "RANGE", "TEXT", "VECTOR", "BTREE", "NODE", "RELATIONSHIP", "REL",
    "UNIQUE", "UNIQUENESS", "EXIST", "EXISTS", "EXISTENCE", "KEY", "PROPERTY", "TYPE",
})
#: why a SHOW of something else is refused, by the word after SHOW (the rest: not known to be one database's)
SHOW_REFUSALS = {
    "TRANSACTION": "it lists the running transactions, and their statements, of every database on the server",
    "TRANSACTIONS": "it lists the running transactions, and their statements, of every database on the server",
    "DATABASE": "it lists the databases on the server", "DATABASES": "it lists the databases on the server",
    "HOME": "it lists the databases on the server", "DEFAULT": "it lists the databases on the server",
    "USERS": "it lists the server's users", "USER": "it shows the server's users",
    "CURRENT": "it shows the server's user or graph type, not this collection's data",
    "ROLES": "it lists the server's roles", "ROLE": "it lists the server's roles",
    "POPULATED": "it lists the server's roles", "PRIVILEGES": "it lists the server's privileges",
    "PRIVILEGE": "it lists the server's privileges", "SUPPORTED": "it lists the server's privileges",
    "SETTINGS": "it lists the server's configuration", "SETTING": "it lists the server's configuration",
    "SERVERS": "it lists the servers of the cluster", "ALIASES": "it lists the server's database aliases",
    "PROCEDURES": "it lists the whole server's procedures and who may run them",
    "FUNCTIONS": "it lists the whole server's functions and who may run them",
    "BUILT": "it lists the whole server's functions", "USER_DEFINED": "it lists the whole server's functions",
}


@dataclass(frozen=True)
class ReadRules:
    """What one backend's console runs: each reads the current database only (or nothing any database holds)."""

    #: what ``SHOW`` may list (``INDEXES``, ``CONSTRAINTS`` and their singulars)
    show: frozenset[str]
    #: procedures and namespaced functions allowed by exact name (lower case)
    names: frozenset[str]
    #: namespaces none of whose procedures or functions writes or reads beyond the current database
    namespaces: frozenset[str]


#: words that name a SHOW command together with the word after them (SHOW CURRENT USER)
_SHOW_PREFIXES = frozenset({"CURRENT", "HOME", "DEFAULT", "BUILT", "POPULATED", "SUPPORTED"})
_SHOW_SCHEMA = frozenset({"INDEX", "INDEXES", "CONSTRAINT", "CONSTRAINTS"})
#: the allow-list of each Bolt backend, by dialect name. Neo4j's SHOW INDEXES / CONSTRAINTS list the
#: current database's; so do ArcadeDB's (tests/test_redteam_cypher.py checks it on the real server).
#: ArcadeDB runs ``sql.*`` functions and its own ``algo.*``, ``meta.*``, ``path.*`` procedures: none is
#: listed. Its ``dbms.listDatabases`` and ``dbms.showCurrentUser`` (Bolt) are refused like Neo4j's.
READ_RULES = {
    NEO4J.name: ReadRules(show=_SHOW_SCHEMA, names=READ_NAMES, namespaces=READ_NAMESPACES),
    ARCADEDB.name: ReadRules(show=_SHOW_SCHEMA, names=READ_NAMES, namespaces=READ_NAMESPACES),
}

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
_FIRST_WORD = re.compile(r"\s*([A-Za-z_]\w*)")
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


def is_read_only_name(name: str, rules: ReadRules | None = None) -> bool:
    """Whether a procedure or namespaced function (as ``procedure_name`` gives it) is allowed."""
    names, namespaces = (rules.names, rules.namespaces) if rules else (READ_NAMES, READ_NAMESPACES)
    return name in names or any(name.startswith(ns + ".") for ns in namespaces)


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


def _allow_list(rules: ReadRules) -> str:
    return ", ".join([*sorted(rules.names), *(f"{ns}.*" for ns in sorted(rules.namespaces))])


def _why_refused(name: str) -> str:
    if name.startswith("dbms."):
        return ("refused: dbms procedures see the whole server (its queries, transactions, connections, users, "
                "databases), not this collection's database")
    return "not on the read-only allow-list"


def _words_from(text: str, at: int) -> list[tuple[str, int]]:
    """The words that follow one another from ``at`` (only blanks between them), upper case, with where each
    ends."""
    out = []
    m = _FIRST_WORD.match(text, at)
    while m is not None:
        out.append((m.group(1).upper(), m.end()))
        m = _FIRST_WORD.match(text, m.end())
    return out


def _shows(rules: ReadRules) -> str:
    return ", ".join(f"SHOW {s}" for s in sorted(rules.show) if s.endswith("S"))


def _check_opening(text: str, rules: ReadRules, backend: str) -> int:
    """Check how the statement opens (``text``: literals blanked); return where its SHOW command's header ends
    (0: no SHOW), past which no SHOW may stand."""
    words = _words_from(text, 0)
    while words and words[0][0] in ("EXPLAIN", "PROFILE"):
        words = words[1:]
    if not words:
        raise ReadOnlyViolation(f"{text.strip()[:20]!r} does not begin a read statement: a statement begins with "
                                f"{', '.join(READ_STARTS)} (after an optional EXPLAIN or PROFILE)")
    first = words[0][0]
    if first in WRITE_WORDS:
        raise ReadOnlyViolation(f"{first} is a write clause; exploration queries are read-only")
    if first != "SHOW":
        if first not in READ_STARTS:
            raise ReadOnlyViolation(f"{first} does not begin a read statement known to read this collection's "
                                    f"database only: a statement begins with {', '.join(READ_STARTS)} (after an "
                                    f"optional EXPLAIN or PROFILE), or is one of {_shows(rules)}")
        return 0
    for i, (word, end) in enumerate(words[1:], start=1):
        command = " ".join(w for w, _ in words[:i + (2 if word in _SHOW_PREFIXES else 1)])
        if word in rules.show:
            after = words[i + 1][0] if i + 1 < len(words) else None
            if after in (None, "YIELD", "WHERE", "BRIEF", "VERBOSE"):
                return end
            raise ReadOnlyViolation(f"{command} {after} is refused: {backend} allows only {_shows(rules)}, "
                                    "optionally with YIELD or WHERE")
        if word not in SHOW_FILTERS:
            reason = SHOW_REFUSALS.get(word, "it is not known to read this collection's database only")
            raise ReadOnlyViolation(f"{command} is refused: {reason}; {backend} allows only {_shows(rules)}")
    raise ReadOnlyViolation(f"{' '.join(w for w, _ in words[:4])} is refused: it is not known to read this "
                            f"collection's database only; {backend} allows only {_shows(rules)}")


def check_read_only(cypher: str, backend: str) -> None:
    """Raise ReadOnlyViolation unless the statement is one read statement that ``backend`` (a dialect name:
    ``neo4j``, ``arcadedb``) is known to run on the current database alone: it opens with a read clause or
    is a SHOW of indexes or constraints, and holds no write clause, no ``USE``, no other SHOW, and no
    procedure or namespaced function off the backend's allow-list. The error names what is refused and why."""
    rules = READ_RULES.get(backend)
    if rules is None:
        raise ReadOnlyViolation(f"no read-only allow-list for the graph backend {backend!r} (known: "
                                f"{', '.join(sorted(READ_RULES))}): its console runs nothing")
    if not cypher or not cypher.strip():
        raise ReadOnlyViolation("the statement is empty")
    text = strip_literals(cypher)
    if ";" in text.strip().rstrip(";"):
        raise ReadOnlyViolation("one statement at a time: ';' separates several statements")
    show_end = _check_opening(text, rules, backend)
    named = strip_literals(cypher, keep_names=True)
    procedures = _called_procedures(text, named)
    for kind, calls in (("procedure", procedures), ("function", _called_functions(named))):
        for at, called in calls:
            if kind == "function" and any(at == p for p, _ in procedures):
                continue  # CALL ns.proc(…): checked as the procedure it is
            name = procedure_name(called)
            if not is_read_only_name(name, rules):
                raise ReadOnlyViolation(f"{kind} {name!r} is {_why_refused(name)} ({backend} allows "
                                        f"{_allow_list(rules)})")
    for w in _WORD.finditer(text):
        word = w.group(0).upper()
        if _property(text, w.start()):
            continue
        if word in WRITE_WORDS:
            raise ReadOnlyViolation(f"{word} is a write clause; exploration queries are read-only")
        if word == "USE":
            raise ReadOnlyViolation("USE is refused: it reads another database or graph, and the console reads "
                                    "this collection's database only")
        if word == "SHOW" and w.start() >= show_end:
            raise ReadOnlyViolation("SHOW is refused inside a statement: only a whole SHOW INDEXES or SHOW "
                                    "CONSTRAINTS statement may list anything")
        if word == "TRANSACTIONS":
            raise ReadOnlyViolation("CALL { … } IN TRANSACTIONS commits in batches and is not allowed here")
