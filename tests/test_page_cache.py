"""page_cache: a page's cached function is wrapped once per process, not on each of the page's reruns, and the
wrapper built first keeps serving its entries."""

from course.app.ui import page_cache

CALLS = []


def doubled(x):
    CALLS.append(x)
    return 2 * x


def test_the_same_function_and_options_give_the_one_wrapper_built_first():
    first = page_cache(doubled, max_entries=4)
    assert page_cache(doubled, max_entries=4) is first
    assert page_cache(doubled, max_entries=8) is not first  # other options: another wrapper
    assert page_cache(doubled) is not first


def test_the_wrapper_caches_across_the_pages_runs():
    CALLS.clear()
    page_cache(doubled, max_entries=2).clear()
    assert [page_cache(doubled, max_entries=2)(x) for x in (3, 3, 5, 3)] == [6, 6, 10, 6]
    assert CALLS == [3, 5]  # computed once per argument, by whichever run asked first
