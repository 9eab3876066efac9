"""Listwise distillation rows (issue 49): the student learns the teacher's ranking of each query's candidates.

A row is ``(anchor, positive, negative_1..n)`` with ``label`` = the teacher's scores of those candidates, the input
of sentence-transformers' ``DistillKLDivLoss`` (:class:`KLDistillLoss` below). Contrastive fine-tuning of a strong
embedder often lowers it (CADET, arXiv 2502.19712); a teacher's whole ranking carries more signal than one
positive against in-batch negatives.

- **Positive:** the labelled passage. Its target is at least the teacher's best score, so it heads the target
  ranking (a teacher that misses it does not teach the student to push it down).
- **Negatives:** the teacher's candidates ranked below the positive, spread evenly over those ranks (the student
  sees the shape of the whole ranking, not only the nearest passages), never a labelled positive of the query nor
  a passage of the positive's report (which may answer it too). A query with too few candidates gets random
  training passages at its lowest teacher score (they are ranked below the teacher's K, so at most that).
- **Labels:** the row's scores min-max normalised to [0, 1], so one teacher temperature suits BM25's raw scores and
  a hybrid's alike. ``shuffle_labels`` permutes them within each row: the control run that measures what the
  optimiser alone costs.
"""
from __future__ import annotations

import random
from typing import Any

from fincprg.train.data import Pairs
from fincprg.train.teacher import Ranking


def _spread(items: list[str], n: int) -> list[str]:
    """``n`` of ``items`` at evenly spaced ranks (the first and the last included)."""
    if len(items) <= n:
        return list(items)
    if n == 1:
        return [items[0]]
    return [items[round(j * (len(items) - 1) / (n - 1))] for j in range(n)]


def _normalise(scores: list[float]) -> list[float]:
    lo, hi = min(scores), max(scores)
    return [1.0] * len(scores) if hi <= lo else [(s - lo) / (hi - lo) for s in scores]


def row_candidates(pairs: Pairs, i: int, ranking: Ranking, n: int) -> list[tuple[str, float]]:
    """The positive and ``n`` negatives of pair ``i`` with their teacher scores (fewer when the teacher's list
    runs short), in target order."""
    pid = pairs.pos_ids[i]
    order = sorted(ranking, key=lambda p: (-ranking[p], p))
    below = order[order.index(pid) + 1:] if pid in ranking else order
    known = pairs.known.get(pairs.queries[i], set())
    report = pairs.report_of.get(pid)
    allowed = [p for p in below if p not in known and p in pairs.pool
               and (report is None or pairs.report_of.get(p) != report)]
    top = ranking[order[0]] if order else 0.0
    return [(pid, top)] + [(p, ranking[p]) for p in _spread(allowed, n)]


def distill_rows(pairs: Pairs, ranks: dict[str, Ranking], negatives: int, *, seed: int = 42,
                 shuffle_labels: bool = False) -> tuple[dict[str, list], dict[str, Any]]:
    """``anchor, positive, negative_1..n, label`` columns and counts (teacher negatives, random fill)."""
    rng = random.Random(seed)
    ids = sorted(pairs.pool)
    cols: dict[str, list] = {"anchor": [], "positive": [], **{f"negative_{j + 1}": [] for j in range(negatives)},
                             "label": []}
    counts = {"teacher": 0, "random": 0, "rows_skipped": 0}
    for i, q in enumerate(pairs.queries):
        ranking = ranks.get(q, {})
        cands = row_candidates(pairs, i, ranking, negatives)
        from_teacher = len(cands) - 1
        floor = min(ranking.values()) if ranking else 0.0
        have = {p for p, _ in cands}
        for _ in range(50 * negatives):  # fill from random training passages, like the other losses
            if len(cands) > negatives:
                break
            p = ids[rng.randrange(len(ids))]
            if p not in have and p not in pairs.known.get(q, set()) and pairs.text(p, q) != pairs.positives[i]:
                cands.append((p, floor))
                have.add(p)
                counts["random"] += 1
        if len(cands) <= negatives:
            counts["rows_skipped"] += 1
            continue
        counts["teacher"] += from_teacher
        labels = _normalise([s for _, s in cands])
        if shuffle_labels:
            rng.shuffle(labels)
        cols["anchor"].append(q)
        cols["positive"].append(pairs.positives[i])
        for j, (p, _) in enumerate(cands[1:]):
            cols[f"negative_{j + 1}"].append(pairs.text(p, q))  # a title query's are bare, like its positive
        cols["label"].append(labels)
    return cols, counts


def kl_loss(st: Any, student_temperature: float, teacher_temperature: float) -> Any:
    """``DistillKLDivLoss`` with the student-temperature² factor taken out again.

    sentence-transformers multiplies the KL by T_student² (Hinton's correction for T >= 1). An embedder's cosine
    scores need T_student ~0.02-0.05 (e5 was trained at 0.01), where that factor shrinks the loss and its
    gradient by ~1000x: Adam then takes full-size steps on noise (issue 49's collapsed control run). Dividing it
    out keeps the gradient at the KL's own size.
    """
    from sentence_transformers.sentence_transformer import losses

    class KLDistillLoss(losses.DistillKLDivLoss):
        def compute_loss_from_embeddings(self, embeddings: list[Any], labels: Any) -> Any:
            return super().compute_loss_from_embeddings(embeddings, labels) / (self.student_temperature ** 2)

    return KLDistillLoss(st, student_temperature=student_temperature, teacher_temperature=teacher_temperature)


def margin_mse_loss(st: Any, student_temperature: float, teacher_temperature: float) -> Any:
    """``MarginMSELoss`` on the logits the KL sees: margins of cosine / ``student_temperature`` against margins
    of the row's normalised teacher scores / ``teacher_temperature``.

    sentence-transformers' loss takes the dot product and labels as given; here the embeddings are normalised (a
    model without a Normalize module gets cosines too) and the query side divided by the student temperature, so
    the dot product is the student's logit; the labels ``[positive, negative_1..n]`` are turned into margins by
    the loss itself.
    """
    import torch.nn.functional as F
    from sentence_transformers.sentence_transformer import losses

    class MarginMSEDistillLoss(losses.MarginMSELoss):
        def compute_loss_from_embeddings(self, embeddings: list[Any], labels: Any) -> Any:
            unit = [F.normalize(e, p=2, dim=-1) for e in embeddings]
            unit[0] = unit[0] / student_temperature
            return super().compute_loss_from_embeddings(unit, labels / teacher_temperature)

    return MarginMSEDistillLoss(st)
