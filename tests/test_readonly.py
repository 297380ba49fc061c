"""The read-only Cypher guard, pure logic: lexing as Cypher does, write clauses, the allow-list of each
backend's read statements and procedures (what is not known to read one database only is refused)."""

import pytest

from hopgraph.graphdb.bolt.dialect import ARCADEDB, NEO4J
from hopgraph.graphdb.readonly import (
    READ_NAMES,
    READ_NAMESPACES,
    READ_RULES,
    ReadOnlyViolation,
    check_read_only,
)

BACKENDS = (NEO4J.name, ARCADEDB.name)

READS = [
    "MATCH (n:Entity) RETURN n.name LIMIT 5",
    "MATCH (e:Entity {name: 'CREATE something'}) RETURN e",  # the word is inside a string
    "MATCH (n) // DELETE n\nRETURN count(n)",  # ... or in a comment
    "MATCH (n) /* SET n.x = 1 */ RETURN n.set, n.`delete`",
    "CALL db.labels() YIELD label RETURN label",
    "MATCH (n) CALL { WITH n MATCH (n)--(m) RETURN count(m) AS d } RETURN n, d",
    "/* first */ OPTIONAL MATCH (n) RETURN n", "WITH 1 AS x RETURN x", "UNWIND [1] AS x RETURN x",
    "PROFILE MATCH (n) RETURN n", "MATCH (a) RETURN a.name UNION MATCH (b) RETURN b.name",
    "EXPLAIN MATCH (n) RETURN n",
    "CALL `db`.`labels`() YIELD label RETURN label",  # backticked names of a read-only procedure
    "CALL `db.labels`() YIELD label RETURN label",
    "CALL /* the labels */ db . labels() YIELD label RETURN label",
    "MATCH (n:`it's`) RETURN n.name AS `a \"name\"`",  # quotes inside backticks are no strings
    "MATCH (n) CALL (n) { MATCH (n)--(m) RETURN count(m) AS d } RETURN d",
    "MATCH (n) RETURN n.call",  # a property, not a CALL
    "MATCH (n) WHERE n.name = 'CREATE (m) DETACH DELETE n' RETURN n",  # write words in a string
    'RETURN "it\\"s MERGE time" AS s, \'a\\\'b SET\' AS t',  # escaped quotes keep the string open
    "MATCH (n) /* CREATE (m)\n MERGE (x) */ RETURN n",  # in a block comment
    "MATCH (n) // CREATE (m)\r\nRETURN n",  # \r\n ends the comment once
    "MATCH (n:`CREATE`) RETURN n.`SET` AS `DELETE`",  # backticked names
    "MATCH (n) RETURN apoc.coll.sum([1, 2]), apoc.text.join(['a'], ','), apoc.map.merge({}, {})",
    "RETURN point.distance(point({x: 0, y: 0}), point({x: 1, y: 1})), date.truncate('day', date())",
    "RETURN `apoc`.`coll`.sum([1]) AS s, toUpper('x') AS u, count(*) AS c",  # built-ins have no namespace
    "MATCH (a {id: 1}) CALL apoc.path.expand(a, 'RELATED', null, 1, 2) YIELD path RETURN path",
    "CALL db.schema.visualization()",
    "MATCH (n) RETURN n.transactions",
    "MATCH (n) RETURN n.x1.create, n.`2`.set",  # a property of a property
]
WRITES = [
    "CREATE (n:X)",
    "match (n) detach delete n",
    "MATCH (n) SeT n.x = 1",
    "MERGE (n:X {id: 1})",
    "MATCH (n) REMOVE n.x",
    "DROP INDEX entity_name",
    "LOAD CSV FROM 'file:///x.csv' AS row RETURN row",
    "MATCH (n) CALL { WITH n DELETE n } IN TRANSACTIONS OF 10 ROWS",
    "MATCH (n) CALL { WITH n SET n.x = 1 } RETURN n",
    "CALL apoc.create.node(['X'], {}) YIELD node RETURN node",
    "CALL dbms.security.createUser('x', 'y', false)",
    "MATCH (n) RETURN n; MATCH (m) DELETE m",
    "MATCH (n) FOREACH (x IN [1] | SET n.y = x)",
    "/* harmless */ CrEaTe (n)",
    "MATCH (n) WITH n // comment\n DELETE n",
    "",
    "CALL `apoc.create.node`(['X'], {}) YIELD node RETURN node",  # a backticked writing procedure
    "CALL `apoc`.`create`.`node`(['X'], {}) YIELD node RETURN node",
    "CALL apoc.`create`.node(['X'], {}) YIELD node RETURN node",
    "CALL `APOC.CREATE.NODE`(['X'], {}) YIELD node RETURN node",
    "CALL `db.labels``x`()",  # an escaped backtick makes another name
    "CALL 'apoc.create.node'(['X'], {})",  # quoted: not a name on the list
    "CALL \"apoc.create.node\"(['X'], {})",
    "MATCH (n:`a'`) CREATE (m) RETURN '`'",  # a quote in backticks must not hide the CREATE
    # a line comment ends at every Cypher line terminator, not only at \n (issue 54, bug 8)
    "MATCH (n) // harmless\rCREATE (m:Evil) RETURN n",
    "MATCH (n) // harmless\u2028CREATE (m:Evil) RETURN n",
    "MATCH (n) // harmless\u2029DETACH DELETE n",
    "MATCH (n) // harmless\u0085SET n.x = 1",
    "MATCH (n) // a\rb\nRETURN n // c\rMERGE (x)",
    # a procedure that writes, called as a function or by CALL, whatever its spelling
    "RETURN apoc.create.node(['X'], {})",
    "RETURN apoc . create /* */ . node(['X'], {}) AS n",
    "RETURN `apoc`.create.`node`(['X'], {}) AS n",
    "RETURN `apoc.create.node`(['X'], {}) AS n",
    "CALL apoc.create.node(['X'], {}) YIELD node RETURN node",
    "CALL apoc.create.node",
    "MATCH (n) WITH apoc.nodes.delete(n, 1) AS x RETURN x",
    "RETURN apoc.cypher.runFirstColumnSingle('CREATE (n) RETURN n', {})",
    "MATCH (n) RETURN n.apoc.create.node(1)",  # a namespace that starts with a variable is still one
    "CALL db.createLabel('X')",
    "CALL { MATCH (n) RETURN n } IN $n CONCURRENT TRANSACTIONS RETURN 1",
    "MATCH (n) CALL { WITH n RETURN n AS m } IN TRANSACTIONS RETURN m",
    "RETURN 'unclosed CREATE (n)",  # an unclosed string hides nothing
    "MATCH (n) /* unclosed DELETE n",
    "RETURN 1.\nCREATE (n)",  # '1.' may be a float to some lexers: the CREATE is then a clause
]


#: introspection commands of Neo4j 5 / Cypher 25 and of ArcadeDB (its Cypher engine, its Bolt server's
#: system procedures, its SQL bridge), with whether each backend's console runs them: only what reads the
#: current database alone (SHOW INDEXES / CONSTRAINTS list the current database's on both: for ArcadeDB,
#: tests/test_redteam_cypher.py checks it on the real server)
IntroCase = tuple[str, bool, bool]  # statement, allowed on neo4j, allowed on arcadedb
INTROSPECTION: list[IntroCase] = [
    *((q, True, True) for q in (
        "SHOW INDEXES", "SHOW INDEX", "SHOW ALL INDEXES", "SHOW RANGE INDEXES", "SHOW FULLTEXT INDEXES",
        "SHOW TEXT INDEXES", "SHOW POINT INDEXES", "SHOW VECTOR INDEXES", "SHOW LOOKUP INDEXES",
        "show indexes yield name, type where type = 'RANGE' return name", "SHOW INDEXES YIELD *",
        "SHOW INDEXES BRIEF", "SHOW CONSTRAINTS", "SHOW CONSTRAINT", "SHOW ALL CONSTRAINTS",
        "SHOW UNIQUE CONSTRAINTS", "SHOW NODE KEY CONSTRAINTS", "SHOW RELATIONSHIP UNIQUENESS CONSTRAINTS",
        "SHOW EXISTENCE CONSTRAINTS", "SHOW NODE PROPERTY TYPE CONSTRAINTS", "SHOW CONSTRAINTS YIELD name",
        "EXPLAIN SHOW INDEXES", "/* schema */ SHOW INDEXES", "CALL db.labels()", "CALL db.relationshipTypes()",
        "CALL db.propertyKeys()", "CALL db.info()", "CALL db.indexes()", "CALL db.constraints()",
        "CALL db.schema.visualization()", "CALL db.schema.nodeTypeProperties()", "CALL apoc.meta.stats()",
        "CALL dbms.components() YIELD name, versions, edition RETURN name",  # the server's name and version
    )),
    *((q, False, False) for q in (
        # SHOW of the whole server: transactions (with their statements) of every database, databases,
        # users, roles, privileges, settings, servers, aliases, procedures and functions (and who may run them)
        "SHOW TRANSACTIONS", "show transactions", "SHOW TRANSACTION 'neo4j-transaction-1'",
        "SHOW TRANSACTIONS YIELD database, currentQuery RETURN database, currentQuery",
        "SHOW TRANSACTIONS YIELD transactionId TERMINATE TRANSACTIONS transactionId",
        "TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "SHOW DATABASES", "SHOW DATABASE neo4j",
        "SHOW HOME DATABASE", "SHOW DEFAULT DATABASE", "SHOW USERS", "SHOW USERS WITH AUTH", "SHOW CURRENT USER",
        "SHOW USER alice PRIVILEGES", "SHOW USER PRIVILEGES", "SHOW ROLES", "SHOW POPULATED ROLES WITH USERS",
        "SHOW ROLE admin PRIVILEGES AS COMMANDS", "SHOW PRIVILEGES", "SHOW ALL PRIVILEGES",
        "SHOW SUPPORTED PRIVILEGES", "SHOW PROCEDURES", "SHOW PROCEDURES EXECUTABLE BY CURRENT USER",
        "SHOW FUNCTIONS", "SHOW BUILT IN FUNCTIONS", "SHOW USER DEFINED FUNCTIONS", "SHOW SETTINGS",
        "SHOW SETTING 'server.*'", "SHOW SERVERS", "SHOW ALIASES FOR DATABASES", "SHOW CURRENT GRAPH TYPE",
        "SHOW ALL", "SHOW", "SHOW INDEXES TRANSACTIONS", "SHOW `INDEXES`",
        # a SHOW hidden behind a prefix or inside another statement
        "EXPLAIN SHOW TRANSACTIONS", "PROFILE SHOW USERS", "SHOW INDEXES YIELD name SHOW TRANSACTIONS",
        "MATCH (n) RETURN n.name AS x UNION SHOW TRANSACTIONS YIELD database AS x RETURN x",
        "CALL { SHOW TRANSACTIONS } RETURN 1", "MATCH (n) CALL { SHOW DATABASES YIELD name RETURN name } RETURN name",
        "/* x */ show /* y */ transactions",
        # another database or graph
        "USE system SHOW DATABASES", "USE other MATCH (n) RETURN n", "MATCH (n) CALL { USE other MATCH (m) "
        "RETURN m } RETURN m", "USE graph.byName('other') MATCH (n) RETURN n", "RETURN graph.names()",
        "MATCH (n) RETURN db.nameFromElementId(elementId(n))",
        # dbms procedures: queries, transactions, connections, users, roles, configuration, cluster
        "CALL dbms.listQueries()", "CALL dbms.listTransactions()", "CALL dbms.listConnections()",
        "CALL dbms.showCurrentUser()", "CALL dbms.security.listUsers()", "CALL dbms.security.listRoles()",
        "CALL dbms.listConfig()", "CALL dbms.info()", "CALL dbms.listDatabases()", "CALL dbms.showDatabase()",
        "CALL dbms.queryJmx('*:*')", "CALL dbms.routing.getRoutingTable({})", "CALL dbms.cluster.overview()",
        "CALL dbms.killQuery('query-1')", "CALL dbms.procedures()", "CALL dbms.functions()",
        "CALL dbms.listPools()", "CALL dbms.clientConfig()", "CALL `dbms`.`listQueries`()",
        "CALL dbms . listTransactions()", "RETURN dbms.listQueries()",
        # procedures and functions beyond the current database's data, or not known to be
        "CALL db.stats.retrieve('GRAPH COUNTS')", "CALL db.ping()", "RETURN sql.version()",
        "RETURN sql.eval('1')", "CALL algo.pagerank()", "CALL meta.stats()", "CALL db.migrateLegacyTemporals()",
        "CALL do.when(true, 'MATCH (n) RETURN n', '')",
        # not Cypher read statements: browser, transaction and server commands, query options
        ":sysinfo", ":use system", ":server status", "BEGIN", "COMMIT", "ROLLBACK",
        "CYPHER runtime=slotted MATCH (n) RETURN n", "CREATE DATABASE other", "DROP DATABASE other",
        "START DATABASE other", "CREATE USER eve SET PASSWORD 'x'", "ALTER USER root SET PASSWORD 'x'",
        "GRANT ROLE admin TO eve", "ENABLE SERVER 'x'", "create database other", "list databases",
        "check database", "select from schema:database", "(MATCH (n) RETURN n)",
    )),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("q", READS)
def test_reads_pass(q: str, backend: str) -> None:
    check_read_only(q, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("q", WRITES)
def test_writes_are_refused(q: str, backend: str) -> None:
    with pytest.raises(ReadOnlyViolation):
        check_read_only(q, backend)


@pytest.mark.parametrize(("q", "on_neo4j", "on_arcadedb"), INTROSPECTION)
def test_introspection_reads_the_current_database_only(q: str, on_neo4j: bool, on_arcadedb: bool) -> None:
    for backend, allowed in ((NEO4J.name, on_neo4j), (ARCADEDB.name, on_arcadedb)):
        if allowed:
            check_read_only(q, backend)
        else:
            with pytest.raises(ReadOnlyViolation):
                check_read_only(q, backend)


def test_the_table_has_a_rule_set_for_each_bolt_backend() -> None:
    assert set(READ_RULES) == set(BACKENDS)
    with pytest.raises(ReadOnlyViolation, match="no read-only allow-list for the graph backend 'memory'"):
        check_read_only("MATCH (n) RETURN n", "memory")  # an unknown backend's console runs nothing


@pytest.mark.parametrize("backend", BACKENDS)
def test_refusals_name_what_is_refused(backend: str) -> None:
    with pytest.raises(ReadOnlyViolation, match=r"function 'apoc\.create\.node' is not on the read-only allow-list"):
        check_read_only("RETURN apoc.create.node(['X'], {})", backend)
    with pytest.raises(ReadOnlyViolation, match=r"procedure 'apoc\.create\.node' is not on the read-only allow-list"):
        check_read_only("CALL apoc.create.node(['X'], {}) YIELD node RETURN node", backend)
    with pytest.raises(ReadOnlyViolation, match="CREATE is a write clause"):
        check_read_only("MATCH (n) // x\rCREATE (m)", backend)
    with pytest.raises(ReadOnlyViolation, match="SHOW TRANSACTIONS is refused: it lists the running transactions, "
                                                "and their statements, of every database on the server"):
        check_read_only("SHOW TRANSACTIONS", backend)
    with pytest.raises(ReadOnlyViolation, match=r"SHOW CURRENT USER is refused: .*allows only SHOW CONSTRAINTS, "
                                                "SHOW INDEXES"):
        check_read_only("SHOW CURRENT USER", backend)
    with pytest.raises(ReadOnlyViolation, match=r"procedure 'dbms\.listqueries' is refused: dbms procedures see "
                                                "the whole server"):
        check_read_only("CALL dbms.listQueries()", backend)
    with pytest.raises(ReadOnlyViolation, match="USE is refused: it reads another database"):
        check_read_only("MATCH (n) CALL { USE other MATCH (m) RETURN m } RETURN m", backend)
    with pytest.raises(ReadOnlyViolation, match="BEGIN does not begin a read statement"):
        check_read_only("BEGIN", backend)
    with pytest.raises(ReadOnlyViolation, match="':sysinfo' does not begin a read statement"):
        check_read_only(":sysinfo", backend)


def test_the_allow_list_is_lower_case_and_has_no_writing_namespace() -> None:
    assert all(n == n.lower() for n in READ_NAMES | READ_NAMESPACES)
    writers = ("create", "merge", "delete", "refactor", "periodic", "cypher", "trigger", "load", "export")
    assert not [ns for ns in READ_NAMESPACES if any(w in ns.split(".") for w in writers)]
    assert "db" not in READ_NAMESPACES and "apoc" not in READ_NAMESPACES  # db.createLabel, apoc.create.*
    for rules in READ_RULES.values():  # no server-wide procedure: dbms.components shows a name and a version
        assert [n for n in rules.names if n.startswith("dbms.")] == ["dbms.components"]
        assert not [ns for ns in rules.namespaces if ns.split(".")[0] in ("dbms", "graph", "sql", "algo")]
