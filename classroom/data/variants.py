"""Each learner's exercise variant, drawn from the class's secret (course.common.exercise_variants).

Every function here that takes the store is one transaction. Access rules are checked by the callers in
classroom/web/access.py; these functions trust their arguments.
"""

import secrets

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError


from course.common import exercise_variants as variants

from . import exercise_table
from .models import Setting, VariantAssignment, utcnow



VARIANT_SECRET = "variant_secret"  # the settings row holding the class's variant secret (not a class setting)


def _variant_secret(session):
    """The class's secret for assigning variants, made at first need (32 random bytes, hex)."""
    row = session.get(Setting, VARIANT_SECRET)
    if row is not None:
        return row.value
    try:
        with session.begin_nested():
            session.add(Setting(key=VARIANT_SECRET, value=secrets.token_hex(32)))
    except IntegrityError:  # another transaction made it first: use theirs
        pass
    return session.get(Setting, VARIANT_SECRET, populate_existing=True).value


def assigned_variant(session, user_id, ex_id):
    """The learner's variant of an exercise (grader/variants.py): stored at its first need, from the class
    secret and the learner's id, and the same ever after (never taken from what the learner sends)."""
    query = select(VariantAssignment.variant).where(VariantAssignment.user_id == user_id,
                                                    VariantAssignment.exercise_id == ex_id)
    found = session.scalar(query)
    if found is not None:
        return found
    switch = session.get(Setting, "variants")
    if switch is not None and int(switch.value) == 0:
        return 0  # a class without variants: nothing is stored, so turning them on later assigns one
    number = variants.assign(_variant_secret(session), user_id, ex_id)
    try:
        with session.begin_nested():
            session.add(VariantAssignment(user_id=user_id, exercise_id=ex_id, variant=number, created_at=utcnow()))
    except IntegrityError:  # assigned meanwhile by another transaction: that one stands
        return session.scalar(query)
    return number


def learner_variant(store, user_id, ex_id):
    """The learner's variant of an exercise, assigned now if it is their first look (for the exercise text)."""
    exercise_table.get(ex_id)
    with store.session() as session:
        return assigned_variant(session, user_id, ex_id)
