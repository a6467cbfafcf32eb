"""``nclab measure-lm``: linguistic collapse of a causal language model over a token corpus, at
vocabulary size, in one forward pass (:func:`nclab.integrations.causal_lm.measure_lm`)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import DataError
from ._app import JSON_OPT, app, console, emit_json
from .measure import _memory_budget


@app.command("measure-lm")
def measure_lm(
    corpus: list[Path] = typer.Argument(
        None,
        help="The corpus: token-id files (.npy, .pt: 1-D or 2-D integer arrays; .bin: a raw "
        "stream, see --bin-dtype), text files (.txt, with --tokenizer) or folders of them.",
    ),
    model: Path = typer.Option(
        None, "--model", help="A Hugging Face causal LM saved in this folder (read offline)."
    ),
    config: str = typer.Option(
        None,
        "--config",
        help="Random weights from a config instead: 'gpt2' (GPT-2 small's shape), 'gpt2-tiny' "
        "(2 layers, width 64; both with GPT-2's 50,257 tokens) or a config.json / its folder.",
    ),
    synthetic: int = typer.Option(
        None, "--synthetic", help="A generated corpus of this many tokens (Zipfian, seeded)."
    ),
    seq_len: int = typer.Option(128, "--seq-len", help="Tokens per sequence."),
    batch_size: int = typer.Option(8, "--batch-size", help="Sequences per forward pass."),
    tokenizer: Path = typer.Option(
        None, "--tokenizer", help="A Hugging Face tokenizer's folder, for text files."
    ),
    bin_dtype: str = typer.Option("uint16", "--bin-dtype", help="Ids of .bin files."),
    max_tokens: int = typer.Option(None, "--max-tokens", help="Use the first so many tokens."),
    layer: list[str] = typer.Option(
        None, "--layer", help="A layer to measure (repeat; default: the LM head's input)."
    ),
    cache_budget: str = typer.Option(
        "2GB", "--cache-budget", help="Memory for the token features of the second pass."
    ),
    spill: Path = typer.Option(
        None, "--spill", help="Folder of the spill file beyond --cache-budget (default: /tmp)."
    ),
    no_spill: bool = typer.Option(False, "--no-spill", help="Refuse instead of spilling."),
    memory: float = typer.Option(
        None, "--memory-gb", help="Memory budget of one tile of pairwise / decision values (GB)."
    ),
    device: str = typer.Option(None, "--device", help="Where the model runs (default: its own)."),
    seed: int = typer.Option(0, "--seed", help="Seed of random weights and the synthetic corpus."),
    json: bool = JSON_OPT,
) -> None:
    """Measure CDNV, NC1-NC4, GNC2 and UNC3 of a causal LM at vocabulary size, running it once."""
    net = _model(model, config, seed)
    tokens = _corpus(corpus, synthetic, net, seq_len, tokenizer, bin_dtype, max_tokens, seed)
    if device is not None:
        net = net.to(device)
    options = dict(batch_size=batch_size, layers=layer or None, cache_budget=cache_budget)
    with _memory_budget(memory):
        out = _measure(
            net, tokens, spill=False if no_spill else (spill or True), json=json, **options
        )
    out["model"] = str(model) if model is not None else f"random weights: {config} (seed {seed})"
    if json:
        emit_json(out)
    else:
        _print(out)


def _measure(net, tokens, json: bool, **options) -> dict:
    from ..integrations.causal_lm import measure_lm as run

    out = run(net, tokens, progress=not json, **options).to_dict()
    out["corpus"] = tokens.source
    return out


def _model(folder: Path | None, config: str | None, seed: int):
    if (folder is None) == (config is None):
        raise DataError("nclab measure-lm needs a model: --model FOLDER or --config NAME|FILE")
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from ..models.gpt2 import GPT2_SHAPES, _transformers, gpt2_shaped

    tf = _transformers()
    if folder is not None:
        try:
            return tf.AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise DataError(f"--model {folder}: cannot load a causal LM offline ({exc})") from exc
    if config in GPT2_SHAPES:
        return gpt2_shaped(config, seed=seed)
    path = Path(config)
    if not path.exists():
        raise DataError(
            f"unknown config {config!r}; configs: {', '.join(GPT2_SHAPES)}, or a config.json"
        )
    import json as _json

    try:
        data = _json.loads((path / "config.json" if path.is_dir() else path).read_text())
        cfg = tf.AutoConfig.for_model(**data)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"--config {config}: not a Hugging Face config ({exc})") from exc
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return tf.AutoModelForCausalLM.from_config(cfg)


def _corpus(paths, synthetic, net, seq_len, tokenizer, bin_dtype, max_tokens, seed):
    from ..data.corpus import load_corpus, synthetic_corpus

    if bool(paths) == (synthetic is not None):
        raise DataError("nclab measure-lm needs a corpus: token or text files, or --synthetic N")
    if synthetic is not None:
        vocab = int(net.get_output_embeddings().weight.shape[0])
        return synthetic_corpus(vocab, synthetic, seq_len=seq_len, seed=seed)
    return load_corpus(paths, seq_len, tokenizer, bin_dtype, max_tokens)


def _print(out: dict) -> None:
    from ..integrations.causal_lm import STUDY_KEYS as first
    from ..tables import metrics_table

    c = console()
    c.print(
        f"[bold]{out['model']}[/] over {out['corpus']}: {out['samples']} tokens, "
        f"{out['classes']} of the {out['vocab_size']} next-token classes occur; "
        f"{out['forward_passes']} forward passes for {out['batches']} batches, "
        f"{out['seconds']:.1f} s"
        + (
            f"; {out['cache']['spilled_bytes'] / 1e9:.2f} GB of features spilled to disk"
            if out["cache"].get("spilled_bytes")
            else ""
        )
    )
    rows = {
        layer: {**{k: m[k] for k in first if k in m}, **m} for layer, m in out["metrics"].items()
    }
    c.print(metrics_table(rows, title="linguistic collapse (Wu & Papyan's metrics first)"))
    for layer, skipped in out["skipped"].items():
        for key, why in skipped.items():
            c.print(f"[dim]{layer} {key}: not computed ({why})[/]")
    for layer, notes in out["notes"].items():
        for key, why in notes.items():
            c.print(f"[yellow]note[/] {layer} {key}: {why}")
