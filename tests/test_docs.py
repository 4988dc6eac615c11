"""The README stays a short front door and the docs site in docs/ holds the rest: every page reachable from the
site's navigation, the README's links pointing at pages that exist, its set-up commands the ones CI runs.
(`mkdocs build --strict` in .ci/run checks the site's own links and anchors.)"""

import re

import yaml

from tests.classroom_support import ROOT

README_MAX_BYTES = 8 * 1024


def nav_pages(entries):
    for entry in entries:
        for value in entry.values():
            yield from (nav_pages(value) if isinstance(value, list) else [value])


def test_the_readme_is_short_and_links_only_to_pages_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= README_MAX_BYTES
    links = re.findall(r"\]\(([^)#]+)", text)
    assert len(links) >= 10, links
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, missing


def test_the_readmes_set_up_commands_are_the_ones_ci_runs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8") + (ROOT / ".ci" / "check-learner-install").read_text()
    assert "    pip install -r requirements.txt && streamlit run app.py" in text
    assert "    pip install -r requirements-dev.txt && python tests/run_suite.py" in text
    for command in ("pip install -q -r requirements.txt", "pip install -q -r requirements-dev.txt",
                    "python tests/run_suite.py", "mkdocs build --strict"):
        assert command in ci, command


def test_every_docs_page_is_in_the_sites_navigation():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = set(nav_pages(config["nav"]))
    pages = {path.relative_to(ROOT / "docs").as_posix() for path in (ROOT / "docs").rglob("*.md")}
    assert pages == listed, (pages - listed, listed - pages)
