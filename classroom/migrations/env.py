"""Alembic environment for the class store (run by classroom.data.db.migrate)."""

from alembic import context
from sqlalchemy import create_engine

from classroom.data.models import Base

target_metadata = Base.metadata


def run_migrations_online():
    """Migrate over the connection classroom.data.db passes in, or a fresh one from the URL."""
    connection = context.config.attributes.get("connection")
    if connection is None:
        engine = create_engine(context.config.get_main_option("sqlalchemy.url"))
        with engine.begin() as connection:
            _run(connection)
        return
    _run(connection)


def _run(connection):
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("the class store migrates online only: python -m classroom init --db URL ...")
run_migrations_online()
