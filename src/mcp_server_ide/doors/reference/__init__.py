"""The generated reference of every tool, at ``GET /mcp/tools`` (seed 001), with a live playground.

Everything on it comes from the tool runner (the registry's specs and the SDK tools built from them):
name, title, category, description, annotations, every input field (type, required, default,
description, example), the result shape (output schema) with an example, and the errors a tool can
answer. No tool is named here.

- ``GET /mcp/tools?format=json`` (or ``Accept: application/json``): the reference as JSON.
- ``GET /mcp/tools``: a readable, searchable HTML page grouped by category, with a playground that
  builds a form from a tool's input schema (or takes raw JSON) and calls ``POST /mcp/{tool}``. The
  page never holds the server's token: when one is set, the playground asks for it. No tool runs
  from a GET.
- ``GET /mcp/openapi.json``: the REST door as an OpenAPI 3.1 document (same data, :mod:`.openapi`).
- ``GET /mcp/static/<file>``: the page's own CSS and JS (package data; no CDN).

Modules: :mod:`.model` (the reference as data), :mod:`.schema` (JSON schemas read for people: type
text, enums, example values), :mod:`.page` (the HTML page), :mod:`.openapi` (the OpenAPI document), :mod:`.endpoints` (the routes).
"""

from .endpoints import routes

__all__ = ["routes"]
