"""The local server's settings never show their password."""

from __future__ import annotations

from pathlib import Path

from graphrag_orm.localdb import LocalDbSettings


def test_the_settings_repr_does_not_show_the_password() -> None:
    settings = LocalDbSettings(tools_dir=Path("/tools"), home=Path("/tools/home"), password="s3cret-Pa55word")
    assert "s3cret-Pa55word" not in repr(settings) and "s3cret-Pa55word" not in str(settings)
    assert "port=" in repr(settings)  # the rest is still shown
    assert settings.password == "s3cret-Pa55word"
