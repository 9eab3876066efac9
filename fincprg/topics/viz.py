"""HTML views of the topics: plotly figures (BERTopic's, or the same kinds drawn here), or plain HTML.

``mode="bertopic"`` writes two plotly pages with plotly.js inlined (``include_plotlyjs=True``: the
files open offline; each is ~5 MB). With ``topics.cluster.engine=bertopic`` (the default) they are BERTopic's
``visualize_barchart()`` (each topic's c-TF-IDF keywords) and ``visualize_hierarchy()`` (dendrogram);
with the native engine (no BERTopic model) they are drawn here: the topics' sizes as a bar chart
labelled with their keywords, and the dendrogram of the same Ward linkage. The barchart replaces ``visualize_topics()``, whose intertopic map
fits UMAP on every call (35 s of a 40 s topics stage on the 31-report sample). Below 3 topics, or
with ``mode="simple"``, a small self-contained HTML page (a table of topics and a nested list of
the tree) is written instead.

Each figure's element id is a hash of the figure (plotly's default is a random UUID), so two builds of
the same data write byte-identical pages. Only drawing a figure may fall back to the simple pages; a
failed write (a full disk) fails the stage, so a re-run redoes it instead of keeping a fallback.
"""
from __future__ import annotations

import hashlib
import html
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from fincprg import layout as L
from fincprg.io import atomic_write_text
from fincprg.records import Topic
from fincprg.topics.cluster import TopicTree

log = logging.getLogger(__name__)

_PAGE = ("<!doctype html><html lang='zh'><head><meta charset='utf-8'><title>{title}</title>"
         "<style>body{{font-family:sans-serif;margin:2em}}td,th{{padding:2px 8px;text-align:left}}"
         "li{{margin:2px 0}}</style></head><body><h1>{title}</h1>{body}</body></html>\n")


def _topics_table(nodes: dict[str, Topic]) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(n.id)}</td><td>{n.size}</td><td>{html.escape(n.industry or '–')}</td>"
        f"<td>{html.escape(' '.join(n.keywords))}</td></tr>"
        for n in sorted((n for n in nodes.values() if n.is_leaf), key=lambda n: -n.size))
    return f"<table><tr><th>topic</th><th>titles</th><th>industry</th><th>keywords</th></tr>{rows}</table>"


def _tree_list(nodes: dict[str, Topic], root: str) -> str:
    def item(nid: str) -> str:
        n = nodes[nid]
        label = f"{n.id} ({n.size}, {n.industry or '–'}): {' '.join(n.keywords[:6])}"
        kids = "".join(item(c) for c in n.children)
        return f"<li>{html.escape(label)}{f'<ul>{kids}</ul>' if kids else ''}</li>"

    return f"<ul>{item(root)}</ul>"


def write_simple(out_dir: Path, nodes: dict[str, Topic], root: str) -> None:
    atomic_write_text(out_dir / L.TOPICS_HTML, _PAGE.format(title="Topics", body=_topics_table(nodes)))
    atomic_write_text(out_dir / L.HIERARCHY_HTML,
                      _PAGE.format(title="Topic hierarchy", body=_tree_list(nodes, root)))


def figure_html(fig: Any) -> str:
    """A plotly figure as a whole offline page whose element id is derived from the figure itself."""
    div_id = "fig-" + hashlib.sha256(fig.to_json().encode("utf-8")).hexdigest()[:16]
    return fig.to_html(include_plotlyjs=True, full_html=True, div_id=div_id)


def _label(tree: TopicTree, k: int) -> str:
    return "_".join([f"t{k}", *tree.keywords.get(f"t{k}", [])[:3]])


def _native_figures(tree: TopicTree) -> dict[str, Any]:
    """A bar chart of the topics (size, keywords) and the dendrogram of the native engine's linkage."""
    import plotly.figure_factory as ff
    import plotly.graph_objects as go

    sizes = Counter(t for t in tree.topics if t != -1)  # one pass: not a count over every title per topic
    leaves = sorted(sizes)
    top = sorted(leaves, key=lambda k: (-sizes[k], k))[:48]
    bars = go.Figure(go.Bar(x=[sizes[k] for k in top][::-1], y=[_label(tree, k) for k in top][::-1],
                            orientation="h", hovertext=[" ".join(tree.keywords.get(f"t{k}", []))
                                                        for k in top][::-1]))
    bars.update_layout(title=f"Topics: the {len(top)} largest of {len(leaves)} (titles per topic)",
                       height=200 + 18 * len(top), template="plotly_white")
    dendro = ff.create_dendrogram(np.zeros((len(leaves), 1)), orientation="left",
                                  labels=[_label(tree, k) for k in leaves], linkagefun=lambda _: tree.linkage)
    dendro.update_layout(title="Topic hierarchy (Ward on c-TF-IDF)", height=200 + 15 * len(leaves),
                         template="plotly_white", showlegend=False)
    return {L.TOPICS_HTML: bars, L.HIERARCHY_HTML: dendro}


def _bertopic_pages(tree: TopicTree) -> dict[str, str] | None:
    """The two plotly pages, or None when they cannot be drawn (then the simple pages are written)."""
    try:
        if tree.model is None:
            figs = _native_figures(tree)
        else:
            figs = {L.TOPICS_HTML: tree.model.visualize_barchart(top_n_topics=min(tree.n_topics, 24), n_words=8),
                    L.HIERARCHY_HTML: tree.model.visualize_hierarchy(hierarchical_topics=tree.hierarchy)}
        return {name: figure_html(fig) for name, fig in figs.items()}
    except Exception as e:  # noqa: BLE001 - drawing is a convenience; a failed drawing falls back
        log.warning("BERTopic visualisation failed (%s); writing the simple HTML pages", e)
        return None


def write_html(out_dir: Path, tree: TopicTree, nodes: dict[str, Topic], mode: str = "bertopic") -> str:
    """Write topics.html and hierarchy.html; returns the mode actually used.

    Raises OSError when a page cannot be written: the stage fails and its re-run writes them again.
    """
    if mode == "none":
        return "none"
    drawable = tree.model is not None or tree.linkage is not None
    pages = _bertopic_pages(tree) if mode == "bertopic" and drawable and tree.n_topics >= 3 else None
    if pages is None:
        write_simple(out_dir, nodes, tree.root)
        return "simple"
    for name, page in pages.items():  # outside the fallback: a write error is not a drawing error
        atomic_write_text(out_dir / name, page)
    return "bertopic"
