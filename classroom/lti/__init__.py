"""Attention Lab as an LTI 1.3 (Advantage) tool: launches from an LMS, its roster (NRPS), scores back (AGS).

`config` holds the registered platforms and the tool's key, `launch` the small
ASGI app that takes the LMS's login and launch (`python -m classroom lti-serve`),
`outbox` and `passback` push the gradebook's best scores, `roster` reads the
course's members; `python -m classroom lti-sync` runs the last two.
"""
