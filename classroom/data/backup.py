"""Backup and restore of the class database, consistent while the app and workers write.

`python -m classroom backup OUT` and `python -m classroom restore IN` (the class command line):

- SQLite: SQLite's online backup API (sqlite3.Connection.backup) copies the database in one step inside
  one read transaction, so the copy is the database as it was when that transaction began, whatever the
  workers commit meanwhile (copying class.db alone misses what still sits in class.db-wal; copying both
  apart in time mixes two moments). The copy is a single file (journal mode DELETE), checked with
  `PRAGMA integrity_check` and `PRAGMA foreign_key_check`.
- Postgres: `pg_dump --format=custom` (one repeatable-read snapshot), checked by listing it with
  `pg_restore --list`; restored by `pg_restore` into SQL run by `psql` in one transaction. Both from the
  Postgres binaries (the newest /usr/lib/postgresql/*/bin, else the PATH).

A backup is written to a temporary name beside OUT and renamed into place once complete and checked, so
OUT is either the old file or the whole new one. OUT an existing folder: the backup is named there by
its time (class-YYYYmmddTHHMMSSZ.sqlite / .pgdump), and --keep N keeps the N newest such files.

A restore brings the backup to this code's schema (as `init` does) and revokes every sign-in that the
backup still holds: every session, every unused sign-in link, every LTI login in flight; and sign-ins with
the identity provider issued before the restore no longer open a session (oidc_session.NOT_BEFORE).
Whoever was signed in signs in again, so nobody signs in from a session revoked after the backup was
taken. It refuses a target that holds tables unless --force. SQLite: the backup is prepared in a
temporary copy (migrated, sign-ins revoked, checked) and installed in one step (a rename, or SQLite's
backup API into an existing database, which other connections see whole or not at all). Postgres: the
restore and the revocation run in one psql transaction; the schema upgrade follows.
"""

import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from datetime import UTC, datetime
from glob import glob
from pathlib import Path

from alembic.util import CommandError
from sqlalchemy import inspect, text
from sqlalchemy.engine import make_url

from .db import Store, check_schema, migrate, normalize_url
from .models import utcnow
from .oidc_session import NOT_BEFORE

SQLITE_MAGIC = b"SQLite format 3\x00"  # the first bytes of every SQLite database file
PGDUMP_MAGIC = b"PGDMP"  # the first bytes of a pg_dump custom-format archive
NAMED = re.compile(r"^class-\d{8}T\d{6}Z\.(sqlite|pgdump)$")  # the backups named by their time in a folder
CLASS_TABLES = {"alembic_version", "users", "submissions"}  # what every class database holds
STAMP = "%Y-%m-%d %H:%M:%S.%f"  # how the store writes a naive UTC time (SQLite) and Postgres reads one


class BackupError(ValueError):
    """A backup or restore that cannot be done; the message says what, where and how to fix it."""


# ---- where things are -------------------------------------------------------------------------


def _url(db):
    """The SQLAlchemy URL of the class database."""
    return make_url(normalize_url(db))


def _plain(url):
    """The URL as text with its password (str() of a URL hides it)."""
    return url.render_as_string(hide_password=False)


def _is_sqlite(url):
    return url.get_backend_name() == "sqlite"


def sqlite_file(db):
    """The database file of the SQLite class database at db (a sqlite:/// URL or a path; BackupError for an
    in-memory one)."""
    url = _url(db)
    if not url.database or url.database == ":memory:":
        raise BackupError(f"{url}: an in-memory database has nothing to back up or restore into")
    return Path(url.database).expanduser().resolve()


def pg_tool(name):
    """The path of a Postgres program (pg_dump, pg_restore, psql): the newest installed server's, else the
    PATH's."""
    found = sorted(glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(Path(p).parts[-3])
                   if Path(p).parts[-3].isdigit() else 0)
    path = found[-1] if found else shutil.which(name)
    if not path:
        raise BackupError(f"{name} not found: install the Postgres client programs "
                          "(Debian: apt-get install postgresql-client) or put them on the PATH")
    return path


def postgres_connection(db):
    """How a Postgres program (pg_dump, pg_restore, psql, pg_amcheck) reaches the class database at db (a
    postgresql:// URL): (a libpq URI without the password, the environment that carries the password)."""
    url = _url(db)
    env = dict(os.environ)
    if url.password:
        env["PGPASSWORD"] = str(url.password)
    return url.set(drivername="postgresql", password=None).render_as_string(hide_password=False), env


def _run(args, env=None, what=""):
    """Run a Postgres program; BackupError with its own message when it fails."""
    done = subprocess.run(args, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip()[-2000:]
        raise BackupError(f"{what or Path(args[0]).name} failed (exit {done.returncode}): {message}")
    return done.stdout


def _fsync(path):
    """Flush a file (or a folder's entries) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temporary(beside):
    """A fresh temporary file name in the folder of `beside` (a rename from it is atomic)."""
    fd, name = tempfile.mkstemp(prefix=f".{beside.name}.", suffix=".tmp", dir=beside.parent)
    os.close(fd)
    return Path(name)


def _install(temporary, out):
    """Rename a complete temporary file onto out, durably."""
    _fsync(temporary)
    os.replace(temporary, out)
    _fsync(out.parent)


def _remove(path):
    for extra in ("", "-journal", "-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)


# ---- SQLite --------------------------------------------------------------------------------------


def _sqlite_connect(path):
    """A plain sqlite3 connection that waits for locks as the store does."""
    connection = sqlite3.connect(str(path), timeout=60, isolation_level=None)
    connection.execute("PRAGMA busy_timeout=60000")
    return connection


def sqlite_problems(path):
    """What SQLite's own checks find wrong in a database file: [] when integrity_check says ok and no
    foreign key is broken."""
    connection = _sqlite_connect(path)
    try:
        found = [row[0] for row in connection.execute("PRAGMA integrity_check")]
        broken = connection.execute("PRAGMA foreign_key_check").fetchall()
    except sqlite3.DatabaseError as err:  # not a database, or one too damaged to read
        return [str(err)]
    finally:
        connection.close()
    problems = [] if found == ["ok"] else found[:10]
    return problems + [f"foreign key of table {row[0]} row {row[1]} names a missing {row[2]}" for row in broken[:10]]


def _sqlite_copy(source, target, single_file=True):
    """Copy a SQLite database with the online backup API (one step: one consistent read, written in one
    transaction) into the database at target (single_file: leaving it in journal mode DELETE, one file)."""
    src, dst = _sqlite_connect(source), _sqlite_connect(target)
    try:
        src.backup(dst)
        if single_file:
            dst.execute("PRAGMA journal_mode=DELETE")
    finally:
        src.close()
        dst.close()


def _sqlite_backup(path, out):
    temporary = _temporary(out)
    try:
        _sqlite_copy(path, temporary)
        problems = sqlite_problems(temporary)
        if problems:
            raise BackupError(f"the copy of {path} fails SQLite's checks, nothing written to {out}: "
                              + "; ".join(problems))
        _install(temporary, out)
    finally:
        _remove(temporary)


def _sqlite_tables(path):
    """The names of the tables of a SQLite database file ([] for a missing or empty file)."""
    if not path.exists() or path.stat().st_size == 0:
        return []
    connection = _sqlite_connect(path)
    try:
        return [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    finally:
        connection.close()


def _sqlite_restore(source, path, force):
    """Restore a SQLite backup file into the database at path -> the number of submissions restored."""
    if _sqlite_tables(path) and not force:
        raise BackupError(f"{path} already holds a database: stop the app and the workers, then restore with "
                          "--force to replace it (or restore into a new file)")
    temporary = _temporary(path)
    try:
        _sqlite_copy(source, temporary)  # the backup is never changed; the copy is prepared, then installed
        problems = sqlite_problems(temporary)
        if problems:
            raise BackupError(f"{source} fails SQLite's checks, nothing restored: " + "; ".join(problems))
        if not CLASS_TABLES <= set(_sqlite_tables(temporary)):
            raise BackupError(f"{source} is a SQLite database but not a class backup (no class tables), nothing "
                              "restored")
        _prepare(f"sqlite:///{temporary}")
        connection = _sqlite_connect(temporary)
        connection.execute("PRAGMA journal_mode=DELETE")  # the store's connections made it WAL: one file again
        connection.close()
        if path.exists() and path.stat().st_size:
            _sqlite_copy(temporary, path, single_file=False)  # through SQLite's locks: seen whole or not at all
        else:
            for extra in ("-wal", "-shm", "-journal"):
                if Path(f"{path}{extra}").exists():
                    raise BackupError(f"{path}{extra} is left from another database: remove it, then restore")
            _install(temporary, path)
        return _count_submissions(f"sqlite:///{path}")
    finally:
        _remove(temporary)


# ---- Postgres ------------------------------------------------------------------------------------


def _pg_backup(db, out):
    uri, env = postgres_connection(db)
    temporary = _temporary(out)
    try:
        _run([pg_tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges", f"--file={temporary}",
              f"--dbname={uri}"], env, "pg_dump")
        _run([pg_tool("pg_restore"), "--list", str(temporary)], env, "pg_restore --list (checking the dump)")
        _install(temporary, out)
    finally:
        temporary.unlink(missing_ok=True)


def _dump_tables(source, env):
    """The tables a pg_dump archive holds."""
    listing = _run([pg_tool("pg_restore"), "--list", str(source)], env, "pg_restore --list")
    return {m.group(1) for m in re.finditer(r"\bTABLE (?:DATA )?\S+ (\S+) ", listing)}


def _pg_restore(source, db, force):
    """Restore a pg_dump archive into the database at db -> the number of submissions restored."""
    url = _url(db)
    store = Store(_plain(url), check=False)
    try:
        tables = inspect(store.engine).get_table_names()
    finally:
        store.close()
    if tables and not force:
        raise BackupError(f"{url.render_as_string(hide_password=True)} already holds {len(tables)} tables: stop "
                          "the app and the workers, then restore with --force to replace them (or restore into a new "
                          "database: createdb NAME)")
    uri, env = postgres_connection(db)
    if not CLASS_TABLES <= _dump_tables(source, env):
        raise BackupError(f"{source} is a pg_dump archive but not a class backup (no class tables), nothing restored")
    fd, script = tempfile.mkstemp(prefix="attention-lab-restore-", suffix=".sql")  # mode 600: the class's data
    os.close(fd)
    script = Path(script)
    try:
        _run([pg_tool("pg_restore"), "--no-owner", "--no-privileges", *(["--clean", "--if-exists"] if force else []),
              f"--file={script}", str(source)], env, "pg_restore")
        with open(script, "a", encoding="utf-8") as out:
            out.write("\nRESET search_path;\n")  # the dump's SQL empties it
            out.write("".join(f"{statement};\n" for statement in revocation_sql(utcnow(), _dump_tables(source, env))))
        _run([pg_tool("psql"), "--no-psqlrc", "--quiet", "--single-transaction", "--set=ON_ERROR_STOP=1",
              f"--file={script}", f"--dbname={uri}"], env, "psql (restoring; nothing was changed)")
    finally:
        script.unlink(missing_ok=True)
    _prepare(_plain(url), revoke=False)  # revoked in the restore's own transaction
    return _count_submissions(_plain(url))


# ---- both ----------------------------------------------------------------------------------------


def revocation_sql(now, tables):
    """The statements that revoke every sign-in a restored database holds, at `now` (naive UTC), for those of
    its tables that exist: sessions, unused sign-in links, LTI logins in flight, and the time before which an
    identity-provider sign-in opens no session."""
    stamp = now.strftime(STAMP)
    statements = []
    if "sessions" in tables:
        statements.append(f"UPDATE sessions SET revoked_at = '{stamp}' WHERE revoked_at IS NULL")
    if "sign_in_tokens" in tables:
        statements.append(f"UPDATE sign_in_tokens SET revoked_at = '{stamp}' WHERE used_at IS NULL "
                          "AND revoked_at IS NULL")
    if "lti_launch_states" in tables:
        statements.append(f"UPDATE lti_launch_states SET used_at = '{stamp}' WHERE used_at IS NULL")
    if "settings" in tables:
        statements.append(f"DELETE FROM settings WHERE key = '{NOT_BEFORE}'")
        statements.append(f"INSERT INTO settings (key, value) VALUES ('{NOT_BEFORE}', '{stamp}')")
    return statements


def _prepare(url, revoke=True):
    """Bring a restored database to this code's schema and (revoke) revoke every sign-in it holds, in one
    transaction."""
    store = Store(url, check=False)
    try:
        try:
            migrate(store.engine)
        except CommandError as err:  # a revision this code does not know: a backup made by newer code
            raise BackupError(f"the backup's schema is not one this code knows ({err}): restore it with the "
                              "version of Attention Lab that made it") from None
        check_schema(store.engine)
        if revoke:
            tables = set(inspect(store.engine).get_table_names())
            with store.session() as session:
                for statement in revocation_sql(utcnow(), tables):
                    session.execute(text(statement))
    finally:
        store.close()


def _count_submissions(url):
    store = Store(url)
    try:
        with store.session() as session:
            return session.scalar(text("SELECT count(*) FROM submissions"))
    finally:
        store.close()


def _out_path(out, url, keep):
    """The file a backup goes to: out, or a name by the time in the folder out."""
    out = Path(out).expanduser().resolve()
    if out.is_dir():
        return out / f"class-{datetime.now(UTC):%Y%m%dT%H%M%S}Z.{'sqlite' if _is_sqlite(url) else 'pgdump'}"
    if keep is not None:
        raise BackupError(f"--keep needs a folder to keep backups in; {out} is not one")
    return out


def prune(folder, keep):
    """Remove all but the `keep` newest backups named by their time in folder -> the removed paths."""
    named = sorted(p for p in Path(folder).iterdir() if NAMED.match(p.name))
    removed = named[:max(0, len(named) - keep)]
    for path in removed:
        path.unlink()
    return removed


def backup(db, out, force=False, keep=None):
    """Back up the class database at db into out (a file, or a folder to name it in) -> the file written."""
    url = _url(db)
    Store(_plain(url)).close()  # a class database at this code's schema, or SchemaError saying what to do
    target = _out_path(out, url, keep)
    if not target.parent.is_dir():
        raise BackupError(f"{target.parent} is not a folder: create it first (install -d -m 700 FOLDER)")
    if _is_sqlite(url) and target.exists() and target.samefile(sqlite_file(db)):
        raise BackupError(f"{target} is the class database itself: back it up into another file")
    if target.exists() and not force:
        raise BackupError(f"{target} exists: choose another name, or pass --force to replace it")
    if _is_sqlite(url):
        _sqlite_backup(sqlite_file(db), target)
    else:
        _pg_backup(db, target)
    if keep is not None:
        prune(target.parent, keep)
    return target


def restore(source, db, force=False):
    """Restore the backup file source into the class database at db -> the number of submissions it holds."""
    source = Path(source).expanduser().resolve()
    if not source.is_file():
        raise BackupError(f"{source}: no such backup file")
    with open(source, "rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    url = _url(db)
    if not head.startswith((SQLITE_MAGIC, PGDUMP_MAGIC)):
        raise BackupError(f"{source} is not a class backup (neither a SQLite database nor a pg_dump archive)")
    if head.startswith(SQLITE_MAGIC) != _is_sqlite(url):
        raise BackupError(f"{source} is a {'SQLite' if head.startswith(SQLITE_MAGIC) else 'Postgres'} backup: "
                          f"restore it into a {'sqlite:///' if head.startswith(SQLITE_MAGIC) else 'postgresql://'} "
                          "database")
    if _is_sqlite(url):
        path = sqlite_file(db)
        if source == path:
            raise BackupError(f"{source} is the target database itself")
        if not path.parent.is_dir():
            raise BackupError(f"{path.parent} is not a folder: create it first")
        return _sqlite_restore(source, path, force)
    return _pg_restore(source, db, force)


# ---- the command line ------------------------------------------------------------------------------


def add_commands(commands, db_option):
    """Add `backup` and `restore` to the class command line's subparsers."""
    p = commands.add_parser("backup", help="a consistent backup of the class database, while it is in use")
    db_option(p)
    p.add_argument("out", metavar="OUT", help="the backup file, or a folder to name it in by the time")
    p.add_argument("--force", action="store_true", help="replace OUT when it exists")
    p.add_argument("--keep", type=int, default=None, metavar="N",
                   help="OUT a folder: keep its N newest backups, remove the older ones")

    p = commands.add_parser("restore", help="restore a backup into the class database (every sign-in revoked)")
    db_option(p)
    p.add_argument("source", metavar="IN", help="a file written by `backup`")
    p.add_argument("--force", action="store_true", help="replace a database that already holds tables")


def cmd_backup(args):
    if args.keep is not None and args.keep < 1:
        raise BackupError(f"--keep {args.keep}: keep at least 1 backup")
    written = backup(args.db, args.out, args.force, args.keep)
    print(f"backup written to {written} ({written.stat().st_size} bytes)")
    return 0


def cmd_restore(args):
    submissions = restore(args.source, args.db, args.force)
    print(f"restored {submissions} submission(s) from {args.source}; every session, unused sign-in link and LTI "
          "login in flight is revoked: hand out new links (python -m classroom links ...), and everyone signs in "
          "again")
    return 0


COMMANDS = {"backup": cmd_backup, "restore": cmd_restore}
