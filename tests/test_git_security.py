"""SECURITY.md §3 for the git tools, adversarially, through an MCP client session.

- Arguments are data: option-looking values are refused before any git process starts (every
  spawned argv is recorded and searched), refs pass check-ref-format, pathspecs are literal, file
  lists never leave the root, and no file appears outside the workspace.
- Repository configuration is untrusted input: a planted ``core.fsmonitor``, pager, ``diff.external``,
  diff driver command and textconv, clean/smudge/process filters, ``gpg.program`` (through
  ``log.showSignature``), editor and askpass never run on reads; in an untrusted (or hosted)
  workspace hooks, filters and signing never run at all, and a pull refuses the repository's own
  ssh/upload-pack/credential programs. Each plant is proven live by a control run of plain git.
- The repository is always the workspace's, whatever ``core.worktree`` or inherited ``GIT_*``
  variables say; ext:: transports never run; prompts never happen; timeouts kill the whole group.
"""

from __future__ import annotations

import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import mcp_types
import pytest

from mcp_server_ide.engines.git import core as git_core
from mcp_server_ide.workspace import Policy

from .support.gitrepo import Git, fails, init_repo, isolated_git, ok, paths

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolated_git(monkeypatch, tmp_path / "home")


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every argv the git engine starts, in order."""
    calls: list[list[str]] = []
    real = git_core.spawn

    def recording(argv, **kwargs):
        calls.append(list(argv))
        return real(argv, **kwargs)

    monkeypatch.setattr(git_core, "spawn", recording)
    return calls


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the workspace where nothing may ever appear."""
    path = tmp_path / "outside"
    path.mkdir()
    return path


@pytest.fixture
def repo(ws_path: Path) -> Git:
    git = init_repo(ws_path)
    git.commit("Initial commit", {"a.txt": "a\n", "src/b.txt": "b\n"})
    git.commit("Second commit", {"a.txt": "a2\n"})
    return git


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def marker_script(folder: Path, name: str, then: str = "") -> tuple[Path, Path]:
    """A program that leaves ``folder/name.ran`` when it runs (then does ``then``)."""
    marker = folder / f"{name}.ran"
    return script(folder / f"{name}.sh", f"echo ran >> '{marker}'\n{then}"), marker


def no_argv_contains(calls: list[list[str]], needle: str) -> bool:
    return not any(needle in arg for argv in calls for arg in argv)


# ---------------------------------------------------------------------------------------------
# arguments are data


def injection_cases(marker: Path) -> list[tuple[str, dict]]:
    m = str(marker)
    return [
        ("get_file_diff", {"pathInProject": "a.txt", "commit1": f"--output={m}"}),
        ("get_file_diff", {"pathInProject": "a.txt", "commit2": f"--output={m}"}),
        ("get_file_diff", {"pathInProject": "a.txt", "commit1": "HEAD", "commit2": f"--output={m}"}),
        ("get_file_diff", {"pathInProject": "a.txt", "commit1": f"-o{m}"}),
        ("get_file_diff", {"pathInProject": "a.txt", "commit1": "--ext-diff"}),
        ("get_file_diff", {"pathInProject": "a.txt", "commit1": f"HEAD\n--output={m}"}),
        ("get_file_diff", {"pathInProject": "a.txt", "commit1": f"HEAD --output={m}"}),
        ("get_commit_details", {"commitHash": f"--output={m}"}),
        ("get_commit_details", {"commitHash": "-p"}),
        ("get_commit_details", {"commitHash": f"--format=%H --output={m}"}),
        ("create_branch", {"branch": f"--upload-pack=touch {m}"}),
        ("create_branch", {"branch": "-D"}),
        ("create_branch", {"branch": "--force"}),
        ("create_branch", {"branch": "ok", "startPoint": f"--output={m}"}),
        ("create_branch", {"branch": "ok2", "startPoint": "--orphan"}),
        ("switch_branch", {"branch": "-f"}),
        ("switch_branch", {"branch": "--orphan=x"}),
        ("switch_branch", {"branch": "--detach"}),
        ("switch_branch", {"branch": f"-c{m}"}),
        ("switch_branch", {"branch": "--discard-changes"}),
        ("pull_changes", {"remote": f"--upload-pack=touch {m}"}),
        ("pull_changes", {"remote": "-c"}),
        ("pull_changes", {"remote": f"ext::sh -c touch% {m}"}),
        ("pull_changes", {"remote": f"file://{m}"}),
        ("pull_changes", {"remote": str(marker.parent)}),
        ("pull_changes", {"remote": "origin", "branch": f"--upload-pack=touch {m}"}),
        ("pull_changes", {"remote": "origin", "branch": "-f"}),
        ("commit_changes", {"message": "x", "files": ["../outside.txt"]}),
        ("commit_changes", {"message": "x", "files": [str(marker)]}),
        ("commit_changes", {"message": "x", "files": ["/etc/passwd"]}),
        ("commit_changes", {"message": "x", "files": ["src/../../x"]}),
        ("get_file_history", {"pathInProject": "../../etc/passwd"}),
        ("get_file_history", {"pathInProject": "/etc/passwd"}),
        ("get_file_diff", {"pathInProject": "../outside/secret"}),
    ]


async def test_option_injection_is_refused_before_any_process_starts(
    mcp, ws_path: Path, repo: Git, outside: Path, spawned: list[list[str]]
) -> None:
    marker = outside / "pwn"
    head = repo.head()
    async with mcp(ws_path) as client:
        for tool, args in injection_cases(marker):
            spawned.clear()
            text = await fails(client, tool, **args)
            assert "Error executing tool" not in text or ":" in text.split("Error executing tool", 1)[1], text
            assert any(word in text for word in ("refused", "invalid", "not found", "outside")), (
                tool,
                args,
                text,
            )
            for value in args.values():
                for v in value if isinstance(value, list) else [value]:
                    if isinstance(v, str) and (
                        v.startswith("-") or "\n" in v or " " in v or v.startswith("ext::")
                    ):
                        assert no_argv_contains(spawned, v), (tool, args, spawned)
            assert no_argv_contains(spawned, str(marker)), (tool, args, spawned)
    assert not marker.exists() and list(outside.iterdir()) == []
    assert repo.head() == head and repo.branch() == "main"
    assert repo("branch", "--format=%(refname:short)").split() == ["main"]


async def test_pathspecs_are_literal_and_file_lists_stay_inside(
    mcp, ws_path: Path, repo: Git, outside: Path
) -> None:
    repo.write("a.txt", "changed\n")
    repo.write("src/b.txt", "changed\n")
    repo.write("new.txt", "new\n")
    (outside / "secret.txt").write_text("secret\n")
    (ws_path / "link_out").symlink_to(outside)
    (ws_path / "secret_link.txt").symlink_to(outside / "secret.txt")
    head = repo.head()
    async with mcp(ws_path) as client:
        for files in (
            ["*"], ["*.txt"], [":(glob)**"], [":/"], [":(top)a.txt"], ["--all"], ["-A"], ["."
             "/../outside/secret.txt"], ["link_out/secret.txt"], ["secret_link.txt"], ["a.txt", "../x"],
        ):  # fmt: skip
            text = await fails(client, "commit_changes", message="sneaky", files=files)
            assert any(w in text for w in ("not found", "outside the workspace")), (files, text)
        # Pathspec magic is literal on reads as well.
        assert await ok(client, "get_file_history", pathInProject="a.txt") != []
        assert "not found" in await fails(client, "get_file_history", pathInProject="*.txt")
        assert "outside the workspace" in await fails(
            client, "get_file_diff", pathInProject="link_out/secret.txt"
        )
        # A message that looks like an option is a message.
        done = await ok(client, "commit_changes", message="--amend", files=["new.txt"])
        assert paths(done) == ["new.txt"]
    assert repo("rev-parse", "HEAD~1").strip() == head  # a new commit, not an amended one
    assert repo("log", "-1", "--format=%s").strip() == "--amend"
    assert sorted(repo("diff", "--name-only").split()) == [
        "a.txt",
        "src/b.txt",
    ]  # nothing else staged or committed
    assert repo("diff", "--cached", "--name-only").strip() == ""
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_ref_names_pass_check_ref_format(mcp, ws_path: Path, repo: Git) -> None:
    async with mcp(ws_path) as client:
        for bad in (
            "a..b", "a b", "a\tb", "a~1", "a^", "a:b", "a?", "a*", "a[", "a\\b", "a/", "/a", "a.lock", "a//b",
            "@", "@{-1}", "HEAD", "+main", ".hidden", "a/.b", "x" * 300, "refs/heads/../../x", "a\x7f",
        ):  # fmt: skip
            text = await fails(client, "create_branch", branch=bad)
            assert "invalid" in text, (bad, text)
            text = await fails(client, "switch_branch", branch=bad)
            assert "invalid" in text, (bad, text)
    assert repo("branch", "--format=%(refname:short)").split() == ["main"]
    assert not any(p.name.startswith("x") for p in (ws_path / ".git/refs/heads").iterdir())


# ---------------------------------------------------------------------------------------------
# repository configuration is untrusted input


@pytest.fixture
def planted(repo: Git, ws_path: Path, outside: Path) -> dict[str, Path]:
    """A repository whose own configuration tries to run a program on every read."""
    repo.commit("markdown", {"e.md": "e\n"})
    markers = {}
    for name in ("fsmonitor", "pager", "external", "drivercmd", "textconv", "clean", "smudge", "process", "odd",
                 "gpg", "editor", "askpass", "sshcommand"):  # fmt: skip
        then = "cat" if name in ("clean", "smudge", "odd", "textconv", "pager") else ""
        _, markers[name] = marker_script(outside, name, "exit 1" if name == "fsmonitor" else then)
    cfg = {
        "core.fsmonitor": str(outside / "fsmonitor.sh"),
        "core.pager": str(outside / "pager.sh"),
        "pager.log": str(outside / "pager.sh"),
        "pager.diff": str(outside / "pager.sh"),
        "pager.show": str(outside / "pager.sh"),
        "diff.external": str(outside / "external.sh"),
        "diff.evil.command": str(outside / "drivercmd.sh"),
        "diff.evil.textconv": str(outside / "textconv.sh"),
        "filter.evil.clean": str(outside / "clean.sh"),
        "filter.evil.smudge": str(outside / "smudge.sh"),
        "filter.proc.process": str(outside / "process.sh"),
        "filter.proc.required": "true",
        "filter.a=b.clean": str(outside / "odd.sh"),
        "log.showSignature": "true",
        "gpg.program": str(outside / "gpg.sh"),
        "core.editor": str(outside / "editor.sh"),
        "core.askPass": str(outside / "askpass.sh"),
        "core.sshCommand": str(outside / "sshcommand.sh"),
    }
    for key, value in cfg.items():
        repo("config", key, value)
    repo.write(".gitattributes", "*.txt diff=evil filter=evil\n*.proc filter=proc\n*.odd filter=a=b\n")
    repo.write("p.proc", "p\n")
    repo.write("o.odd", "o\n")
    # A "signed" commit, so that log.showSignature has something to verify.
    tree = repo("rev-parse", "HEAD^{tree}").strip()
    body = (
        f"tree {tree}\nparent {repo.head()}\nauthor A <a@x> 1700000000 +0000\ncommitter A <a@x> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nSigned commit\n"
    )
    obj = ws_path / ".git/signed-commit.txt"
    obj.write_text(body)
    signed = repo("hash-object", "-t", "commit", "-w", str(obj)).strip()
    obj.unlink()
    repo("update-ref", "refs/heads/main", signed)
    repo.write("a.txt", "dirty\n")
    repo.write("e.md", "e2\n")
    os.utime(ws_path / "src/b.txt", (1, 1))  # stat-dirty: status must re-read it (through the clean filter)
    return markers


def clear(markers: dict[str, Path]) -> None:
    for m in markers.values():
        m.unlink(missing_ok=True)


def ran(markers: dict[str, Path]) -> list[str]:
    return sorted(name for name, m in markers.items() if m.exists())


async def test_planted_config_never_runs_on_reads(
    mcp, ws_path: Path, repo: Git, planted: dict[str, Path]
) -> None:
    # Controls: plain git does run what was planted, so the plants are live.
    repo("status", "--porcelain")
    repo("diff", "a.txt")
    repo("diff", "e.md")
    repo("log", "-1", "--format=%H")
    assert {"fsmonitor", "drivercmd", "external", "gpg"} <= set(ran(planted)), ran(planted)
    clear(planted)
    repo("diff", "--no-ext-diff", "a.txt")
    assert {"textconv", "clean"} <= set(ran(planted)), ran(planted)
    clear(planted)
    async with mcp(ws_path) as client:
        status = await ok(client, "get_project_vcs_status")
        assert "a.txt" in status["unstaged"]["MODIFICATION"]
        diff = await ok(client, "get_file_diff", pathInProject="a.txt")
        assert "-a2" in diff and "+dirty" in diff  # a plain git diff, no driver output
        await ok(client, "get_file_diff", pathInProject="a.txt", commit1="HEAD~2", commit2="HEAD")
        assert "+e2" in await ok(client, "get_file_diff", pathInProject="e.md")
        await ok(client, "get_file_diff", pathInProject="p.proc")
        await ok(client, "get_file_diff", pathInProject="o.odd")
        await ok(client, "get_file_diff", pathInProject="a.txt", staged=True)
        history = await ok(client, "get_file_history", pathInProject="a.txt")
        assert history[0]["message"] == "Second commit"
        # The root's history is git log's: the signed commit (it changes no file) comes first, so
        # log.showSignature would have run gpg on it.
        assert (await ok(client, "get_file_history", pathInProject="/"))[0]["message"] == "Signed commit"
        details = await ok(client, "get_commit_details", commitHash="HEAD")
        assert details["message"] == "Signed commit" and "PGP" not in str(details)
        assert await ok(client, "find_commit_by_message", text="signed") == [details["hash"]]
        await ok(client, "get_branch_info")
    assert ran(planted) == []


async def test_untrusted_workspace_runs_no_hooks_filters_or_signing(
    mcp, ws_path: Path, repo: Git, outside: Path
) -> None:
    hooks = ws_path / ".git/hooks"
    markers = {}
    for hook in (
        "pre-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "post-checkout",
        "reference-transaction",
        "post-merge",
        "pre-auto-gc",
    ):
        _, markers[hook] = marker_script(outside, hook)
        script(hooks / hook, f"echo ran >> '{markers[hook]}'")
    alt = outside / "althooks"
    alt.mkdir()
    for hook in ("pre-commit", "post-checkout"):
        _, markers["alt-" + hook] = marker_script(outside, "alt-" + hook)
        script(alt / hook, f"echo ran >> '{markers['alt-' + hook]}'")
    for name in ("clean", "smudge", "gpg", "fsmonitor", "editor"):
        _, markers[name] = marker_script(outside, name, "cat" if name in ("clean", "smudge") else "")
    repo("config", "filter.evil.clean", str(outside / "clean.sh"))
    repo("config", "filter.evil.smudge", str(outside / "smudge.sh"))
    repo("config", "filter.evil.required", "true")
    repo("config", "commit.gpgSign", "true")
    repo("config", "gpg.program", str(outside / "gpg.sh"))
    repo("config", "core.fsmonitor", str(outside / "fsmonitor.sh"))
    repo("config", "core.editor", str(outside / "editor.sh"))
    repo.write(".gitattributes", "*.txt filter=evil\n")
    repo("add", ".gitattributes")
    repo("-c", "core.hooksPath=/dev/null", "-c", "commit.gpgSign=false", "commit", "-q", "-m", "attrs")
    repo("-c", "core.hooksPath=/dev/null", "branch", "other")
    repo("-c", "core.hooksPath=/dev/null", "-c", "filter.evil.clean=cat", "-c", "filter.evil.smudge=cat",
         "-c", "core.fsmonitor=false", "-c", "commit.gpgSign=false", "commit", "-q", "--allow-empty", "-m", "on main")  # fmt: skip
    clear(markers)
    repo.write("c.txt", "c\n")
    asked: list[str] = []

    async def yes(context, params):
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"confirm": True})

    for hooks_path in (None, str(alt)):
        if hooks_path:
            repo("config", "core.hooksPath", hooks_path)
            repo.write("d.txt", "d\n")
        async with mcp(ws_path, policy=Policy(trusted=False), elicitation_callback=yes) as client:
            done = await ok(
                client,
                "commit_changes",
                message="untrusted commit",
                files=["d.txt" if hooks_path else "c.txt"],
            )
            assert done["hooksEnabled"] is False
            made = await ok(
                client, "create_branch", branch=f"feature{'2' if hooks_path else ''}", checkout=True
            )
            assert made["checkedOut"]
            await ok(client, "switch_branch", branch="other")
            await ok(client, "switch_branch", branch="main")
    assert asked  # commits in an untrusted workspace were confirmed
    assert ran(markers) == []
    assert repo("cat-file", "-p", "HEAD").find("gpgsig") == -1  # not signed


async def test_trusted_workspace_runs_hooks_as_git_would(
    mcp, ws_path: Path, repo: Git, outside: Path
) -> None:
    _, marker = marker_script(outside, "pre-commit")
    script(ws_path / ".git/hooks/pre-commit", f"echo ran >> '{marker}'")
    _, post = marker_script(outside, "post-checkout")
    script(ws_path / ".git/hooks/post-checkout", f"echo ran >> '{post}'")
    repo.write("c.txt", "c\n")
    async with mcp(ws_path) as client:
        await ok(client, "commit_changes", message="trusted", files=["c.txt"])
        await ok(client, "create_branch", branch="t", checkout=True)
        # Reads stay contained even in a trusted workspace.
        script(ws_path / ".git/hooks/fsmon", f"echo ran >> '{outside / 'fsmon.ran'}'; exit 1")
        repo("config", "core.fsmonitor", str(ws_path / ".git/hooks/fsmon"))
        await ok(client, "get_project_vcs_status")
    assert marker.exists() and post.exists()
    assert not (outside / "fsmon.ran").exists()


async def test_untrusted_pull_refuses_repository_programs(
    mcp, ws_path: Path, tmp_path: Path, outside: Path
) -> None:
    bare = init_repo(tmp_path / "remote.git", bare=True)
    src = init_repo(tmp_path / "src")
    src.commit("one", {"x.txt": "1\n"})
    src("push", "-q", str(bare.root), "main")
    os.rmdir(ws_path)
    Git(tmp_path)("clone", "-q", str(bare.root), str(ws_path))
    mine = Git(ws_path)
    src.commit("two", {"x.txt": "2\n"})
    src("push", "-q", str(bare.root), "main")
    _, post_merge = marker_script(outside, "post-merge")
    script(ws_path / ".git/hooks/post-merge", f"echo ran >> '{post_merge}'")
    allow = Policy(trusted=False, confirm_policy="allow")
    for key, name in (
        ("remote.origin.uploadpack", "uploadpack"),
        ("core.sshCommand", "ssh"),
        ("credential.helper", "cred"),
        ("core.gitProxy", "proxy"),
        ("http.cookieFile", "cookie"),
    ):
        prog, marker = marker_script(
            outside, name, 'exec git-upload-pack "$@"' if name == "uploadpack" else ""
        )
        value = (
            f"!{prog}" if name == "cred" else (str(outside / "cookies") if name == "cookie" else str(prog))
        )
        mine("config", key, value)
        async with mcp(ws_path, policy=allow) as client:
            text = await fails(client, "pull_changes")
        assert "refused" in text and key.lower() in text.lower(), text
        assert not marker.exists()
        mine("config", "--unset", key)
    async with mcp(ws_path, policy=allow) as client:
        done = await ok(client, "pull_changes")
    assert done["updated"] is True and (ws_path / "x.txt").read_text() == "2\n"
    assert not post_merge.exists()  # no hooks in an untrusted workspace
    assert sorted(p.name for p in outside.iterdir() if p.suffix == ".ran") == []


async def test_ext_transport_never_runs(mcp, ws_path: Path, repo: Git, outside: Path) -> None:
    marker = outside / "ext.ran"
    repo("remote", "add", "origin", f"ext::sh -c touch% {marker}")
    repo("remote", "add", "rewritten", "evil:x")
    repo("config", "url.ext::sh -c touch% " + str(outside / "insteadof.ran") + " #.insteadOf", "evil:")
    for policy in (Policy(), Policy(trusted=False, confirm_policy="allow")):
        async with mcp(ws_path, policy=policy) as client:
            for remote in ("origin", "rewritten"):
                text = await fails(client, "pull_changes", remote=remote, branch="main")
                assert "not allowed" in text or "could not fetch" in text, text
    assert list(outside.iterdir()) == []


async def test_hosted_workspace_refuses_local_remotes_and_outside_git_dirs(
    mcp, ws_path: Path, tmp_path: Path
) -> None:
    bare = init_repo(tmp_path / "remote.git", bare=True)
    src = init_repo(tmp_path / "src")
    src.commit("one", {"x.txt": "1\n"})
    src("push", "-q", str(bare.root), "main")
    git = init_repo(ws_path)
    git("remote", "add", "origin", str(bare.root))
    hosted = Policy(hosted=True, confirm_policy="allow")
    async with mcp(ws_path, policy=hosted) as client:
        text = await fails(client, "pull_changes", branch="main")
        assert "not allowed" in text or "could not fetch" in text
        assert str(tmp_path) not in text
    other = tmp_path / "elsewhere"
    init_repo(other).commit("other tenant", {"t.txt": "t\n"})
    second = tmp_path / "ws2"
    second.mkdir()
    (second / ".git").write_text(f"gitdir: {other / '.git'}\n")
    async with mcp(second, policy=hosted) as client:
        text = await fails(client, "get_project_vcs_status")
        assert "refused" in text and str(other) not in text


# ---------------------------------------------------------------------------------------------
# the repository is the workspace's


async def test_core_worktree_and_inherited_git_variables_are_ignored(
    mcp, ws_path: Path, repo: Git, tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = init_repo(tmp_path / "victim")
    victim.commit("victim", {"victim.txt": "v\n"})
    (victim.root / "victim.txt").write_text("victim's unsaved work\n")
    (outside / "stray.txt").write_text("x\n")
    repo("config", "core.worktree", str(outside))
    prog, marker = marker_script(outside, "inherited")
    monkeypatch.setenv("GIT_DIR", str(victim.root / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(victim.root))
    monkeypatch.setenv("GIT_INDEX_FILE", str(victim.root / ".git/index"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(prog))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{prog}'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.pager")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(prog))
    repo.write("a.txt", "mine\n")
    async with mcp(ws_path) as client:
        status = await ok(client, "get_project_vcs_status")
        assert status == {"unstaged": {"MODIFICATION": ["a.txt"]}}
        assert "+mine" in await ok(client, "get_file_diff", pathInProject="a.txt")
        done = await ok(client, "commit_changes", message="mine", files=["a.txt"])
        assert paths(done) == ["a.txt"]
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_COUNT"):
        monkeypatch.delenv(name)
    assert repo("log", "-1", "--format=%s").strip() == "mine"
    assert victim("log", "--format=%s").split() == ["victim"]
    assert (victim.root / "victim.txt").read_text() == "victim's unsaved work\n"
    assert not marker.exists()


# ---------------------------------------------------------------------------------------------
# no prompts, no leaks, no survivors


class _NeedsPassword(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


async def test_credentials_are_never_prompted_for(mcp, ws_path: Path, repo: Git, outside: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NeedsPassword)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        repo("remote", "add", "origin", f"http://127.0.0.1:{server.server_address[1]}/repo.git")
        prog, marker = marker_script(outside, "askpass", "echo secret")
        repo("config", "core.askPass", str(prog))
        started = time.monotonic()
        async with mcp(ws_path) as client:
            text = await fails(client, "pull_changes", branch="main")
        assert "credentials" in text and "never prompts" in text, text
        assert time.monotonic() - started < 20
        assert not marker.exists()
    finally:
        server.shutdown()


async def test_error_messages_do_not_leak_outside_paths(
    mcp, ws_path: Path, repo: Git, tmp_path: Path
) -> None:
    secret_dir = tmp_path / "private-folder-name"
    repo("remote", "add", "origin", str(secret_dir / "missing.git"))
    async with mcp(ws_path) as client:
        text = await fails(client, "pull_changes", branch="main")
        assert "private-folder-name" not in text and str(tmp_path) not in text
    # A repository config that includes a file outside the workspace with bad syntax.
    secret = tmp_path / "private-config"
    secret.write_text("this is [not a config\n")
    repo("config", "include.path", str(secret))
    async with mcp(ws_path) as client:
        text = await fails(client, "get_project_vcs_status")
        assert "private-config" not in text and str(tmp_path) not in text, text


def _alive(needle: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
            except OSError:
                continue
            if needle in cmdline and state != "Z":
                found.append(int(pid))
    return found


async def test_timeout_kills_the_whole_process_group(mcp, ws_path: Path, repo: Git, monkeypatch) -> None:
    monkeypatch.setattr(git_core, "WRITE_TIMEOUT", 2.0)
    script(ws_path / ".git/hooks/pre-commit", "sleep 3017 &\nsleep 3018\n")
    repo.write("n.txt", "n\n")
    started = time.monotonic()
    async with mcp(ws_path) as client:
        text = await fails(client, "commit_changes", message="slow", files=["n.txt"])
    assert "took longer than 2s" in text and "killed" in text
    assert time.monotonic() - started < 10
    deadline = time.monotonic() + 5
    while (_alive("sleep 3017") or _alive("sleep 3018")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive("sleep 3017") == [] and _alive("sleep 3018") == []


async def test_background_children_do_not_outlive_the_call_or_hold_it(mcp, ws_path: Path, repo: Git) -> None:
    # A post-commit hook that leaves a child holding git's output pipe, and one that reads stdin.
    script(ws_path / ".git/hooks/post-commit", "sleep 3019 &\n")
    script(ws_path / ".git/hooks/pre-commit", "cat > /dev/null\n")  # stdin is closed: EOF at once
    repo.write("n.txt", "n\n")
    started = time.monotonic()
    async with mcp(ws_path) as client:
        done = await ok(client, "commit_changes", message="quick", files=["n.txt"])
    assert done["commitHash"] and time.monotonic() - started < 10
    deadline = time.monotonic() + 5
    while _alive("sleep 3019") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive("sleep 3019") == []
