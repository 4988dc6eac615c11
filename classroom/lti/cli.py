"""The LMS commands of `python -m classroom`: lti-register, lti-serve, lti-sync, lti-relink, lti-unlink (registered by
classroom/cli.py)."""

import sys
import time


def add_commands(commands, db_option):
    """Add the lti-* subcommands to the class command line's subparsers."""
    p = commands.add_parser("lti-register", help="register an LMS (LTI 1.3 platform) that may launch the tool")
    db_option(p)
    p.add_argument("--issuer", required=True, help="the platform's issuer (Canvas: https://canvas.instructure.com)")
    p.add_argument("--client-id", required=True, help="the client id the LMS gave the tool")
    p.add_argument("--auth-login-url", required=True, help="the platform's OIDC authorization endpoint")
    p.add_argument("--auth-token-url", required=True, help="the platform's OAuth2 token endpoint")
    p.add_argument("--key-set-url", required=True, help="the platform's public keys (JWKS)")
    p.add_argument("--auth-audience", default=None, help="the token endpoint's audience, when not its URL")
    p.add_argument("--deployment", action="append", required=True, metavar="ID", help="a deployment id (repeatable)")
    p.add_argument("--auto-add-learners", action="store_true",
                   help="LMS learners not on the roster join it as learners when they launch")

    p = commands.add_parser("lti-serve", help="serve the LMS's login and launch (and the tool's keys)")
    db_option(p)
    p.add_argument("--app-url", required=True,
                   help="the Streamlit app's public URL: a launch lands on its Practice page (learners) or its gradebook (staff)")
    p.add_argument("--tool-url", default=None, help="this endpoint's public URL (default: as requests reach it)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8600)

    p = commands.add_parser("lti-sync", help="push scores to the LMS courses (AGS) and read their rosters (NRPS)")
    db_option(p)
    p.add_argument("--once", action="store_true", help="one pass (rosters, then every due score), then exit")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between passes (default 2)")
    p.add_argument("--roster-every", type=float, default=600.0, help="seconds between roster reads (default 600)")

    p = commands.add_parser("lti-relink", help="make an LMS account another roster member's (its launches were "
                            "refused as account_moved after its email changed)")
    db_option(p)
    p.add_argument("--issuer", required=True, help="the LMS's issuer (as the refusal names it)")
    p.add_argument("--sub", required=True, help="the LMS account's user id (as the refusal names it)")
    p.add_argument("--email", required=True, help="the roster member the account belongs to from now on")

    p = commands.add_parser("lti-unlink", help="forget a roster member's LMS account (their next launch links one)")
    db_option(p)
    p.add_argument("--email", required=True, help="the roster member")
    p.add_argument("--issuer", default=None, help="only this LMS's account (default: every LMS)")


def cmd_register(args):
    from ..data.db import Store
    from . import config

    store = Store(args.db)
    row, added = config.register_platform(store, args.issuer, args.client_id, args.auth_login_url,
                                          args.auth_token_url, args.key_set_url, args.deployment,
                                          args.auth_audience, args.auto_add_learners)
    config.tool_key(store)
    print(f"{'registered' if added else 'updated'} {row.issuer} (client id {row.client_id}, deployments "
          f"{', '.join(row.deployment_ids)}); learners not on the roster "
          f"{'join it at their first launch' if row.auto_add_learners else 'are refused'}")
    return 0


def cmd_serve(args):
    from . import launch

    print(f"LTI endpoint on http://{args.host}:{args.port}: enter in the LMS the login URL .../lti/login, the "
          "launch (redirect) URL .../lti/launch and the key set URL .../lti/jwks", file=sys.stderr)
    launch.serve(args.db, args.app_url, args.host, args.port, args.tool_url)
    return 0


def sync_rosters(store):
    """Read every course's members; print what happened -> whether all rosters were read."""
    from pylti1p3.exception import LtiException
    from requests import RequestException

    from . import roster

    ok = True
    for context_pk in roster.courses_with_roster(store):
        try:
            report = roster.sync_course(store, context_pk)
        except (LtiException, RequestException) as err:
            print(f"roster of course {context_pk} not read, tried again later: {str(err)[:300]}", file=sys.stderr)
            ok = False
            continue
        print(f"roster of course {context_pk}: {report.linked} member(s) linked, "
              f"{len(report.not_admitted)} left out" + "".join(f"\n  {line}" for line in report.not_admitted))
    return ok


def sync_pass(store, once):
    """Push every score due now -> (pushed, unchanged, failed)."""
    from . import passback

    total = passback.PushReport()
    while True:
        report = passback.push_due(store)
        total.pushed, total.unchanged, total.failed = (total.pushed + report.pushed,
                                                       total.unchanged + report.unchanged,
                                                       total.failed + report.failed)
        for error in dict.fromkeys(report.errors):
            print(f"not delivered, retried later: {error}", file=sys.stderr)
        if not (report.pushed or report.unchanged):
            break
    if total.pushed or total.failed or once:
        print(f"scores: {total.pushed} pushed, {total.unchanged} already held by the LMS, "
              f"{total.failed} waiting for a retry", flush=True)
    return total


def cmd_sync(args):
    from sqlalchemy.exc import DBAPIError

    from ..data.db import Store

    store = Store(args.db)
    next_roster, db_wait = 0.0, 1.0
    while True:
        try:
            if time.monotonic() >= next_roster:
                sync_rosters(store)
                next_roster = time.monotonic() + args.roster_every
            total = sync_pass(store, args.once)
            db_wait = 1.0
        except DBAPIError as err:  # the database went away: nothing was marked delivered that was not
            if args.once:
                raise
            print(f"the class database is unreachable, trying again in {db_wait:g} s: {err.orig}", file=sys.stderr)
            time.sleep(db_wait)
            db_wait = min(db_wait * 2, 30.0)
            continue
        if args.once:
            return 1 if total.failed else 0
        time.sleep(args.interval)


def cmd_relink(args):
    from ..data.db import Store
    from . import accounts

    courses = accounts.relink(Store(args.db), args.issuer, args.sub, args.email)
    print(f"LMS account {args.sub} of {args.issuer} is {args.email.strip().lower()}'s now, in {courses} course(s); "
          "their scores are sent to it at the next lti-sync pass")
    return 0


def cmd_unlink(args):
    from ..data.db import Store
    from . import accounts

    removed = accounts.unlink(Store(args.db), args.email, args.issuer)
    print(f"{removed} course link(s) of {args.email.strip().lower()} removed: their next launch links the LMS "
          "account they launch from")
    return 0


COMMANDS = {"lti-register": cmd_register, "lti-serve": cmd_serve, "lti-sync": cmd_sync, "lti-relink": cmd_relink,
            "lti-unlink": cmd_unlink}
