"""Text no process can be given (a lone UTF-16 surrogate) is refused with a clear error, through the
REST door, for every way text reaches a process: a command, an argv, an environment value, a
terminal's or a job's input. Found by the fuzz suites (tests/test_fuzz_rpc.py): before, each of these
answered a 500 "internal error" and logged a UnicodeEncodeError traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

SURROGATE_JSON = '"echo \\ud800"'


def _post(server: Any, tool: str, body: str) -> httpx.Response:
    return httpx.post(
        f"{server.url}/mcp/{tool}", content=body, headers={"Content-Type": "application/json"}, timeout=60
    )


def test_lone_surrogates_never_reach_a_process(http_server: Any, ws_path: Path) -> None:
    server = http_server(ws_path)
    cases = [
        ("run_command_on_background", '{"command": "echo \\ud800"}', "invalid command"),
        ("start_job", '{"command": "echo \\udfff x"}', "invalid command"),
        ("execute_terminal_command", '{"command": "echo \\ud800"}', "invalid command"),
        ("execute_os_specific_command", '{"unixCommand": "echo \\ud800"}', "invalid command"),
        (
            "run_command_on_background",
            '{"command": "echo", "env": {"A": "\\ud800"}}',
            "environment variable 'A'",
        ),
    ]
    for tool, body, words in cases:
        answer = _post(server, tool, body)
        assert answer.status_code == 400, (tool, answer.text)
        error = answer.json()["error"]
        assert words in error and "lone UTF-16 surrogate" in error, error

    terminal = _post(server, "create_terminal", "{}").json()["status"]["terminalId"]
    answer = _post(server, "send_terminal_input", f'{{"terminalId": "{terminal}", "text": "\\ud800"}}')
    assert answer.status_code == 400 and "invalid input" in answer.json()["error"], answer.text
    job = _post(server, "start_job", '{"command": "cat", "stdin": true}').json()["status"]["jobId"]
    answer = _post(server, "send_job_input", f'{{"jobId": "{job}", "text": "x\\ud800"}}')
    assert answer.status_code == 400 and "invalid input" in answer.json()["error"], answer.text
    _post(server, "cancel_job", f'{{"jobId": "{job}"}}')
    _post(server, "kill_terminal", f'{{"terminalId": "{terminal}"}}')

    # Valid Unicode still runs, and the server logged no traceback.
    ok = _post(server, "run_command_on_background", '{"command": "echo \\u00e9\\ud83d\\ude00"}')
    assert ok.status_code == 200 and "é😀" in str(ok.json()["status"]), ok.text
    assert "Traceback" not in server.log()
