"""Strict mode with a virtual environment under /tmp: the sandbox's own /tmp must not hide it."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_helpers import ROOT, reference, require_strict

import torch


@pytest.mark.slow
def test_strict_mode_works_with_a_venv_under_tmp(tmp_path):
    require_strict()
    assert str(tmp_path).startswith("/tmp/"), tmp_path
    venv = tmp_path / "venv"
    if sys.prefix != sys.base_prefix:
        # the tests run from a venv (CI's own, fresh each run): a copy of it under /tmp, hard-linked where the
        # file system allows, holds every package the grader needs (a venv's paths follow its pyvenv.cfg)
        if subprocess.run(["cp", "-al", sys.prefix, str(venv)]).returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run(["cp", "-a", sys.prefix, str(venv)], check=True)
    else:
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
        # torch itself lives in the venv (as after `pip install` there): its lazy imports need the venv's folder
        site = next((venv / "lib").glob("python3*/site-packages"))
        (site / "torch").symlink_to(Path(torch.__file__).parent)
    python = venv / "bin" / "python"
    found = subprocess.run([python, "-c", "import torch; print(torch.__file__)"], capture_output=True,
                           text=True, check=True).stdout.strip()
    assert found.startswith(str(venv)), found
    target = tmp_path / "work"
    target.mkdir()
    (target / "ex00_paths.py").write_text(reference("ex00_paths.py"), encoding="utf-8")
    done = subprocess.run([python, "-m", "grader", "--sandbox", "strict", "--json",
                           "--target", str(target), "ex00"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    report = json.loads(done.stdout)
    [ex00] = report["exercises"]
    assert ex00["passed"], ex00["summary"]
    assert "sys.exit" not in done.stdout
