"""Train one training-lab run in a child process: start it, read its progress, stop it, collect the run.

The page never trains in the Streamlit process. `start(config, variant)` runs
`python -m course.lessons.training_lab --live ...` in its own session; the child
writes a progress file a few times a second and its run dict at the end, and
finishes early (with what it has) once the stop file exists.

With the learner's modules (`start(..., learner=results)`, once ex05-ex07 have
passed the grader), the child is `python -m course.app.lab_runner`: it stages the
learner's exercise files (references for the exercises not passed) as a package,
as the translation demos do (course.app.demo_runner), caps its own CPU time, and
trains the model built from that package; a failure of the learner's code comes
back as a sentence naming their file and line. A returned run is checked before
the page reads it. The Tatoeba slice is made here from the development data
(course.translation.lab_pairs) and handed to the child as a file.
"""

import argparse
import json
import os
import resource
import shutil
import site
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from course.app import demo_runner
from course.common.child_process import kill_group, spawn
from course.common.paths import PROJECT_ROOT
from course.lessons import training_lab
from course.lessons.lab_tasks import CHARS_TASK
from course.translation import char_corpus, lab_pairs

TIMEOUT_S = 600  # a run of the default size ends in seconds to a minute; this only catches a stuck child
SCRATCH_MB = 64  # a confined run: its /tmp and /dev/shm each, and the largest file it may write
LEARNER_EXERCISES = ("ex05", "ex06", "ex07")  # the lab's model is built from these exercises' modules
LEARNER_MODULES = ("ex01_softmax", "ex03_scoring", "ex05_multihead", "ex06_positional_encoding", "ex07_transformer")


class LabRunError(RuntimeError):
    """The child ended without a run; the message says why."""


@dataclass
class LiveRun:
    process: subprocess.Popen  # the training child
    folder: Path  # its progress, stop, run and stderr files
    started: float  # time.monotonic() at start
    label: tuple  # (task, variant, seed) being trained; variant "mine" for the learner's modules
    steps: int  # the run's budget, to check what comes back

    def file(self, name):
        """Path of one of the run's files."""
        return self.folder / name


def learner_ready(results):
    """True when ex05, ex06 and ex07 have all passed the grader (results: {ex_id: record})."""
    return all((results.get(ex) or {}).get("passed") for ex in LEARNER_EXERCISES)


def learner_modules(results):
    """{module: "learner" | "reference"}: the learner's file where its exercise passed."""
    return {m: "learner" if (results.get(demo_runner.MODULE_EXERCISE[m]) or {}).get("passed") else "reference"
            for m in LEARNER_MODULES}


def write_pairs(folder):
    """The Tatoeba slice as a JSON file in folder; LabRunError saying where the data goes if it is absent."""
    try:
        pairs = lab_pairs.load_slice()
    except FileNotFoundError:
        raise LabRunError(f"the sentence-pair task needs the Tatoeba file at {lab_pairs.DATA} (it is not shipped "
                          "with the course; see course/translation/data.py for how to fetch it)") from None
    path = folder / "pairs.json"
    path.write_text(json.dumps(pairs, ensure_ascii=False), encoding="utf-8")
    return path


def python_folders():
    """The folders the interpreter and its packages live in (not all of sys.path), to bind read-only in the
    sandbox -> sorted paths. A virtual environment inside the project (CI's `.venv/`) is one of them; the project
    itself, or a folder holding it, never is: that would show the class's database and secrets."""
    python = {sys.prefix, sys.base_prefix, *site.getsitepackages(), site.getusersitepackages()}
    return sorted(p for p in python if os.path.isdir(p) and not PROJECT_ROOT.resolve().is_relative_to(
        Path(p).resolve()))


def confined(command, folder, env):
    """`command` inside bubblewrap (a class's learner code on its app server): no network, no environment but
    `env`'s thread settings, no other process, and none of this machine's files but the operating system's
    and Python's (read-only), the course's code (read-only) and `folder`, the run's own (writable); killed
    TIMEOUT_S after its start even when no page collects it (a tab closed) -> the command. LabRunError
    saying what to install when bubblewrap is missing."""
    bwrap, timeout = (shutil.which(tool, path="/usr/bin:/bin") for tool in ("bwrap", "timeout"))
    if bwrap is None or timeout is None:
        raise LabRunError("training with your own modules needs the server's sandbox, which is not installed "
                          "(apt-get install bubblewrap): ask your instructor")
    # no --die-with-parent (its parent is the page run's thread, which ends first) and no --new-session (spawn
    # leaves it no terminal): kill_group's SIGKILL reaches the sandbox's first process, and with it, as the
    # init of its own pid namespace, every process inside
    box = [timeout, "-s", "KILL", str(TIMEOUT_S), bwrap, "--unshare-all", "--clearenv", "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/sbin"):
        box += ["--symlink", os.readlink(top), top] if os.path.islink(top) else ["--ro-bind-try", top, top]
    box += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for path in python_folders():
        box += ["--ro-bind", path, path]
    small = ["--size", str(SCRATCH_MB << 20)]  # its scratch space is memory: a little of it
    box += ["--proc", "/proc", "--dev", "/dev", *small, "--tmpfs", "/dev/shm", *small, "--tmpfs", "/tmp",  # first
            "--ro-bind", str(PROJECT_ROOT / "course"), str(PROJECT_ROOT / "course"),
            "--bind", str(folder), str(folder), "--chdir", str(PROJECT_ROOT)]
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        box += ["--setenv", name, env[name]]
    box += ["--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp", "--setenv", "PYTHONDONTWRITEBYTECODE",
            "1", "--setenv", "PYTHONIOENCODING", "utf-8", "--"]
    return box + command


def write_corpus(folder):
    """The character stream of the decoder-only model (chapter 14) as a JSON file in folder; LabRunError saying
    where the data goes if it is absent."""
    try:
        corpus = char_corpus.load_corpus()
    except FileNotFoundError:
        raise LabRunError(f"the character model needs the Tatoeba file at {char_corpus.DATA} (it is not shipped "
                          "with the course; see course/translation/data.py for how to fetch it)") from None
    path = folder / "pairs.json"
    path.write_text(json.dumps(corpus, ensure_ascii=False), encoding="utf-8")
    return path


def start(config, variant, learner=None, exercises_dir=None, confine=False):
    """Start training `config` (a LabConfig) in a child; the LiveRun handle.

    learner: the learner's grading results, to train with their modules (after learner_ready(learner)), whose
    files are in exercises_dir (default: exercises/); confine: run that child `confined` (a class's server).
    A decoder-only run (the reference modules only) also saves its weights: result() returns them.
    """
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-train-"))
    writers = {training_lab.PAIRS_TASK: write_pairs, CHARS_TASK: write_corpus}
    try:
        pairs = writers[config.task](folder) if config.task in writers else None
    except LabRunError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    files = ["--out", str(folder / "run.json"), "--progress", str(folder / "progress.json"),
             "--stop", str(folder / "stop")] + (["--pairs", str(pairs)] if pairs else [])
    if config.decoder_only and learner is None:
        files += ["--weights", str(folder / "weights.pt")]
    if learner is None:
        command = [sys.executable, "-m", "course.lessons.training_lab", "--live", json.dumps(asdict(config)),
                   "--variant", variant, *files]
    else:
        chosen = learner_modules(learner)
        demo_runner.stage_package(folder / "package", chosen, exercises_dir)  # package/learner_demo/
        command = [sys.executable, "-m", "course.app.lab_runner", "--package-dir", str(folder / "package"),
                   "--config", json.dumps(asdict(config)), "--cpu-seconds", str(2 * TIMEOUT_S),
                   "--learner-files", ",".join(f"{m}.py" for m, src in chosen.items() if src == "learner"), *files]
        variant = "mine"
    env = dict(os.environ, OMP_NUM_THREADS=str(config.threads), MKL_NUM_THREADS=str(config.threads))
    if confine and learner is not None:
        try:
            command = confined(command, folder, env)
        except LabRunError:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    with open(folder / "stderr.txt", "wb") as err:
        process = spawn(command, cwd=PROJECT_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
    return LiveRun(process, folder, time.monotonic(), (config.task, variant, config.seed), config.steps)


def _read_json(path):
    """The JSON in path, or None while it does not exist yet."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def progress(live):
    """{"step", "steps", "loss", "tests"} last written by the child, or None before its first step."""
    try:
        data = _read_json(live.file("progress.json"))
    except (ValueError, UnicodeDecodeError):
        return None
    ok = isinstance(data, dict) and all(training_lab.is_number(data.get(k), 0, live.steps) for k in ("step", "steps"))
    return data if ok and data["steps"] > 0 else None


def request_stop(live):
    """Ask the child to stop after its current step (it still writes the run so far)."""
    live.file("stop").touch()


def result(live):
    """The finished run dict, or None while the child trains; LabRunError if it ended without one."""
    if live.process.poll() is None:
        if time.monotonic() - live.started > TIMEOUT_S:
            kill(live)
            raise LabRunError(f"training took longer than {TIMEOUT_S} s and was stopped")
        return None
    kill_group(live.process)  # it has exited: end whatever it left running in its session
    try:
        run, failure = _read_json(live.file("run.json")), _read_json(live.file("error.json"))
        if run is None:
            if isinstance(failure, dict) and isinstance(failure.get("error"), str):
                raise LabRunError(failure["error"][:600])
            lines = live.file("stderr.txt").read_text(encoding="utf-8", errors="replace").strip().splitlines()
            raise LabRunError(f"training ended (exit code {live.process.returncode}) without a result: "
                              f"{(lines or ['no output'])[-1][:300]}")
        if live.label[1] == "mine":
            training_lab.check_run(run, live.steps)
            run = dict(run, variant="baseline", learner=True)
        elif live.file("weights.pt").is_file():  # a decoder-only run: its trained weights
            run = dict(run, state_dict=torch.load(live.file("weights.pt"), map_location="cpu", weights_only=True))
    except ValueError as err:  # unreadable JSON, or a run that is not as train() writes it
        raise LabRunError(str(err)) from None
    finally:
        shutil.rmtree(live.folder, ignore_errors=True)
    return run


def kill(live):
    """Kill the child and anything it started, and remove its files."""
    kill_group(live.process)
    shutil.rmtree(live.folder, ignore_errors=True)


# ---- the child that trains with the learner's modules ------------------------------------------


def main(argv=None):
    """Child: train the lab's baseline built from the staged learner package; a failure is written as error.json."""
    parser = argparse.ArgumentParser(prog="python -m course.app.lab_runner", description=__doc__.splitlines()[0])
    parser.add_argument("--package-dir", required=True, help=f"folder holding the {demo_runner.PACKAGE} package")
    parser.add_argument("--config", required=True, help="the LabConfig as JSON")
    parser.add_argument("--out", required=True)
    parser.add_argument("--progress", required=True)
    parser.add_argument("--stop", required=True)
    parser.add_argument("--pairs", help="the sentence-pair slice (JSON), for the tatoeba task")
    parser.add_argument("--cpu-seconds", type=int, default=2 * TIMEOUT_S)
    parser.add_argument("--learner-files", default="", help="comma-separated staged files that are the learner's")
    args = parser.parse_args(argv)
    demo_runner._limit_self(args.cpu_seconds)
    resource.setrlimit(resource.RLIMIT_FSIZE, (SCRATCH_MB << 20, SCRATCH_MB << 20))  # no file fills the disk
    pairs = json.loads(Path(args.pairs).read_text(encoding="utf-8")) if args.pairs else None
    sys.path.insert(0, args.package_dir)
    try:
        training_lab.live(args.config, args.out, args.progress, args.stop, "baseline", demo_runner.PACKAGE, pairs,
                          keep_maps=False)
    except BaseException as err:  # the learner's failure is data for the page
        message = demo_runner._describe(err, args.package_dir, args.learner_files.split(","))
        training_lab.write_json(Path(args.out).with_name("error.json"), {"error": message})


if __name__ == "__main__":
    main()
