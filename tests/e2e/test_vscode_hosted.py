"""VS Code signs in to a hosted project: code-server 4.139.1 (= Code 1.139.1) in headless Chromium,
``.vscode/mcp.json`` naming only the project's URL; VS Code's MCP client gets 401, reads the
protected resource metadata, registers itself (dynamic registration), opens the authorization URL
in a new browser window, where the test signs in on the service's login page; the code comes back
to VS Code and the server starts with every tool.

In code-server the extension host is remote, so VS Code uses its URL-handler flow: the redirect URI
is ``https://vscode.dev/redirect``, a page on the internet that sends the browser on to the ``state``
URL (code-server's ``/callback``) with the code. This machine has no internet, so that one page is
played by a Playwright route doing the same redirect; everything else is real.

Own README command: ``.venv/bin/python -m pytest -m e2e tests/e2e/test_vscode_hosted.py``.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import pytest

from tests.support.browser import artifact
from tests.support.codeserver import workbench
from tests.support.hosted import start_hosted

pytestmark = pytest.mark.e2e

PASSWORD = "vscode sign-in password"


def vscode_dev_redirect(route: Any) -> None:
    """What https://vscode.dev/redirect is for: on to the ``state`` URL (the app URI VS Code made,
    here code-server's ``/callback?vscode-…``) with the answer's parameters added to the app URI's
    own query (``vscode-query``), where VS Code's handler reads ``code``."""
    params = dict(parse_qsl(urlsplit(route.request.url).query))
    target = urlsplit(unquote(params.pop("state")))  # VS Code's state arrives encoded once more
    query = dict(parse_qsl(target.query))
    query["vscode-query"] = urlencode([*parse_qsl(query.get("vscode-query", "")), *params.items()])
    route.fulfill(status=302, headers={"Location": urlunsplit(target._replace(query=urlencode(query)))})


def _wait_for(page: Any, selector: str, text: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if page.locator(selector, has_text=text).count():
            return True
        time.sleep(0.5)
    return False


def _click_if(page: Any, selector: str, text: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = page.locator(selector, has_text=text)
        if found.count():
            found.first.click()
            return True
        time.sleep(0.5)
    return False


def test_vscode_signs_in_to_a_hosted_project_and_lists_its_tools(ws_path: Path, tmp_path: Path) -> None:
    from mcp_server_ide.hosted import passwords
    from mcp_server_ide.hosted.projects import HostedProjects
    from mcp_server_ide.hosted.sqlstore import SqlStore, sqlite_url
    from mcp_server_ide.workspace import Policy

    data = tmp_path / "data"
    data.mkdir()
    store = SqlStore(sqlite_url(data))
    user = store.add_user("vera")
    store.set_password_hash(user.id, passwords.make(PASSWORD))
    project = HostedProjects(store, data, Policy(hosted=True)).create(user.id, "web")
    store.close()
    # On [::1], not 127.0.0.1: code-server sends the browser to a localhost or 127.0.0.1 URL through
    # its own port proxy (/proxy/PORT/…), which folds the "//" inside the resource parameter.
    service = start_hosted(data, "--host", "::1")
    try:
        url = f"{service.url}/p/{project.id}/mcp"
        (ws_path / ".vscode").mkdir()
        (ws_path / ".vscode" / "mcp.json").write_text(
            json.dumps({"servers": {"hosted": {"type": "http", "url": url}}})
        )
        with workbench(ws_path, tmp_path / "vscode") as bench:
            page = bench.page
            page.context.route("https://vscode.dev/redirect**", vscode_dev_redirect)
            seen: list[str] = []  # the sign-in's navigations, for a failure's message

            def note(request: Any) -> None:
                if any(part in request.url for part in ("/authorize", "/login", "redirect", "/callback")):
                    seen.append(request.url)

            page.context.on("request", note)
            time.sleep(3)
            allow = ".monaco-dialog-box .monaco-button"
            for _attempt in range(3):  # a loaded machine sometimes loses a click in the quick pick
                bench.command("MCP: List Servers")
                bench.pick("hosted")
                bench.pick("Start Server")
                page.screenshot(path=str(artifact("vscode-hosted-1-start.png")))
                # "The MCP Server Definition 'hosted' wants to authenticate to …": Allow.
                if _wait_for(page, allow, "Allow", 60):
                    break
                page.keyboard.press("Escape")
            with page.context.expect_page(timeout=120_000) as popup_info:
                assert _click_if(page, allow, "Allow", 5), page.locator("body").inner_text()[-2000:]
                page.screenshot(path=str(artifact("vscode-hosted-2-allowed.png")))
                _click_if(page, allow, "Open", 20)  # code-server may ask before opening an external page
            popup = popup_info.value
            try:
                popup.wait_for_selector("#username", timeout=60_000)
            except Exception:
                popup.screenshot(path=str(artifact("vscode-hosted-3-popup.png")))
                raise AssertionError(  # noqa: B904
                    f"{seen}\nthe popup shows {popup.url}: {popup.content()[:2000]}\n{service.log()[-3000:]}"
                )
            popup.screenshot(path=str(artifact("vscode-hosted-3-login.png")))
            popup.fill("#username", "vera")
            popup.fill("#password", PASSWORD)
            popup.click("#allow")
            page.screenshot(path=str(artifact("vscode-hosted-4-back.png")))
            found = None
            for _attempt in range(6):  # the code goes back, is exchanged, the server starts: give it time
                time.sleep(10)
                text = bench.mcp_output("hosted", "vscode-hosted-5-output.png")
                if found := re.search(r"Discovered (\d+) tools", text):
                    break
            auth_logs = "\n".join(
                f"{f.name}: {f.read_text(errors='replace')[-3000:]}"
                for f in (tmp_path / "vscode" / "user" / "logs").rglob("*.log")
                if "authorization" in f.read_text(errors="replace").lower()
            )
            assert found, text[-3000:] + "\n" + "\n".join(seen) + "\n" + auth_logs
            assert int(found.group(1)) > 40
        log = [json.loads(line) for line in service.log().splitlines() if line.startswith("{")]
        assert any(e.get("path") == "/register" and e.get("status") == 201 for e in log)
        assert any(e.get("path") == "/token" and e.get("status") == 200 for e in log)
        assert any(e.get("path") == f"/p/{project.id}/mcp" and e.get("status") == 200 for e in log)
    finally:
        service.stop()
