"""Who may do what in a class, and where each role lands after signing in: the one definition (classroom/web/access.py
checks it for every action, the class pages and the LMS launch read it). Imports only classroom.models and
course.common.pages_index, so the LTI endpoint can read it without the web side.
"""

from course.common import pages_index

from .models import ROLES

PERMISSIONS = {
    "submit": ROLES,
    "read_own": ROLES,
    "read_any": ("ta", "instructor"),
    "regrade": ("ta", "instructor"),
    "gradebook": ("ta", "instructor"),
    "analytics": ("ta", "instructor"),
}
GRADEBOOK_PATH = "gradebook"  # the class gradebook page's URL path (classroom/web/learner.py CLASS_PAGES)
PRACTICE_PATH = pages_index.get("practice").url_path


def allowed(role, action):
    """May a role do an action?"""
    return role in PERMISSIONS[action]


def landing_url(app_url, role):
    """Where a sign-in from the LMS lands: the gradebook for the roles that may open it, Practice for learners."""
    path = GRADEBOOK_PATH if allowed(role, "gradebook") else PRACTICE_PATH
    return f"{app_url.rstrip('/')}/{path}"
