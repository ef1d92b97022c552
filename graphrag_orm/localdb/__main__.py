"""``python -m graphrag_orm.localdb``: see :mod:`graphrag_orm.localdb.cli`."""

from graphrag_orm.localdb.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
