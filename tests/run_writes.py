"""The writes into a query's ``Run`` that a module's source makes, found by its syntax tree (the house
rule: nothing but the retriever writes into a ``Run``)."""

from __future__ import annotations

import ast

#: methods that change a list, dict or set in place: called on a ``Run``'s attribute, they write into it
_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "pop", "popitem", "clear", "remove",
                       "add", "discard", "__setitem__", "__delitem__"})


def _root(node: ast.expr) -> ast.expr:
    """The name an attribute or item chain starts from (``run`` for ``run.signals["x"].y``)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


def run_writes(source: str, also: frozenset[str] = frozenset()) -> list[str]:
    """The writes into a ``Run`` in ``source``: assignments (``=``, ``+=``, annotated), ``del`` and in-place
    methods (``append``, ``update``, ``setdefault``, ...) on an attribute or item of ``run``, of a name
    annotated ``Run`` or of a name in ``also`` (``self`` in ``Run``'s own module)."""
    tree = ast.parse(source)
    names = {"run", *also} | {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg) and a.annotation is not None
                              and ast.unparse(a.annotation).strip("'\"") == "Run"}

    def into_run(node: ast.expr) -> bool:
        root = _root(node)
        return node is not root and isinstance(root, ast.Name) and root.id in names

    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for target in node.targets for t in (target.elts if isinstance(target, ast.Tuple)
                                                             else [target])]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS
              and into_run(node.func.value)):
            found.append(f"{node.lineno}: {ast.unparse(node.func)}(...)")
        found += [f"{t.lineno}: {ast.unparse(t)} =" for t in targets if into_run(t)]
    return found
