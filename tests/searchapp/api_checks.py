"""Checks of the JSON API's responses shared by the app tests."""

from __future__ import annotations

import json

from searchapp.web import api
from searchapp.web.api import schemas

__all__ = ["as_validated"]


def as_validated(data: dict[str, object]) -> None:
    """Fail unless ``data`` renders to the bytes its validation through the API's SearchOut
    renders to: the API sends search_page_data's dict without validating it."""
    validated = schemas.SearchOut.model_validate(data).model_dump()
    direct = api.api.renderer.render(None, data, response_status=200)  # type: ignore[arg-type]
    again = api.api.renderer.render(None, validated, response_status=200)  # type: ignore[arg-type]
    if direct != again:
        sent, schema = json.loads(direct), json.loads(again)
        raise AssertionError(
            f"/api/search's dict is not what SearchOut gives: keys {list(sent)} against "
            f"{list(schema)}; first different value: "
            f"{next(((k, sent[k], schema[k]) for k in schema if sent.get(k) != schema[k]), None)}"
        )
