"""Dominant industries on the topic tree and each title's largest single-industry subtree (§3.2.4).

A node's dominant industry is the industry shared by *more than* ``dominance`` (default 2/3) of
the titles under it (exactly 2/3 is not enough); otherwise it has none. The outlier leaf ``t-1``
never has one. For a title with industry I in leaf L, its subtree is the highest ancestor of L
(the one with most titles) whose dominant industry is I; when no node on the path qualifies the
title falls back to its leaf topic. Mining traverses query pairs inside these subtrees.
"""
from __future__ import annotations

from collections import Counter
from fractions import Fraction
from collections.abc import Mapping, Sequence

from fincprg.records import Topic
from fincprg.topics.cluster import TopicTree


def dominant(industries: Sequence[str | None], dominance: float = 2 / 3) -> str | None:
    """The industry held by more than ``dominance`` of ``industries`` (None counts as a vote)."""
    if not industries:
        return None
    (top, n), *_ = Counter(industries).most_common(1)
    # exact rational comparison, so that exactly 2 of 3 is not "more than 2/3" despite float rounding
    frac = Fraction(dominance).limit_denominator(1000)
    if top is None or n * frac.denominator <= len(industries) * frac.numerator:
        return None
    return top


def build_nodes(tree: TopicTree, title_ids: Sequence[str], industries: Sequence[str | None],
                dominance: float = 2 / 3) -> dict[str, Topic]:
    """Topic records (with title ids, size and dominant industry) for every node of ``tree``."""
    leaf_titles: dict[str, list[int]] = {}
    for i, t in enumerate(tree.topics):
        leaf_titles.setdefault(f"t{t}", []).append(i)
    members: dict[str, list[int]] = {}

    def collect(nid: str) -> list[int]:
        if nid not in members:
            idx = list(leaf_titles.get(nid, []))
            for c in tree.children.get(nid, []):
                idx.extend(collect(c))
            members[nid] = sorted(idx)
        return members[nid]

    collect(tree.root)
    nodes: dict[str, Topic] = {}
    for nid, idx in members.items():
        kids = tuple(tree.children.get(nid, []))
        ind = None if nid == "t-1" else dominant([industries[i] for i in idx], dominance)
        nodes[nid] = Topic(id=nid, parent_id=tree.parent.get(nid), children=kids,
                           keywords=tuple(tree.keywords.get(nid, [])),
                           title_ids=tuple(title_ids[i] for i in idx), industry=ind, size=len(idx),
                           is_leaf=not kids)
    return nodes


def subtree_for(leaf: str, industry: str | None, nodes: Mapping[str, Topic]) -> str:
    """Largest node on the leaf-to-root path whose dominant industry is ``industry`` (else ``leaf``)."""
    best, best_size = leaf, -1
    nid: str | None = leaf
    while nid is not None:
        node = nodes[nid]
        if industry is not None and node.industry == industry and node.size > best_size:
            best, best_size = nid, node.size
        nid = node.parent_id
    return best
