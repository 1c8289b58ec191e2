"""Cutting a read tree to ``max_elements``: what an agent can use is kept first.

A breadth-first cut keeps whatever sits high in the tree: a list of 1,200 rows
scrolled away took the whole budget and the eleven buttons on the screen were lost.
:func:`keep_first` keeps elements in this order, each with the elements above it (a
kept element's parent is kept, so the tree stays a tree): visible and interactive,
then visible and named, then visible, then the rest; in document order within each.
"""

from __future__ import annotations

from viewfinder.core.element import INTERACTIVE_ROLES
from viewfinder.core.element_sources import ElementNode


def _rank(node: ElementNode) -> int:
    if node.box is None:
        return 3
    if node.role in INTERACTIVE_ROLES:
        return 0
    return 1 if node.name else 2


def keep_first(roots: list[ElementNode], max_elements: int) -> int:
    """Cut the trees under ``roots`` (application nodes, always kept and not counted)
    to ``max_elements`` elements, the most useful first; returns how many were cut."""
    order: list[tuple[int, int, ElementNode]] = []
    parents: dict[int, ElementNode] = {}
    stack = [(child, root) for root in reversed(roots) for child in reversed(root.children)]
    while stack:  # depth first, in document order
        node, parent = stack.pop()
        parents[id(node)] = parent
        order.append((_rank(node), len(order), node))
        stack.extend((child, node) for child in reversed(node.children))
    if len(order) <= max_elements:
        return 0
    kept: set[int] = {id(root) for root in roots}
    count = 0
    for _, _, node in sorted(order, key=lambda entry: entry[:2]):
        if id(node) in kept:
            continue
        chain = [node]  # the node and its ancestors not kept yet
        while id(above := parents[id(chain[-1])]) not in kept:
            chain.append(above)
        if count + len(chain) > max_elements:
            continue
        kept.update(id(item) for item in chain)
        count += len(chain)
        if count == max_elements:
            break
    for _, _, node in order:
        node.children = [child for child in node.children if id(child) in kept]
    for root in roots:
        root.children = [child for child in root.children if id(child) in kept]
    return len(order) - count
