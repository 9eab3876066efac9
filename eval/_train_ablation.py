"""bench_train ``--human --ablation`` (issue 49): which part of the distillation recipe carries signal.

Every row is one ``fincprg train`` run of the common recipe with one thing changed: the teacher (the BM25 + base
hybrid, BM25, the base model), the loss (kl, marginmse, issue 37's contrastive cgist recipe), the query mix
(generated; + titles; + crops) or the steps (``--max-pairs`` at batch 32). Each row is trained twice: as given,
and with ``--shuffle-labels``, its control, whose labels carry nothing. What the control loses is what the
optimiser alone costs (issue 49: 50 steps at lr 1e-5 cost ~0.03 by themselves), so a row carries signal only
where it beats its own control, not merely the base.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DIMENSIONS = ("teacher", "loss", "mix", "steps")
TEACHERS = {"hybrid": "hybrid:0.75:dense:{model}", "bm25": "bm25", "base": "dense:{model}"}
LOSSES = ("kl", "marginmse", "contrastive")
MIXES = ("generated", "generated,titles", "generated,titles,crops")
PAIRS = (480, 960, 1920)  # 15, 30, 60 steps at batch 32
# what every row shares; the e5 settings of issue 37 (its geometry kept: frozen table, low lr)
COMMON = ["--batch-size", "32", "--lr", "1e-5", "--max-seq-length", "256", "--freeze-embeddings",
          "--group-by-length", "--eval", "no", "--save-steps", "100000", "--log-steps", "1"]
DISTILL = ["--negatives", "4", "--teacher-k", "30", "--mini-batch-size", "2"]
# issue 37's contrastive recipe, less its dev split and merge (the ablation compares training signals)
CONTRASTIVE = ["--loss", "cgist", "--mini-batch-size", "16", "--negatives", "1", "--negatives-from", "dense",
               "--neg-range", "10:100", "--neg-margin", "0.05", "--scale", "100"]


@dataclass(frozen=True)
class Row:
    """One ablation run: the dimension it varies, and its full settings."""

    dimension: str
    value: str
    loss: str = "kl"
    teacher: str = "hybrid"
    mix: str = "generated"
    pairs: int = 960

    @property
    def key(self) -> str:
        """The run's folder name (equal settings train once, whichever dimension lists them)."""
        return f"{self.loss}-{self.teacher if self.loss != 'contrastive' else 'none'}-{self.mix.replace(',', '+')}" \
               f"-{self.pairs}"

    def flags(self, model: str, *, control: bool = False, seed: int = 42) -> list[str]:
        """The ``fincprg train`` flags of this row (``model``: the base model folder, for the dense teachers)."""
        if self.loss == "contrastive":
            own = list(CONTRASTIVE)
        else:
            own = ["--loss", self.loss, "--teacher", TEACHERS[self.teacher].format(model=model), *DISTILL]
        return [*own, *COMMON, "--mix", self.mix, "--max-pairs", str(self.pairs), "--seed", str(seed),
                *(["--shuffle-labels"] if control else [])]


def rows(dimensions: tuple[str, ...] = DIMENSIONS) -> list[Row]:
    """The default row, then each dimension's other values (the default is listed once)."""
    out = [Row("default", "kl, hybrid teacher, generated, 960 pairs")]
    for dim in dimensions:
        if dim not in DIMENSIONS:
            raise SystemExit(f"--ablation-dims: {dim!r} is not one of {', '.join(DIMENSIONS)}")
        values = {"teacher": TEACHERS, "loss": LOSSES, "mix": MIXES, "steps": PAIRS}[dim]
        for v in values:
            row = {"teacher": lambda: Row(dim, v, teacher=v), "loss": lambda: Row(dim, v, loss=v),
                   "mix": lambda: Row(dim, v, mix=v), "steps": lambda: Row(dim, str(v), pairs=int(v))}[dim]()
            if row.key != out[0].key:
                out.append(row)
    return out


def train_rows(table: list[Row], dataset: Path, base: Path, work: Path, seed: int) -> dict[str, dict[str, Any]]:
    """Train every row and its control (a run already in WORK is reused); run label -> folder and summary."""
    from eval._train_human import cli

    runs: dict[str, dict[str, Any]] = {}
    cache = work / "teacher-cache"  # the teachers rank once for every row that shares them
    for row in table:
        for control in (False, True):
            out = work / "ablation" / f"{row.key}{'-control' if control else ''}-seed{seed}"
            flags = row.flags(str(base), control=control, seed=seed)
            if row.loss != "contrastive":
                flags += ["--teacher-cache", str(cache)]
            if not (out / "fincprg_train.json").exists():
                cli("train", str(dataset), "-m", str(base), "-o", str(out), *flags, "--no-compare", "-q")
            summary = json.loads((out / "fincprg_train.json").read_text("utf-8"))
            runs[out.name] = {"row": row.key, "control": control, "out": str(out), "flags": flags,
                              "steps": summary["steps"], "seconds_per_step": summary.get("seconds_per_step"),
                              "peak_gb": summary.get("memory_gb", {}).get("train", {}).get("peak"),
                              "mix": summary.get("mix"), "teacher": summary.get("teacher")}
    return runs


def compare_rows(table: list[Row], runs: dict[str, dict[str, Any]], pq: dict, seed: int) -> list[dict[str, Any]]:
    """Per row: mean vs the base and vs its control (bootstrap intervals), with its cost."""
    from eval._train_human import compare

    out = []
    for row in table:
        run, ctl = f"{row.key}-seed{seed}", f"{row.key}-control-seed{seed}"
        out.append({"dimension": row.dimension, "value": row.value, "key": row.key, "run": run, "control": ctl,
                    "vs_base": compare(pq, run, "e5 base"), "control_vs_base": compare(pq, ctl, "e5 base"),
                    "vs_control": compare(pq, run, ctl), "steps": runs[run]["steps"],
                    "seconds_per_step": runs[run]["seconds_per_step"], "peak_gb": runs[run]["peak_gb"]})
    return out


def render_ablation(r: dict[str, Any], also: list[dict[str, Any]]) -> str:
    """The eval/README.md ``train-ablation`` section from a saved result.json."""
    from eval._train_human import present

    benches = present(r["means"])
    mean = {m: sum(r["means"][b][m] for b in benches) / len(benches) for m in r["models"]}
    lines = ["## Distillation ablation on held-out human queries (`eval/bench_train.py --human --ablation`)", "",
             f"Measured {r['date']} at commit {r['commit']} on {r['machine']} CPU ({r['cpus']} cores, shared), "
             f"offline; seed {r['seed']}; total wall time {r['wall']:.0f} s. Mean nDCG@10 over {len(benches)} "
             f"held-out benchmarks ({', '.join(benches)}); e5 base {mean['e5 base']:.4f}, BM25 {mean['bm25']:.4f}. "
             "Every row's control is the same run with `--shuffle-labels`; a row carries signal where it beats its "
             "control (bootstrap 95% interval over queries).", "",
             "| varies | value | steps | s/step | peak GB | mean | vs base | control mean | row − control |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for x in r["rows"]:
        v, c = x["vs_base"], x["vs_control"]
        lines.append(f"| {x['dimension']} | {x['value']} | {x['steps']} | {x['seconds_per_step'] or 0:.1f} | "
                     f"{x['peak_gb'] or 0:.2f} | {mean[x['run']]:.4f} | {v['diff']:+.4f} [{v['lo']:+.4f}, "
                     f"{v['hi']:+.4f}] | {mean[x['control']]:.4f} | {c['diff']:+.4f} [{c['lo']:+.4f}, "
                     f"{c['hi']:+.4f}] |")
    lines += ["", "Flags of each run (`fincprg train DATASET -m E5 -o OUT …`; controls add `--shuffle-labels`):", ""]
    lines += [f"- `{x['key']}`: `{' '.join(r['runs'][x['run']]['flags'])}`" for x in r["rows"]]
    return "\n".join(lines)


def run_ablation(args: Any, finish: Any) -> int:
    """Train every row of ``--ablation-dims`` and its control, score them beside the base on every held-out human
    benchmark, and record the section ``train-ablation`` (``finish``: bench_train's result writer)."""
    import time

    from eval._train_e5 import import_base
    from eval._train_human import prepare, score_all

    t_all = time.time()
    work = args.work.resolve()
    data = prepare(work)
    base, _ = import_base(work / "e5-base")
    table = rows(tuple(d.strip() for d in args.ablation_dims.split(",") if d.strip()))
    runs = train_rows(table, data["dataset"], base, work, args.seed)
    models = {"bm25": "bm25", "e5 base": f"dense:{base}", **{n: f"dense:{run['out']}" for n, run in runs.items()}}
    pq, means, cpu = score_all(models, data["benches"])
    figures = {"wall": time.time() - t_all, "seed": args.seed, "held_out": data["held_out"], "models": models,
               "means": means, "score_cpu": cpu, "runs": runs, "rows": compare_rows(table, runs, pq, args.seed)}
    return finish(args, work, figures, render_ablation, SECTION)


SECTION = "train-ablation"
