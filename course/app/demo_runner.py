"""Translate with the learner's own modules, in a child process, and get JSON back.

Learner code never runs in the Streamlit process. The page calls
`run_learner(model_name, sentence)`: it stages a package with the learner's
files of the exercises they have passed (references for the rest), starts
`python -m course.app.demo_runner` on it with a time limit, and reads the child's
JSON (tokens, attention, top next tokens) or a clear error. The child's
`main` does the translation and writes the JSON to --out (stdout is the
learner's to print on).
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

from course.app.progress import load_newest
from course.common.child_process import kill_group, spawn
from course.common.exercise_index import EXERCISES
from course.common.paths import PROJECT_ROOT
from course.translation import demos
from course.translation.models import family
from course.translation.vocab import tokenize_en

PACKAGE = "learner_demo"
TIMEOUT_S = 60
MODULE_EXERCISE = {ex.module: ex.id for ex in EXERCISES}


class RunnerError(RuntimeError):
    """The learner's translation could not be produced; the message says why."""


def learner_modules(model_name, results=None, exercises_dir=None):
    """{module: "learner" | "reference"} for the model: the learner's files where that exercise's newest grading
    passed (the file as it stands now; results: {ex_id: record}, default the newest recorded)."""
    if model_name not in demos.learner_models():
        raise ValueError(f"{model_name!r} has no learner modules; use one of {', '.join(demos.learner_models())}")
    results = load_newest(exercises_dir) if results is None else results
    return {m: "learner" if (results.get(MODULE_EXERCISE[m]) or {}).get("passed") else "reference"
            for m in family(model_name).impl_modules}


def can_run(model_name, results=None, exercises_dir=None):
    """True when at least one of the model's own exercises (ex04; ex05-ex07) has passed the grader."""
    chosen = learner_modules(model_name, results, exercises_dir)
    return any(chosen[m] == "learner" for m in chosen if MODULE_EXERCISE[m] in family(model_name).exercises)


def stage_package(dest, chosen, exercises_dir=None):
    """Copy the chosen files (learner's or reference) into dest/learner_demo/."""
    exercises_dir = Path(exercises_dir or PROJECT_ROOT / "exercises")
    package = Path(dest) / PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""Staged for the demo: the learner\'s files and references."""\n')
    for module, source in chosen.items():
        origin = exercises_dir if source == "learner" else PROJECT_ROOT / "solutions"
        shutil.copyfile(origin / f"{module}.py", package / f"{module}.py")
    return package


def _limit_self(cpu_s):
    """In the child, before any learner code: a CPU-time cap and no core dumps."""
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_learner(model_name, sentence, checkpoint=None, results=None, exercises_dir=None,
                timeout=TIMEOUT_S, top_k=5):
    """Translate `sentence` with the learner's modules in a child -> the child's JSON dict.

    Raises RunnerError with a learner-facing message when it fails.
    """
    if not tokenize_en(sentence):
        raise RunnerError("the sentence has no words to translate; type some English")
    checkpoint = Path(checkpoint or demos.checkpoint_path(model_name))
    if not checkpoint.is_file():
        raise RunnerError(f"no checkpoint at {checkpoint}; train it with `{demos.train_command(model_name)}`")
    chosen = learner_modules(model_name, results, exercises_dir)
    with tempfile.TemporaryDirectory(prefix="attention-lab-demo-") as tmp:
        stage_package(tmp, chosen, exercises_dir)
        out = Path(tmp) / "result.json"
        command = [sys.executable, "-m", "course.app.demo_runner", "--checkpoint", str(checkpoint),
                   "--package-dir", tmp, "--sentence", sentence, "--top-k", str(top_k), "--out", str(out),
                   "--cpu-seconds", str(2 * timeout),
                   "--learner-files", ",".join(f"{m}.py" for m, src in chosen.items() if src == "learner")]
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONIOENCODING="utf-8")
        with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
            child = spawn(command, cwd=PROJECT_ROOT, env=env, stdout=stdout, stderr=stderr)
            try:
                child.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise RunnerError(f"your modules took longer than {timeout} s to translate one sentence "
                                  "(an endless loop?); the run was stopped") from None
            finally:
                kill_group(child)  # the child and anything it started (its own session)
            if not out.is_file():
                detail = (_tail(stderr) or _tail(stdout)).strip().splitlines()[-1:] or ["no output"]
                raise RunnerError(f"the translation process ended (exit code {child.returncode}) without "
                                  f"a result: {detail[0][:300]}")
        data = json.loads(out.read_text(encoding="utf-8"))
    if not data.get("ok"):
        raise RunnerError(data.get("error") or "the translation failed")
    data["modules"] = chosen
    return data


def _tail(file, limit=64 * 1024):
    """The last `limit` bytes the child wrote to file, as text."""
    file.seek(max(0, file.seek(0, os.SEEK_END) - limit))
    return file.read().decode("utf-8", errors="replace")


# ---- the child --------------------------------------------------------------------------------


def translation_to_dict(translation):
    """A Translation as plain JSON data (arrays as nested lists)."""
    def plain(array):
        return None if array is None else array.tolist()

    return {
        "ok": True, "source_tokens": list(translation.source_tokens), "tokens": list(translation.tokens),
        "text": translation.text, "cross_attention": plain(translation.cross_attention),
        "cross_attention_heads": plain(translation.cross_attention_heads),
        "decoder_self_attention": plain(translation.decoder_self_attention),
        "encoder_self_attention": plain(translation.encoder_self_attention),
        "top_next": [[[tok, p] for tok, p in step] for step in translation.top_next],
    }


def _describe(err, package_dir, learner_files=()):
    """One sentence about an exception, naming the learner's own line (else the staged package's)."""
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if os.path.abspath(f.filename).startswith(os.path.abspath(package_dir) + os.sep)]
    frames = [f for f in frames if os.path.basename(f.filename) in learner_files] or frames
    where = ""
    if frames:
        last = frames[-1]
        code = (last.line or "").strip()
        where = f" ({os.path.basename(last.filename)}, line {last.lineno}, in {last.name}: `{code}`)"
    if isinstance(err, NotImplementedError):
        return f"your module is not finished: NotImplementedError {err}{where}"
    return f"your module raised {type(err).__name__}: {err}{where}"


def main(argv=None):
    """Child: build the checkpoint's model from the staged package and translate one sentence."""
    parser = argparse.ArgumentParser(prog="python -m course.app.demo_runner", description=__doc__)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--package-dir", required=True, help="folder holding the learner_demo package")
    parser.add_argument("--sentence", required=True)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--out", required=True, help="where to write the JSON result")
    parser.add_argument("--cpu-seconds", type=int, default=2 * TIMEOUT_S)
    parser.add_argument("--learner-files", default="", help="comma-separated staged files that are the learner's")
    args = parser.parse_args(argv)
    _limit_self(args.cpu_seconds)
    import torch

    from course.translation.checkpoint import load_checkpoint
    from course.translation.decoding import translate

    torch.set_num_threads(1)
    sys.path.insert(0, args.package_dir)
    try:
        loaded = load_checkpoint(args.checkpoint, impl=PACKAGE)
        result = translation_to_dict(translate(loaded.model, args.sentence, loaded.src_vocab,
                                               loaded.tgt_vocab, top_k=args.top_k))
    except BaseException as err:  # the learner's failure is data for the page
        learner_files = args.learner_files.split(",")
        result = {"ok": False, "error": _describe(err, args.package_dir, learner_files)}
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
