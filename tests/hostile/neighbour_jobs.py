"""Hostile ex03: read the references staged for neighbour jobs of the same run."""

import glob

for pattern in ("../*/learner/*.py", "/tmp/attention-lab-grade-*/*/learner/*.py",
                "/tmp/attention-lab-grade-*/*/box/learner/*.py", "/job/../*/learner/*.py"):
    for path in glob.glob(pattern):
        text = open(path).read()
        print("NEIGHBOUR FILE", path)
        if "class DotProductAttention" in text and "NotImplementedError" not in text:
            use_reference(text)
