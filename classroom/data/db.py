"""Open the class database: URL handling, SQLite settings, Alembic migrations.

SQLite (one machine) runs in WAL mode and takes its write lock at the start of
every transaction (BEGIN IMMEDIATE), so that two workers reading the queue at
once cannot both claim a job. Postgres (several machines) claims with
`SELECT ... FOR UPDATE SKIP LOCKED` (classroom/line/queue.py).
"""

import json
import threading
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from course.common.json_numbers import json_ready

from .address import ENV_VAR, url_from_environment

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


class SchemaError(RuntimeError):
    """The database has no schema, or an older/newer one than this code."""


def normalize_url(url):
    """A SQLAlchemy URL from what a user typed: a file path means SQLite; postgres uses psycopg 3."""
    url = str(url).strip()
    if not url:
        raise ValueError("no database given: pass --db URL (e.g. sqlite:///class.db) "
                         f"or set {ENV_VAR}")
    if "://" not in url:
        return f"sqlite:///{Path(url).expanduser().resolve()}"
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


# A host that vanishes mid-transaction (its link cut, no FIN) leaves its session holding the rows it locked (a job
# being claimed, which every other claim then skips): Postgres ends such a session after a minute idle in its
# transaction, and probes a silent client after 10 s (gone after 3 unanswered probes, 5 s apart).
POSTGRES_SESSION = ("-c idle_in_transaction_session_timeout=60000 -c tcp_keepalives_idle=10 "
                    "-c tcp_keepalives_interval=5 -c tcp_keepalives_count=3")


def json_text(value):
    """The text a JSON column stores for `value`, the same on every backend: strict JSON, a NaN or infinite number
    (a learner's weights in a verdict's report) written as "NaN", "Infinity" or "-Infinity" (json_ready), which
    Postgres's json type takes where it refuses the NaN Python's json writes."""
    return json.dumps(json_ready(value), allow_nan=False)


def make_engine(url):
    """An engine with the class store's connection settings; every JSON column is written by json_text."""
    url = normalize_url(url)
    if make_url(url).get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"timeout": 60}, json_serializer=json_text)
        _configure_sqlite(engine)
        return engine
    return create_engine(url, pool_pre_ping=True, connect_args={"options": POSTGRES_SESSION},
                         json_serializer=json_text)


def _configure_sqlite(engine):
    """WAL mode, a long busy timeout, foreign keys, and BEGIN IMMEDIATE transactions."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=60000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def alembic_config(engine):
    """An Alembic Config pointing at classroom/migrations for this engine."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return config


def migrate(engine):
    """Bring the schema to the newest version (creating it in an empty database)."""
    from alembic import command

    config = alembic_config(engine)
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def upgrade_schema(engine):
    """Bring an existing class database to the code's schema (`migrate`) -> (its revision before, after).

    SchemaError, changing nothing, for a database with no class schema (`init` creates a class) or at a revision
    this code does not know (upgraded by a newer version of the project)."""
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    before, head = schema_versions(engine)
    where = engine.url.render_as_string(hide_password=True)
    if before is None:
        raise SchemaError(f"{where} has no class schema: create the class with `python -m classroom init --db URL "
                          "--instructor EMAIL`")
    try:
        ScriptDirectory.from_config(alembic_config(engine)).get_revision(before)
    except CommandError:
        raise SchemaError(f"{where} is at schema version {before}, which this code (newest: {head}) does not know: "
                          "a newer version of the project upgraded it; update this checkout") from None
    migrate(engine)
    return before, schema_versions(engine)[0]


def schema_versions(engine):
    """(the database's revision or None, the code's head revision)."""
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
    with engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    return current, head


def check_schema(engine):
    """Raise SchemaError unless the database is at the code's schema version."""
    current, head = schema_versions(engine)
    where = engine.url.render_as_string(hide_password=True)
    if current is None:
        raise SchemaError(f"{where} has no class schema: run `python -m classroom init --db URL "
                          "--instructor EMAIL` first")
    if current != head:
        raise SchemaError(f"{where} is at schema version {current}, this code needs {head}: "
                          "run `python -m classroom upgrade --db URL` to upgrade it")


class Store:
    """An engine plus a session factory; `with store.session() as s:` is one transaction.

    `kept(name)` holds what is derived from this database and worth keeping between reads: each entry is
    owned by one module (classroom/analytics/frames.py's class frame, classroom/line/live.py's queue snapshot), which decides
    when to read it again; entries live and die with the store.
    """

    def __init__(self, url, check=True):
        self.engine = make_engine(url)
        if check:
            check_schema(self.engine)
        self._factory = sessionmaker(self.engine, expire_on_commit=False)
        self._kept, self._kept_lock = {}, threading.Lock()

    @property
    def is_postgres(self):
        return self.engine.dialect.name == "postgresql"

    @contextmanager
    def session(self):
        """One transaction: committed when the block ends, rolled back on an exception."""
        with self._factory() as session, session.begin():
            yield session

    def kept(self, name):
        """This store's Kept entry `name` (empty at first use)."""
        with self._kept_lock:
            return self._kept.setdefault(name, Kept())

    def close(self):
        self.engine.dispose()


class Kept:
    """A value derived from a store's data and kept with it (value None until read); hold `lock` to use it."""

    def __init__(self):
        self.lock = threading.Lock()
        self.value = None


__all__ = ["ENV_VAR", "Session", "Store", "SchemaError", "make_engine", "migrate", "upgrade_schema", "check_schema",
           "normalize_url", "url_from_environment"]
