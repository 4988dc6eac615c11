"""A pytest plugin for tests/test_tiers.py: `-p tests.tier_listing` writes, after the collection and its `-m`
selection, each selected test's node id, marks, fixture names and parameters as JSON to the file named by
TIER_LISTING."""

import json
import os


def pytest_collection_finish(session):
    listing = []
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        listing.append({"id": item.nodeid, "marks": sorted({mark.name for mark in item.iter_markers()}),
                        "fixtures": sorted(item.fixturenames), "params": {name: repr(value) for name, value in params.items()}})
    with open(os.environ["TIER_LISTING"], "w", encoding="utf-8") as file:
        json.dump(listing, file)
