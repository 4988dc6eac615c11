"""Train a translator: `python -m course.translation.train --model transformer --data PATH`.

Time-boxed (--minutes, training wall-clock only), resumable (--resume, from
<resume-dir>/<model>.resume.pt, written every --save-every seconds and on Ctrl-C),
with a cosine learning-rate decay over the time budget after a linear warm-up.
With --ema, an exponential moving average of the weights is kept from
--ema-start (a fraction of the budget) on, and it is what gets validated and
saved; the live weights stay in the resume file. At the end the model is saved
in half precision to <out>/<model>.pt and
evaluated on the held-out test set (greedy and beam BLEU, BLEU by source
length in <out>/<model>.bleu.json). On a GPU: bf16 autocast and fused attention.
"""

import argparse

from course.common.paths import PROJECT_ROOT

from .evaluate import ALPHAS
from .models import config_class, family, model_names
from .subword import DEFAULT_SIZE as SUBWORD_SIZE
from .training import SHAPE_FIELDS, train

SWITCH_HELP = {  # on/off shape options (--name / --no-name)
    "bidirectional": "RNN encoder reads the source both ways, num_hiddens // 2 units per direction",
    "tie_embeddings": "Transformer's output layer shares the decoder's token embedding matrix",
}
RESUME_DIR = PROJECT_ROOT / ".attention_lab" / "resume"


def parse_args(argv=None):
    """Command-line options; None shape/optimiser values take the model family's train_defaults."""
    p = argparse.ArgumentParser(prog="python -m course.translation.train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=model_names(), required=True)
    p.add_argument("--data", required=True, help="Tatoeba cmn-eng TSV (English<TAB>Chinese<TAB>attribution)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--minutes", type=float, default=15.0, help="training time budget (wall clock)")
    p.add_argument("--max-epochs", type=int, default=1000)
    p.add_argument("--out", default="checkpoints", help="folder for <model>.pt and <model>.bleu.json")
    p.add_argument("--resume-dir", default=str(RESUME_DIR),
                   help="folder for <model>.resume.pt (large, never shipped; default is git-ignored)")
    p.add_argument("--resume", action="store_true", help="continue from <resume-dir>/<model>.resume.pt")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    p.add_argument("--impl", default="solutions", help="package providing the attention modules")
    for name in SHAPE_FIELDS:  # None: the model family's train_defaults
        if name == "decoder_init":
            p.add_argument("--decoder-init", choices=("encoder", "zeros"), default=None,
                           help="Bahdanau decoder's first state: the encoder's final state, or zeros")
            continue
        if name in SWITCH_HELP:
            p.add_argument("--" + name.replace("_", "-"), action=argparse.BooleanOptionalAction, default=None,
                           help=SWITCH_HELP[name])
            continue
        p.add_argument("--" + name.replace("_", "-"), type=float if name.endswith("dropout") else int, default=None,
                       help="model shape; the default depends on --model (its train_defaults in course.translation.models)")
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--lr", type=float, default=None, help="peak learning rate (Adam)")
    p.add_argument("--warmup", type=int, default=None, help="linear warm-up steps")
    p.add_argument("--label-smoothing", type=float, default=None)
    p.add_argument("--clip", type=float, default=1.0, help="gradient norm clipping")
    p.add_argument("--ema", type=float, default=0.0,
                   help="decay of an exponential moving average of the weights, updated every step from "
                        "--ema-start on; the average is validated and saved (0: off; e.g. 0.999)")
    p.add_argument("--ema-start", type=float, default=0.5,
                   help="fraction of the time budget after which the moving average starts")
    p.add_argument("--min-freq", type=int, default=2, help="vocabulary minimum count (both sides)")
    p.add_argument("--src-subword", type=int, default=SUBWORD_SIZE,
                   help="English side: a BPE vocabulary of this many pieces learned on the training split "
                        "(course.translation.subword); 0: whole words seen --min-freq times")
    p.add_argument("--max-len", type=int, default=40, help="drop training pairs longer than this (tokens)")
    p.add_argument("--max-pairs", type=int, default=None, help="use a seeded subset (quick checks)")
    p.add_argument("--test-size", type=int, default=1000)
    p.add_argument("--valid-size", type=int, default=500)
    p.add_argument("--long-size", type=int, default=0,
                   help="extra held-out pairs of 11+ words, pooled into BLEU by source length (e.g. 200; "
                        "train all three models with the same value so their buckets compare)")
    p.add_argument("--beam-size", type=int, default=4)
    p.add_argument("--beam-alpha", type=float, default=None,
                   help=f"beam search's length-penalty exponent for the test BLEU; default: the best of "
                        f"{ALPHAS} on the validation set")
    p.add_argument("--no-eval", action="store_true", help="skip the test-set BLEU at the end")
    p.add_argument("--fp32", action="store_true", help="save float32 weights instead of float16")
    p.add_argument("--fused-attention", choices=("auto", "on", "off"), default="auto",
                   help="fused scaled_dot_product_attention in training (auto: on a GPU)")
    p.add_argument("--log-every", type=float, default=10.0, help="seconds between progress lines")
    p.add_argument("--save-every", type=float, default=120.0, help="seconds between resume saves")
    p.add_argument("--valid-every", type=float, default=120.0,
                   help="seconds between validation-loss checks, logged and kept in the metrics (0: only at the end)")
    args = p.parse_args(argv)
    if not 0.0 <= args.ema < 1.0:
        p.error(f"--ema must be a decay in [0, 1), e.g. 0.999 (0 turns it off); got {args.ema}")
    if not 0.0 <= args.ema_start <= 1.0:
        p.error(f"--ema-start is a fraction of the time budget in [0, 1]; got {args.ema_start}")
    fields = config_class(args.model).__dataclass_fields__
    foreign = ["--" + k.replace("_", "-") for k in SHAPE_FIELDS if k not in fields and getattr(args, k) is not None]
    if foreign:
        p.error(f"{', '.join(foreign)} does not apply to --model {args.model}; drop it")
    for key, value in family(args.model).train_defaults.items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    return args

def main(argv=None):
    """Entry point of `python -m course.translation.train`."""
    train(parse_args(argv))


if __name__ == "__main__":
    main()
