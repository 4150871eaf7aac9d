"""The review MCP App in headless Chromium, under the real host side of @modelcontextprotocol/ext-apps.

A test host page (AppBridge + the SDK's Streamable HTTP client, tests/support/review_host/) does what a
chat host does after a tool that changes files: it reads the tool's ``_meta.ui.resourceUri``, fetches
the ``ui://`` resource (``text/html;profile=mcp-app``), renders it in a sandboxed iframe and proxies its
tool calls to the real server. The test clicks Keep and Undo in the view and checks the files on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from .support.apps_host import host_page_files
from .support.browser import artifact, chromium_page

REVIEW_URI = "ui://mcp-server-ide/review"


def rest(server: Any, tool: str, **args: Any) -> Any:
    answer = httpx.post(f"{server.url}/mcp/{tool}", json=args, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()["status"]


def open_host(page: Any, server: Any) -> None:
    files = host_page_files()

    def serve(route: Any) -> None:
        name = route.request.url.rsplit("/", 1)[-1]
        body, kind = files[name]
        route.fulfill(status=200, body=body, headers={"content-type": kind})

    # The host page lives on the server's own origin (served by the test, never by the server),
    # so its MCP client is a same-origin caller of /mcp that the Origin check lets through.
    page.route(f"{server.url}/__test_host__/*", serve)
    page.goto(f"{server.url}/__test_host__/index.html")
    page.wait_for_function("typeof window.runTool === 'function'")


def run_tool(page: Any, server: Any, tool: str, args: dict[str, Any], theme: str = "light") -> Any:
    return page.evaluate(
        "(o) => window.runTool(o)", {"mcpUrl": server.mcp_url, "tool": tool, "args": args, "theme": theme}
    )


def wait_files(view: Any, count: int) -> None:
    view.locator(f"body[data-state='ready'][data-files='{count}']").wait_for()


def test_review_app_renders_changes_and_keep_undo_work(
    http_server: Any, ws_path: Path, tmp_path: Path
) -> None:
    (ws_path / "src").mkdir()
    (ws_path / "src" / "app.py").write_bytes(
        b"def greet(name):\n    return 'hello ' + name\n\n\nprint(greet('world'))\n"
    )
    (ws_path / "README.md").write_bytes(b"# Demo\n\nA small project.\n")
    (ws_path / "notes.txt").write_bytes(b"todo: nothing\n")
    server = http_server(ws_path)
    rest(server, "create_checkpoint", name="before-assistant")
    rest(
        server,
        "replace_specific_text",
        pathInProject="src/app.py",
        searchText="return 'hello ' + name",
        replaceText="return f'Hello, {name}!'",
    )
    rest(
        server,
        "append_file_content",
        pathInProject="README.md",
        text="\n## Usage\n\nRun `python src/app.py`.\n",
    )
    rest(server, "append_file_content", pathInProject="notes.txt", text="todo: review the greeting\n")

    with chromium_page(tmp_path / "profile", width=1000, height=1000) as page:
        open_host(page, server)
        # The assistant's last call: a new file. Its tool points at the review view; the host shows it.
        shown = run_tool(
            page,
            server,
            "create_new_file_with_text",
            {
                "pathInProject": "tests/test_app.py",
                "text": "from app import greet\n\n\ndef test_greet():\n    assert greet('Ada') == 'Hello, Ada!'\n",
            },
        )
        assert shown["uri"] == REVIEW_URI and shown["mimeType"] == "text/html;profile=mcp-app"
        view = page.frame_locator("#app")
        wait_files(view, 4)
        assert "before-assistant" in view.locator("#title").inner_text()
        paths = view.locator("section.file .path").all_inner_texts()
        assert paths == ["README.md", "notes.txt", "src/app.py", "tests/test_app.py"]
        app_py = view.locator("section.file[data-path='src/app.py']")
        assert app_py.locator(".line.add .code").all_inner_texts() == ["+    return f'Hello, {name}!'"]
        assert app_py.locator(".line.del .code").all_inner_texts() == ["-    return 'hello ' + name"]
        assert (
            view.locator("section.file[data-path='tests/test_app.py'] .status").inner_text().lower()
            == "added"
        )
        page.wait_for_timeout(300)  # the view reports its size; the host resizes the frame
        page.screenshot(path=str(artifact("review-app-light.png")), full_page=True)

        # Keep: the file stays as the assistant left it and leaves the review.
        app_py.locator("button[data-action='keep']").click()
        wait_files(view, 3)
        assert (ws_path / "src" / "app.py").read_bytes().count(b"Hello, {name}!") == 1
        assert "Kept" in view.locator("#notice").inner_text()
        assert any("kept" in str(item).lower() for item in page.evaluate("window.modelContext"))

        # Undo: the new file is removed, byte for byte back to the checkpoint (it did not exist).
        view.locator("section.file[data-path='tests/test_app.py'] button[data-action='undo']").click()
        wait_files(view, 2)
        assert not (ws_path / "tests" / "test_app.py").exists()

        # Undo over a file someone else edited meanwhile: refused, the file untouched, until confirmed.
        (ws_path / "notes.txt").write_bytes(b"todo: nothing\ntodo: edited by hand in the editor\n")
        view.locator("section.file[data-path='notes.txt'] button[data-action='undo']").click()
        view.locator("#notice.error").wait_for()
        assert "conflict" in view.locator("#notice").inner_text()
        assert (ws_path / "notes.txt").read_bytes() == b"todo: nothing\ntodo: edited by hand in the editor\n"
        view.locator("#notice button", has_text="Undo anyway").click()
        wait_files(view, 1)
        assert (ws_path / "notes.txt").read_bytes() == b"todo: nothing\n"

        # Undo all: the last file goes back too; the view says there is nothing left.
        view.locator("#undo-all").click()
        wait_files(view, 0)
        assert (ws_path / "README.md").read_bytes() == b"# Demo\n\nA small project.\n"
        assert "Nothing to review" in view.locator("#files").inner_text()
        assert rest(server, "diff_since_checkpoint", name="before-assistant")["files"] == []
        assert page.errors == []

    with chromium_page(tmp_path / "profile-dark", width=1000, height=800, color_scheme="dark") as page:
        rest(server, "create_checkpoint", name="dark-check")
        rest(server, "append_file_content", pathInProject="notes.txt", text="todo: dark mode\n")
        page.emulate_media(color_scheme="dark")
        open_host(page, server)
        page.evaluate("document.body.classList.add('dark')")
        run_tool(
            page,
            server,
            "replace_specific_text",
            {
                "pathInProject": "README.md",
                "searchText": "A small project.",
                "replaceText": "A small, reviewed project.",
            },
            theme="dark",
        )
        view = page.frame_locator("#app")
        wait_files(view, 2)
        assert view.locator("html").get_attribute("data-theme") == "dark"
        page.wait_for_timeout(300)
        page.screenshot(path=str(artifact("review-app-dark.png")), full_page=True)
        assert page.errors == []


def test_tools_that_change_files_point_at_the_review_app(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path)
    ref = httpx.get(server.url + "/mcp/tools?format=json", timeout=30).json()
    linked = {
        t["name"] for t in ref["tools"] if t.get("meta", {}).get("ui", {}).get("resourceUri") == REVIEW_URI
    }
    for tool in ref["tools"]:
        if tool["readOnly"]:
            assert tool["name"] not in linked
    assert {
        "rewrite_file_content",
        "replace_specific_text",
        "create_new_file_with_text",
        "restore_checkpoint",
    } <= linked
    assert "create_checkpoint" not in linked and "keep_changes" not in linked
