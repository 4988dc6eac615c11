"""Two processes (pytest-xdist workers, two graders) that miss the same mutant cache build it once."""

import threading

from grader.diagnosis import mutants


def test_a_cache_built_while_waiting_for_the_lock_is_read_not_built_again(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_MUTANT_CACHE", str(tmp_path))
    done = {}
    with mutants.build_lock("ex00"):  # another process is building ex00's cache
        waiting = threading.Thread(target=lambda: done.update(result=mutants.ensure(["ex00"])))
        waiting.start()
        waiting.join(timeout=1.0)
        assert waiting.is_alive(), "ensure() did not wait for the build in progress"
        mutants.cache_path("ex00").write_bytes(b"the other process's cache")
    waiting.join(timeout=60)
    assert done["result"] == {}, done  # nothing built: the other process's cache is the one
    assert mutants.cache_path("ex00").read_bytes() == b"the other process's cache"
