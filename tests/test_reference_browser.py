"""The reference page and its playground, used as a person would: headless Chromium (issue 7).

Opens GET /mcp/tools on the real HTTP server (started with a token), searches, fills a generated form,
calls a read tool and a write tool through the playground, and checks the page's result and the file
on disk. Screenshots (light and dark) go to tests/artifacts/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .support.browser import artifact, chromium_page

TOKEN = "playground-token-123"


def card(page: Any, name: str) -> Any:
    return page.locator(f"article#tool-{name}")


def call_and_wait(page: Any) -> str:
    page.click("#pg-run")
    page.wait_for_selector("#pg-status .pill")
    page.wait_for_function("!document.getElementById('pg-run').disabled")
    return page.inner_text("#pg-result")


def test_reference_page_search_form_and_calls(http_server: Any, ws_path: Path, tmp_path: Path) -> None:
    (ws_path / "notes.txt").write_bytes(b"hello world\nsecond line\n")
    server = http_server(ws_path, "--token", TOKEN)

    with chromium_page(tmp_path / "profile") as page:
        page.goto(server.url + "/mcp/tools")
        page.wait_for_selector("body[data-ready=true]")
        assert TOKEN not in page.content()
        total = page.locator("article.tool").count()
        assert total >= 10 and page.inner_text("#match-count") == f"{total} tools"

        # Search narrows the list (and the side navigation) as you type.
        page.fill("#search", "replace text")
        assert card(page, "replace_specific_text").is_visible()
        assert not card(page, "get_file_text_by_path").is_visible()
        shown = page.locator("article.tool:not(.hidden-by-search)").count()
        assert 1 <= shown < total and page.inner_text("#match-count") == f"{shown} of {total} tools"
        page.fill("#search", "zzz-no-such-tool")
        assert page.is_visible("#no-match")
        page.fill("#search", "read file")
        assert card(page, "get_file_text_by_path").is_visible()

        # A read tool: Try it fills the playground's form from the tool's schema and example.
        card(page, "get_file_text_by_path").locator("button.try").click()
        assert page.input_value("#pg-tool") == "get_file_text_by_path"
        assert page.is_hidden("#pg-warn")  # read-only: no "changes the workspace" warning
        page.fill("#pg-f-pathInProject", "notes.txt")
        # Without the token the server refuses, and the page says so.
        text = call_and_wait(page)
        assert "401" in page.inner_text("#pg-status") and "Bearer" in text
        page.fill("#pg-token", TOKEN)
        text = call_and_wait(page)
        assert "200" in page.inner_text("#pg-status")
        assert '"content": "hello world\\nsecond line\\n"' in text and '"relativePath": "notes.txt"' in text

        # A write tool, through the form: the result on the page and the file on disk.
        page.fill("#search", "replace")
        card(page, "replace_specific_text").locator("button.try").click()
        assert page.is_visible("#pg-warn")
        page.fill("#pg-f-pathInProject", "notes.txt")
        page.fill("#pg-f-searchText", "world")
        page.fill("#pg-f-replaceText", "browser")
        if page.is_checked("#pg-f-replaceAll"):
            page.uncheck("#pg-f-replaceAll")
        text = call_and_wait(page)
        assert "200" in page.inner_text("#pg-status"), text
        assert '"replacements": 1' in text
        assert (ws_path / "notes.txt").read_bytes() == b"hello browser\nsecond line\n"

        # A failing call shows the server's error, naming the rule; nothing changes.
        page.fill("#pg-f-searchText", "no such text")
        text = call_and_wait(page)
        assert "error" in page.inner_text("#pg-status") and "0" in text
        assert (ws_path / "notes.txt").read_bytes() == b"hello browser\nsecond line\n"

        # The JSON tab: edit the arguments as JSON and create a file.
        page.fill("#search", "")
        page.select_option("#pg-tool", "create_new_file_with_text")
        page.click("#pg-tab-json")
        page.fill(
            "#pg-json", json.dumps({"pathInProject": "docs/new.md", "text": "# Made in the playground\n"})
        )
        text = call_and_wait(page)
        assert "200" in page.inner_text("#pg-status"), text
        assert (ws_path / "docs" / "new.md").read_bytes() == b"# Made in the playground\n"
        page.click("#pg-tab-form")
        assert page.input_value("#pg-f-pathInProject") == "docs/new.md"

        # Back to the replace call for the picture: a write tool's result beside its reference.
        page.fill("#search", "replace")
        card(page, "replace_specific_text").locator("button.try").click()
        page.fill("#pg-f-pathInProject", "notes.txt")
        page.fill("#pg-f-searchText", "second line")
        page.fill("#pg-f-replaceText", "second line, edited from the reference page")
        if page.is_checked("#pg-f-replaceAll"):
            page.uncheck("#pg-f-replaceAll")
        call_and_wait(page)
        page.evaluate(
            "window.scrollTo(0, document.getElementById('tool-replace_specific_text').offsetTop - 84)"
        )
        page.wait_for_timeout(600)  # the result scrolls smoothly into view
        page.screenshot(path=str(artifact("reference-light.png")))
        assert page.errors == []

    with chromium_page(tmp_path / "profile-dark", color_scheme="dark") as page:
        page.goto(server.url + "/mcp/tools#tool-list_files_in_folder")
        page.wait_for_selector("body[data-ready=true]")
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background != "rgb(247, 248, 250)", "dark mode must follow the system"
        page.fill("#pg-token", TOKEN)
        page.fill("#pg-f-pathInProject", ".")
        text = call_and_wait(page)
        assert "notes.txt" in text and "docs" in text
        page.wait_for_timeout(600)
        page.screenshot(path=str(artifact("reference-dark.png")))
        assert page.errors == []
