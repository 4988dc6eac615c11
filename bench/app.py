"""Benchmark the app: per-page rerun time after a widget change, and cold start.

    python bench/app.py [--runs N] [--page KEY ...]

For every page in course/common/pages_index.py that exists, AppTest opens the page,
then changes one widget (the first slider, radio, select box... on the page,
alternating between two values) and times the rerun, the pages taking turns; the
median of N reruns is printed against the 50 ms goal (on an idle machine). Cold start is the time from
`streamlit run app.py` to the server's health check answering, and the time of
the first script run in a fresh Python process (imports included).
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOAL_MS = 50
PREFERRED = ("slider", "select_slider", "number_input", "selectbox", "radio", "checkbox", "text_input", "text_area")


def page_widgets(node):
    """All widgets under an AppTest node."""
    from streamlit.testing.v1.element_tree import Widget

    found = [node] if isinstance(node, Widget) else []
    for child in getattr(node, "children", {}).values():
        found.extend(page_widgets(child))
    return found


def other_radio_value(widget):
    """Another value for a radio whose values are its shown options (None if unknown)."""
    current = widget.format_func(widget.value)
    for option in widget.options:
        try:
            if option != current and widget.format_func(option) == option:
                return option
        except Exception:  # a format_func that only knows the real values
            return None
    return None


def pick_widget(at):
    """The widget to change on this page (not the language switch), or None."""
    candidates = [w for w in page_widgets(at._tree) if w.key != "app_lang" and not getattr(w, "disabled", False)]
    for kind in PREFERRED:
        for widget in candidates:
            if widget.type == kind and (kind != "radio" or other_radio_value(widget) is not None):
                return widget.key
    return None


def two_values(widget):
    """Two different settings to alternate between: ("value", v) or ("index", i)."""
    kind = widget.type
    if kind == "slider":
        return ("value", widget.min), ("value", widget.max)
    if kind == "select_slider":
        return ("value", widget.options[0]), ("value", widget.options[-1])
    if kind == "number_input":
        return ("value", widget.value), ("value", widget.value + (widget.step or 1))
    if kind == "selectbox":
        return ("index", 0), ("index", min(1, len(widget.options) - 1))
    if kind == "checkbox":
        return ("value", True), ("value", False)
    if kind == "radio":
        return ("value", widget.value), ("value", other_radio_value(widget))
    return ("value", "a"), ("value", "b")


def set_widget(at, key, setting):
    """Apply a setting from two_values to the widget with this key."""
    widget = next(w for w in page_widgets(at._tree) if w.key == key)
    how, value = setting
    if how == "index":
        widget.select_index(value)
    else:
        widget.set_value(value)


def open_page(page):
    """(AppTest on `page`, the widget key to change or None, its two settings)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["app_lang"] = "en"
    at.run()
    at.switch_page(page.path).run()
    key = pick_widget(at)
    if key is None:
        return at, None, (None, None)
    return at, key, two_values(next(w for w in page_widgets(at._tree) if w.key == key))


def rerun_ms(page, at, key, setting):
    """ms of one rerun of `at` after changing its widget (a plain rerun when key is None)."""
    if key is not None:
        set_widget(at, key, setting)
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"{page.path} raised: {at.exception[0].value}")
    return elapsed * 1000


def time_pages(pages, runs):
    """{page key: (median ms, widget key)} of reruns after changing one widget on each page.

    Every page is opened first, then the pages take turns, one rerun each per round, `runs` rounds after one
    untimed round (which may fill caches): a burst of load on the machine (a CPU-bound loop's time varies by a
    quarter from second to second on the 2-core development VM) then slows every page a little instead of the
    seven reruns of the one page being timed at that moment."""
    opened = {page.key: (page, *open_page(page)) for page in pages}
    times = {key: [] for key in opened}
    for i in range(runs + 1):
        for key, (page, at, widget, values) in opened.items():
            ms = rerun_ms(page, at, widget, values[i % 2])
            if i:
                times[key].append(ms)
    return {key: (statistics.median(times[key]), opened[key][2]) for key in opened}


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cold_start():
    """Seconds from `streamlit run app.py` to /_stcore/health answering."""
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while time.perf_counter() - start < 120:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                    return time.perf_counter() - start
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("streamlit did not start within 120 s")
    finally:
        child.terminate()
        child.wait(timeout=30)


def first_run():
    """Seconds for the first run of app.py in a fresh Python (imports, first page)."""
    code = ("import time; t = time.perf_counter(); from streamlit.testing.v1 import AppTest; "
            f"AppTest.from_file({str(ROOT / 'app.py')!r}, default_timeout=120).run(); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="reruns per page (default 7)")
    parser.add_argument("--page", action="append", help="time only this page key (repeatable; e.g. --page lab)")
    parser.add_argument("--no-cold-start", action="store_true", help="skip the cold-start figures")
    args = parser.parse_args()
    os.environ["ATTENTION_LAB_HOME"] = tempfile.mkdtemp(prefix="bench-lab-")  # never touch real notes
    from course.common import pages_index

    print(f"page rerun after one widget change (median of {args.runs}, the pages taking turns; goal < {GOAL_MS} ms; "
          f"load {os.getloadavg()[0]:.1f})")
    pages = [p for p in pages_index.existing() if not args.page or p.key in args.page]
    for page_key, (ms, key) in time_pages(pages, args.runs).items():
        verdict = "ok" if ms < GOAL_MS else "SLOW"
        print(f"  {page_key:<16} {ms:8.1f} ms  {verdict:<4}  (widget: {key or 'none, plain rerun'})")
    missing = [p.path for p in pages_index.PAGES if not p.file.is_file()]
    if missing:
        print(f"  not yet written: {', '.join(missing)}")
    if args.no_cold_start:
        return
    print(f"cold start: streamlit run -> health check {cold_start():.2f} s; "
          f"first script run in a fresh process {first_run():.2f} s")


if __name__ == "__main__":
    main()
