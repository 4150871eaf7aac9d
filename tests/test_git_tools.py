"""The seed's ten git tools through an MCP client session (and the REST door at the end), on real
repositories built here with the real git: an empty repository, a non-repository, renames,
deletions, untracked folders, a merge conflict, a detached HEAD, a local bare repository as the
remote for pull_changes."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import mcp_types
import pytest

from mcp_server_ide.workspace import Policy

from .support.gitrepo import Git, fails, flat_changes, flat_status, init_repo, isolated_git, ok, paths

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolated_git(monkeypatch, tmp_path / "home")


@pytest.fixture
def repo(ws_path: Path) -> Git:
    git = init_repo(ws_path)
    git.commit(
        "Initial commit", {"README.md": "# demo\n", "src/app.py": "print('hi')\n", "src/util.py": "X = 1\n"}
    )
    return git


def by_path(entries: list[dict]) -> dict[str, dict]:
    return {e["pathInProject"]: e for e in entries}


# ---------------------------------------------------------------------------------------------
# not a repository, empty repository


async def test_non_repository_says_git_not_available(mcp, ws_path: Path) -> None:
    (ws_path / "a.txt").write_text("x")
    async with mcp(ws_path) as client:
        for tool, args in [
            ("get_project_vcs_status", {}),
            ("get_branch_info", {}),
            ("find_commit_by_message", {"text": "x"}),
            ("get_file_history", {"pathInProject": "a.txt"}),
            ("get_file_diff", {"pathInProject": "a.txt"}),
            ("get_commit_details", {"commitHash": "HEAD"}),
            ("commit_changes", {"message": "x", "files": ["a.txt"]}),
            ("pull_changes", {}),
            ("switch_branch", {"branch": "main"}),
            ("create_branch", {"branch": "x"}),
        ]:
            text = await fails(client, tool, **args)
            # Dynamic discovery (surface/discovery.py) hides git tools in a non-repository and answers for
            # them; without it the engine answers the seed's "Git not available" (see the REST test below).
            assert "Git not available" in text or "needs a workspace with git" in text, (tool, text)
            assert str(ws_path.parent.parent) not in text.replace(str(ws_path), "<root>"), text
    assert not (ws_path / ".git").exists()


async def test_a_repository_above_the_workspace_is_not_used(mcp, tmp_path: Path) -> None:
    outer = init_repo(tmp_path / "outer")
    outer.commit("outer", {"secret.txt": "s\n", "ws/inner.txt": "i\n"})
    (tmp_path / "outer/secret.txt").write_text("changed\n")
    async with mcp(tmp_path / "outer/ws") as client:
        assert "Git not available" in await fails(client, "get_project_vcs_status")
        assert "Git not available" in await fails(client, "get_file_history", pathInProject="inner.txt")


async def test_empty_repository(mcp, ws_path: Path) -> None:
    git = init_repo(ws_path)
    git.write("a.txt", "a\n")
    async with mcp(ws_path) as client:
        assert await ok(client, "get_project_vcs_status") == {"untracked": ["a.txt"]}
        info = await ok(client, "get_branch_info")
        assert info["current"] == "main" and info["unborn"] is True and info["branches"] == []
        assert info.get("headCommit") is None and info["detached"] is False
        assert await ok(client, "find_commit_by_message", text="anything") == []
        assert await ok(client, "get_file_history", pathInProject="a.txt") == []
        assert "no commits yet" in await fails(client, "get_commit_details", commitHash="HEAD")
        assert "no commits yet" in await fails(client, "create_branch", branch="feature")
        diff = await ok(client, "get_file_diff", pathInProject="a.txt")
        assert "+a" in diff and "new file" in diff
        assert "nothing is staged" in await fails(client, "commit_changes", message="first")
        git("add", "a.txt")
        assert "+a" in await ok(client, "get_file_diff", pathInProject="a.txt", staged=True)
        done = await ok(client, "commit_changes", message="first")
        assert "success" not in done and done["commitHash"] == git.head() and paths(done) == ["a.txt"]
        details = await ok(client, "get_commit_details", commitHash="HEAD")
        assert details["parents"] == [] and details["fileChanges"] == {"ADDITION": ["a.txt"]}


async def test_create_branch_with_checkout_names_the_unborn_branch(mcp, ws_path: Path) -> None:
    git = init_repo(ws_path)
    async with mcp(ws_path) as client:
        made = await ok(client, "create_branch", branch="trunk", checkout=True)
        assert made == {"success": True, "branch": "trunk", "checkedOut": True}  # no commit yet: left out
    assert git.branch() == "trunk"


# ---------------------------------------------------------------------------------------------
# status


async def test_vcs_status_change_types(mcp, ws_path: Path, repo: Git) -> None:
    repo.commit("more", {"old_name.txt": "moved content\n" * 5, "gone.txt": "bye\n", "both.txt": "1\n"})
    repo("mv", "old_name.txt", "new_name.txt")
    (ws_path / "gone.txt").unlink()
    repo.write("src/app.py", "print('changed')\n")
    repo.write("staged_new.txt", "new\n")
    repo("add", "staged_new.txt")
    repo.write("both.txt", "2\n")
    repo("add", "both.txt")
    repo.write("both.txt", "3\n")
    repo.write("notes.txt", "untracked\n")
    repo.write("build/out/a.o", "x")
    repo.write("build/out/b.o", "y")
    repo.write(".gitignore", "*.log\n")
    repo.write("debug.log", "ignored\n")
    repo.write("with space & ünïcode.txt", "u\n")
    async with mcp(ws_path) as client:
        entries = by_path(flat_status(await ok(client, "get_project_vcs_status")))
    assert entries["new_name.txt"] == {
        "pathInProject": "new_name.txt",
        "type": "MOVED",
        "staged": True,
        "oldPathInProject": "old_name.txt",
    }
    assert entries["gone.txt"]["type"] == "DELETION" and "staged" not in entries["gone.txt"]
    assert entries["src/app.py"]["type"] == "MODIFICATION"
    assert entries["staged_new.txt"] == {
        "pathInProject": "staged_new.txt",
        "type": "ADDITION",
        "staged": True,
    }
    assert (
        entries["both.txt"]["type"] == "MODIFICATION"
        and entries["both.txt"]["staged"]
        and entries["both.txt"]["unstaged"]
    )
    assert entries["notes.txt"]["type"] == "UNTRACKED"
    assert entries["build/"]["type"] == "UNTRACKED"  # an untracked folder is listed once
    assert entries["with space & ünïcode.txt"]["type"] == "UNTRACKED"
    assert "debug.log" not in entries and "old_name.txt" not in entries
    assert set(entries) == {
        "new_name.txt", "gone.txt", "src/app.py", "staged_new.txt", "both.txt", "notes.txt", "build/",
        ".gitignore", "with space & ünïcode.txt",
    }  # fmt: skip


async def test_clean_tree_is_an_empty_list(mcp, ws_path: Path, repo: Git) -> None:
    async with mcp(ws_path) as client:
        assert await ok(client, "get_project_vcs_status") == {}


def make_conflict(git: Git) -> None:
    git.commit("base", {"conflict.txt": "base\n"})
    git("switch", "-q", "-c", "other")
    git.commit("theirs", {"conflict.txt": "theirs\n"})
    git("switch", "-q", "main")
    git.commit("ours", {"conflict.txt": "ours\n"})
    git("merge", "other", check=False)


async def test_merge_conflict_state(mcp, ws_path: Path, repo: Git) -> None:
    make_conflict(repo)
    async with mcp(ws_path) as client:
        entries = by_path(flat_status(await ok(client, "get_project_vcs_status")))
        assert entries["conflict.txt"]["type"] == "CONFLICT"
        assert (await ok(client, "get_branch_info"))["operation"] == "merge"
        text = await fails(client, "commit_changes", message="merge")
        assert "unresolved merge conflicts" in text and "conflict.txt" in text
        assert "conflict" in await fails(client, "switch_branch", branch="other")
        assert "merge is in progress" in await fails(client, "pull_changes")
        diff = await ok(client, "get_file_diff", pathInProject="conflict.txt")
        assert "<<<<<<<" in diff
        # Resolve, then commit_changes concludes the merge.
        repo.write("conflict.txt", "resolved\n")
        repo("add", "conflict.txt")
        text = await fails(client, "commit_changes", message="merge", files=["conflict.txt"])
        assert "merge is in progress" in text
        done = await ok(client, "commit_changes", message="Merge branch 'other'")
        details = await ok(client, "get_commit_details", commitHash=done["commitHash"])
        assert len(details["parents"]) == 2 and paths(details) == ["conflict.txt"]
        assert (await ok(client, "get_branch_info")).get("operation") is None


# ---------------------------------------------------------------------------------------------
# history and search


async def test_find_commit_by_message(mcp, ws_path: Path, repo: Git) -> None:
    fix = repo.commit("Fix bug in parser\n\nThe tokenizer dropped the last token.", {"a.txt": "1\n"})
    repo.commit("Add feature", {"a.txt": "2\n"})
    repo("switch", "-q", "-c", "side")
    side = repo.commit("fix: another bug on a side branch", {"b.txt": "1\n"})
    repo("switch", "-q", "main")
    async with mcp(ws_path) as client:
        assert await ok(client, "find_commit_by_message", text="fix bug") == [fix]
        assert await ok(client, "find_commit_by_message", text="FIX BUG IN") == [fix]
        assert await ok(client, "find_commit_by_message", text="tokenizer dropped") == [
            fix
        ]  # the body counts
        assert set(await ok(client, "find_commit_by_message", text="bug")) == {fix, side}  # all branches
        assert await ok(client, "find_commit_by_message", text="bug fix") != []  # all words, any order
        assert len(await ok(client, "find_commit_by_message", text="bug", maxResults=1)) == 1
        assert await ok(client, "find_commit_by_message", text="no such words anywhere") == []
        assert await ok(client, "find_commit_by_message", text="-v") == []  # data, not an option
        assert await ok(client, "find_commit_by_message", text="[") == []  # literal, not a regex
        assert "invalid text" in await fails(client, "find_commit_by_message", text="  ")


async def test_file_history_follows_renames_and_honours_max_entries(mcp, ws_path: Path, repo: Git) -> None:
    hashes = [repo.commit(f"edit {i}", {"src/helper.js": f"v{i}\n" * 20}) for i in range(5)]
    repo("mv", "src/helper.js", "src/renamed.js")
    moved = repo.commit("Rename helper")
    repo.commit("unrelated", {"other.txt": "o\n"})
    async with mcp(ws_path) as client:
        history = await ok(client, "get_file_history", pathInProject="src/renamed.js", maxEntries=10)
        assert [h["hash"] for h in history] == [moved, *reversed(hashes)]
        assert history[0] == {
            "hash": moved,
            "message": "Rename helper",
            "author": "Test Author",
            "date": history[0]["date"],
        }  # the path asked for and the author's email are left out
        assert "T" in history[0]["date"]
        # Before the rename, each entry names the file as it was called then.
        assert {h["path"] for h in history[1:]} == {os.path.join("src", "helper.js")}
        assert len(await ok(client, "get_file_history", pathInProject="src/renamed.js", maxEntries=2)) == 2
        folder = await ok(client, "get_file_history", pathInProject="src")
        assert folder[0]["message"] == "Rename helper" and "path" not in folder[0]  # a folder's: no path
        assert len(await ok(client, "get_file_history", pathInProject="/")) == 8
        deleted = await ok(
            client, "get_file_history", pathInProject="src/helper.js"
        )  # gone, but it has a history
        assert deleted[0]["hash"] == moved
        assert "not found" in await fails(client, "get_file_history", pathInProject="never/existed.txt")
        assert "maxEntries" in await fails(client, "get_file_history", pathInProject="src", maxEntries=0)
        repo.write("fresh.txt", "untracked\n")
        assert await ok(client, "get_file_history", pathInProject="fresh.txt") == []


async def test_history_of_the_root_is_git_log_of_head(mcp, ws_path: Path, repo: Git) -> None:
    # `/` asks for the whole project: every commit of HEAD's history, as `git log` lists it, even
    # those that change no file (an empty commit, a merge that kept one side's tree).
    repo.commit("Edit app", {"src/app.py": "print('v2')\n"})
    repo("commit", "-q", "--allow-empty", "-m", "Empty")
    repo("switch", "-q", "-c", "side")
    side = repo.commit("Side work", {"side.txt": "s\n"})
    repo("switch", "-q", "main")
    repo.commit("Main work", {"src/util.py": "X = 2\n"})
    repo("merge", "-q", "-s", "ours", "side", "-m", "Merge side, keeping main")
    log = repo("log", "--format=%H").split()
    async with mcp(ws_path) as client:
        for root in ("/", ".", str(ws_path)):
            history = await ok(client, "get_file_history", pathInProject=root, maxEntries=100)
            assert [h["hash"] for h in history] == log, root
            assert all("path" not in h for h in history)  # a file's history names its path; the root's not
        assert side in [h["hash"] for h in await ok(client, "get_file_history", pathInProject="/")]
        assert len(await ok(client, "get_file_history", pathInProject="/", maxEntries=3)) == 3
        # A file still follows its renames.
        repo("mv", "src/app.py", "src/main.py")
        moved = repo.commit("Rename app")
        history = await ok(client, "get_file_history", pathInProject="src/main.py")
        assert [h["message"] for h in history] == ["Rename app", "Edit app", "Initial commit"]
        assert history[0]["hash"] == moved and history[-1]["path"] == os.path.join("src", "app.py")


async def test_file_history_follows_head_commits_branches_and_packed_refs(
    mcp, ws_path: Path, repo: Git
) -> None:
    async with mcp(ws_path) as client:
        first = await ok(client, "get_file_history", pathInProject="src/app.py")
        assert [h["message"] for h in first] == ["Initial commit"]
        assert await ok(client, "get_file_history", pathInProject="src/app.py") == first  # asked again
        repo.commit("Edit app", {"src/app.py": "print('v2')\n"})
        assert [h["message"] for h in await ok(client, "get_file_history", pathInProject="src/app.py")] == [
            "Edit app",
            "Initial commit",
        ]
        repo("commit", "-q", "--amend", "-m", "Edit app, amended")
        assert (await ok(client, "get_file_history", pathInProject="src/app.py"))[0][
            "message"
        ] == "Edit app, amended"
        repo("switch", "-q", "-c", "older", "HEAD~1")
        assert [h["message"] for h in await ok(client, "get_file_history", pathInProject="src/app.py")] == [
            "Initial commit"
        ]
        repo("switch", "-q", "main")
        repo("pack-refs", "--all")  # refs/heads/main now lives in packed-refs only
        assert not (ws_path / ".git/refs/heads/main").exists()
        history = await ok(client, "get_file_history", pathInProject="src/app.py")
        assert history[0]["hash"] == repo.head()
        assert (await ok(client, "get_branch_info"))["headCommit"] == repo.head()
        repo("checkout", "-q", "--detach", "HEAD~1")
        assert len(await ok(client, "get_file_history", pathInProject="src/app.py")) == 1
        many = [f"f{i}.txt" for i in range(1001)]
        assert "at most 1000" in await fails(client, "commit_changes", message="x", files=many)


# ---------------------------------------------------------------------------------------------
# diffs


async def test_file_diff_every_comparison(mcp, ws_path: Path, repo: Git) -> None:
    first = repo.commit("one", {"f.txt": "line1\n"})
    second = repo.commit("two", {"f.txt": "line1\nline2\n"})
    repo.write("f.txt", "line1\nline2\nstaged\n")
    repo("add", "f.txt")
    repo.write("f.txt", "line1\nline2\nstaged\nworking\n")
    async with mcp(ws_path) as client:
        between = await ok(client, "get_file_diff", pathInProject="f.txt", commit1=first, commit2=second)
        assert (
            between.startswith("diff --git a/f.txt b/f.txt")
            and "+line2" in between
            and "staged" not in between
        )
        assert (
            await ok(client, "get_file_diff", pathInProject="f.txt", commit1="HEAD~1", commit2="HEAD")
            == between
        )
        assert await ok(client, "get_file_diff", pathInProject="f.txt", commit2=second) == between
        unstaged = await ok(client, "get_file_diff", pathInProject="f.txt")
        assert "+working" in unstaged and "+staged" not in unstaged
        staged = await ok(client, "get_file_diff", pathInProject="f.txt", staged=True)
        assert "+staged" in staged and "+working" not in staged
        vs_tree = await ok(client, "get_file_diff", pathInProject="f.txt", commit1="HEAD")
        assert "+staged" in vs_tree and "+working" in vs_tree
        vs_index = await ok(client, "get_file_diff", pathInProject="f.txt", commit1=first, staged=True)
        assert "+line2" in vs_index and "+staged" in vs_index and "+working" not in vs_index
        root = await ok(client, "get_file_diff", pathInProject="README.md", commit2="HEAD~2")
        assert "+# demo" in root  # a root commit against the empty tree
        assert await ok(client, "get_file_diff", pathInProject="README.md") == ""  # no differences
        assert (
            await ok(client, "get_file_diff", pathInProject="README.md", commit1=first, commit2=second) == ""
        )
        assert "not found" in await fails(client, "get_file_diff", pathInProject="f.txt", commit1="nosuchref")
        assert "not found" in await fails(
            client, "get_file_diff", pathInProject="f.txt", commit1="deadbeef" * 5
        )
        assert "not a range" in await fails(
            client, "get_file_diff", pathInProject="f.txt", commit1="HEAD~1..HEAD"
        )
        assert "not found" in await fails(client, "get_file_diff", pathInProject="missing.txt")
        assert "staged" in await fails(
            client, "get_file_diff", pathInProject="f.txt", commit2="HEAD", staged=True
        )


async def test_file_diff_of_a_rename_deletion_and_binary(mcp, ws_path: Path, repo: Git) -> None:
    (ws_path / "bin.dat").write_bytes(b"\x00\x01\x02")
    repo.commit("binary")
    (ws_path / "bin.dat").write_bytes(b"\x00\x01\x03")
    (ws_path / "src/util.py").unlink()
    async with mcp(ws_path) as client:
        assert "Binary files" in await ok(client, "get_file_diff", pathInProject="bin.dat")
        deleted = await ok(client, "get_file_diff", pathInProject="src/util.py")
        assert "deleted file mode" in deleted and "-X = 1" in deleted


async def test_big_diff_keeps_head_and_tail(mcp, ws_path: Path, repo: Git) -> None:
    repo.write("big.txt", "".join(f"line {i} {'x' * 60}\n" for i in range(40000)))  # ~2.8 MB
    async with mcp(ws_path) as client:
        text = await ok(client, "get_file_diff", pathInProject="big.txt")
    assert text.startswith("diff --git a/big.txt b/big.txt")
    assert "bytes truncated]…" in text and text.rstrip().endswith(f"+line 39999 {'x' * 60}")
    assert len(text) < 1_200_000


# ---------------------------------------------------------------------------------------------
# branches and commits


async def test_branch_info_detached_head_and_commit_details(mcp, ws_path: Path, repo: Git) -> None:
    first = repo.head()
    repo.commit("Rename and delete", {})
    repo("mv", "src/util.py", "src/utils.py")
    (ws_path / "README.md").unlink()
    repo.write("new.txt", "n\n")
    repo("add", "-A")
    repo("commit", "-q", "-m", "Rename util, delete readme\n\nWith a body.")
    change = repo.head()
    repo("branch", "develop")
    repo("branch", "feature/login")
    repo("tag", "-a", "v1.0", "-m", "release")
    async with mcp(ws_path) as client:
        info = await ok(client, "get_branch_info")
        assert info["current"] == "main" and info["branches"] == ["develop", "feature/login", "main"]
        assert info["detached"] is False and info["headCommit"] == change and info.get("upstream") is None
        details = await ok(client, "get_commit_details", commitHash=change[:8])
        assert (
            details["hash"] == change and details["message"] == "Rename util, delete readme\n\nWith a body."
        )
        assert details["author"] == "Test Author" and details["authorEmail"] == "author@example.com"
        assert sorted(paths(details)) == ["README.md", "new.txt", "src/utils.py"]
        assert not {"files", "committer", "committerDate"} & set(details)  # once, and not the author again
        changes = {c["path"]: c for c in flat_changes(details["fileChanges"])}
        assert changes["src/utils.py"] == {"path": "src/utils.py", "type": "MOVED", "oldPath": "src/util.py"}
        assert changes["README.md"]["type"] == "DELETION" and changes["new.txt"]["type"] == "ADDITION"
        assert (await ok(client, "get_commit_details", commitHash="v1.0"))["hash"] == change  # tags peel
        assert "not in this repository" in await fails(client, "get_commit_details", commitHash="0" * 40)
        assert "not in this repository" in await fails(
            client, "get_commit_details", commitHash="HEAD:README.md"
        )
        repo("checkout", "-q", "--detach", first)
        info = await ok(client, "get_branch_info")
        assert info.get("current") is None and info["detached"] is True and info["headCommit"] == first
        assert "main" in info["branches"]
        assert "detached" in await fails(client, "pull_changes")
        switched = await ok(client, "switch_branch", branch="main")
        assert switched["branch"] == "main" and switched.get("previousBranch") is None


async def test_create_and_switch_branches(mcp, ws_path: Path, repo: Git) -> None:
    start = repo.head()
    repo.commit("second", {"src/app.py": "print('v2')\n"})
    async with mcp(ws_path) as client:
        made = await ok(client, "create_branch", branch="feature/new-feature")
        assert made == {
            "success": True,
            "branch": "feature/new-feature",
            "checkedOut": False,
            "commit": repo.head(),
        }
        assert repo.branch() == "main"
        assert "already exists" in await fails(client, "create_branch", branch="feature/new-feature")
        made = await ok(client, "create_branch", branch="old", checkout=True, startPoint=start)
        assert made["commit"] == start and repo.branch() == "old"
        assert (ws_path / "src/app.py").read_text() == "print('hi')\n"
        for bad in ("a..b", "has space", "HEAD", "@{-1}", "x.lock", "trailing/", "+force", "a:b", "x~1", "@"):
            text = await fails(client, "create_branch", branch=bad)
            assert "invalid branch name" in text, (bad, text)
        assert "not found" in await fails(client, "create_branch", branch="x", startPoint="nope")
        switched = await ok(client, "switch_branch", branch="main")
        assert switched == {"success": True, "branch": "main", "previousBranch": "old", "carriedChanges": []}
        assert (ws_path / "src/app.py").read_text() == "print('v2')\n"
        again = await ok(client, "switch_branch", branch="main")  # idempotent
        assert again["branch"] == "main"
        assert "no branch" in await fails(client, "switch_branch", branch="nope")
        # Local changes that do not collide come along.
        repo.write("README.md", "# local edit\n")
        carried = await ok(client, "switch_branch", branch="feature/new-feature")
        assert carried["carriedChanges"] == ["README.md"]
        assert (ws_path / "README.md").read_text() == "# local edit\n"


async def test_switch_refuses_when_local_changes_would_be_overwritten(mcp, ws_path: Path, repo: Git) -> None:
    repo("switch", "-q", "-c", "other")
    repo.commit("other edits app", {"src/app.py": "print('other')\n"})
    repo.commit("other adds a file", {"only_on_other.txt": "o\n"})
    repo("switch", "-q", "main")
    repo.write("src/app.py", "print('my unsaved work')\n")
    async with mcp(ws_path) as client:
        text = await fails(client, "switch_branch", branch="other")
        assert "would be overwritten" in text and "src/app.py" in text and "Nothing was changed" in text
        assert (
            repo.branch() == "main" and (ws_path / "src/app.py").read_text() == "print('my unsaved work')\n"
        )
        # An untracked file in the way is refused too.
        repo("checkout", "-q", "--", "src/app.py")
        repo.write("only_on_other.txt", "mine\n")
        text = await fails(client, "switch_branch", branch="other")
        assert "untracked" in text and "only_on_other.txt" in text
        assert repo.branch() == "main" and (ws_path / "only_on_other.txt").read_text() == "mine\n"


async def test_commit_changes(mcp, ws_path: Path, repo: Git) -> None:
    async with mcp(ws_path) as client:
        text = await fails(client, "commit_changes", message="nothing")
        assert "nothing is staged" in text and "clean" in text
        repo.write("src/app.py", "print('edited')\n")
        repo.write("new.txt", "new\n")
        text = await fails(client, "commit_changes", message="nothing yet")
        assert "nothing is staged" in text and "2 changed or untracked" in text
        # files: exactly those are staged and committed
        done = await ok(client, "commit_changes", message="Add new", files=["new.txt"])
        assert paths(done) == ["new.txt"] and "success" not in done and done["branch"] == "main"
        assert done["commitHash"] == repo.head() and "hooksEnabled" not in done and "files" not in done
        assert repo("log", "-1", "--format=%s").strip() == "Add new"
        assert repo("status", "--porcelain").strip() == "M src/app.py"
        # without files: what is staged, and only that (other staged changes are not swept in with files)
        repo.write("src/util.py", "X = 2\n")
        repo("add", "src/util.py")
        done = await ok(client, "commit_changes", message="- util starts with a dash", files=["src/app.py"])
        assert paths(done) == ["src/app.py"]
        assert repo("log", "-1", "--format=%s").strip() == "- util starts with a dash"
        assert repo("diff", "--cached", "--name-only").strip() == "src/util.py"  # still staged
        done = await ok(client, "commit_changes", message="Staged util\n\nbody # not a comment\n")
        assert paths(done) == ["src/util.py"]
        assert repo("log", "-1", "--format=%B").strip() == "Staged util\n\nbody # not a comment"
        # deletions and folders
        (ws_path / "README.md").unlink()
        repo.write("docs/a.md", "a\n")
        repo.write("docs/b.md", "b\n")
        done = await ok(client, "commit_changes", message="docs, no readme", files=["README.md", "docs"])
        changes = {c["path"]: c["type"] for c in flat_changes(done["fileChanges"])}
        assert changes == {"README.md": "DELETION", "docs/a.md": "ADDITION", "docs/b.md": "ADDITION"}
        assert repo("status", "--porcelain").strip() == ""
        # failures
        assert "no changes" in await fails(client, "commit_changes", message="x", files=["src/app.py"])
        assert "not found" in await fails(client, "commit_changes", message="x", files=["nope.txt"])
        repo.write(".gitignore", "*.log\n")
        repo.write("debug.log", "x\n")
        assert "ignored" in await fails(client, "commit_changes", message="x", files=["debug.log"])
        assert "empty" in await fails(client, "commit_changes", message="   ", files=[".gitignore"])
        assert ".git" in await fails(client, "commit_changes", message="x", files=[".git/config"])
        assert "outside the workspace" in await fails(client, "commit_changes", message="x", files=["../x"])
    assert repo("log", "--format=%s", "-1").strip() == "docs, no readme"


async def test_commit_runs_hooks_in_a_trusted_workspace(
    mcp, ws_path: Path, repo: Git, tmp_path: Path
) -> None:
    marker = tmp_path / "hook-ran"
    hook = ws_path / ".git/hooks/pre-commit"
    hook.write_text(f"#!/bin/sh\necho ran >> '{marker}'\n")
    hook.chmod(0o755)
    repo.write("a.txt", "a\n")
    async with mcp(ws_path) as client:
        await ok(client, "commit_changes", message="with hook", files=["a.txt"])
        assert marker.read_text() == "ran\n"
        hook.write_text("#!/bin/sh\necho 'lint failed: trailing whitespace' >&2\nexit 1\n")
        repo.write("a.txt", "b\n")
        before = repo.head()
        text = await fails(client, "commit_changes", message="refused by hook", files=["a.txt"])
        assert "hook" in text and "lint failed: trailing whitespace" in text
        assert repo.head() == before


async def test_commit_without_identity_says_how_to_fix(mcp, ws_path: Path, repo: Git, monkeypatch) -> None:
    empty = ws_path.parent / "empty-gitconfig"
    empty.write_text("[user]\n\tuseConfigOnly = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    repo.write("a.txt", "a\n")
    async with mcp(ws_path) as client:
        text = await fails(client, "commit_changes", message="who", files=["a.txt"])
    assert "user.name" in text and "user.email" in text


# ---------------------------------------------------------------------------------------------
# pull, with a local bare repository as the remote


@pytest.fixture
def remote_pair(tmp_path: Path, ws_path: Path) -> tuple[Git, Git, Git]:
    """(bare remote, the workspace's clone, another clone that pushes)."""
    bare = init_repo(tmp_path / "remote.git", bare=True)
    other = init_repo(tmp_path / "other")
    other.commit("Initial", {"README.md": "# shared\n", "lib.py": "A = 1\n"})
    other("remote", "add", "origin", str(bare.root))
    other("push", "-q", "-u", "origin", "main")
    os.rmdir(ws_path)
    Git(tmp_path)("clone", "-q", str(bare.root), str(ws_path))
    return bare, Git(ws_path), other


async def test_pull_fast_forwards_and_reports(mcp, ws_path: Path, remote_pair, tmp_path: Path) -> None:
    _bare, mine, other = remote_pair
    async with mcp(ws_path) as client:
        up = await ok(client, "pull_changes", remote="origin", branch="main")
        assert up["success"] and up["message"] == "Already up to date." and up["updated"] is False
        info = await ok(client, "get_branch_info")
        assert info["upstream"] == "origin/main" and (info["ahead"], info["behind"]) == (0, 0)
        assert "origin/main" in info["remoteBranches"] and "origin/HEAD" not in info["remoteBranches"]
        before = mine.head()
        new = other.commit("Remote change", {"lib.py": "A = 2\n", "added.py": "B = 1\n"})
        other("push", "-q")
        done = await ok(client, "pull_changes")  # defaults: origin, the upstream branch
        assert done["updated"] is True and done["message"] == f"Fast-forward {before[:7]}..{new[:7]}"
        assert done["previousCommit"] == before and done["currentCommit"] == new == mine.head()
        assert {c["path"]: c["type"] for c in done["changedFiles"]} == {
            "lib.py": "MODIFICATION",
            "added.py": "ADDITION",
        }
        assert (ws_path / "lib.py").read_text() == "A = 2\n"
        assert str(tmp_path) not in str(done)
        # Another remote branch, by name.
        other("switch", "-q", "-c", "feature")
        other.commit("feature work", {"f.txt": "f\n"})
        other("push", "-q", "origin", "feature")
        mine("fetch", "-q")
        info = await ok(client, "get_branch_info")
        assert info["remoteBranches"] == ["origin/feature", "origin/main"]
        switched = await ok(client, "switch_branch", branch="feature")  # only on the remote: tracked locally
        assert switched["createdFrom"] == "origin/feature" and mine.branch() == "feature"
        assert (await ok(client, "get_branch_info"))["upstream"] == "origin/feature"


async def test_pull_refuses_divergence_and_overwrites_changing_nothing(
    mcp, ws_path: Path, remote_pair
) -> None:
    _bare, mine, other = remote_pair
    other.commit("Remote edits lib", {"lib.py": "A = 'remote'\n"})
    other("push", "-q")
    async with mcp(ws_path) as client:
        # Local uncommitted change to a file the pull would update.
        mine.write("lib.py", "A = 'local work'\n")
        before = mine.head()
        text = await fails(client, "pull_changes")
        assert "would be overwritten" in text and "lib.py" in text and "Nothing was changed" in text
        assert mine.head() == before and (ws_path / "lib.py").read_text() == "A = 'local work'\n"
        # Diverged history: a clear report, nothing changed.
        mine("checkout", "-q", "--", "lib.py")
        mine.commit("Local commit", {"local.txt": "l\n"})
        before = mine.head()
        text = await fails(client, "pull_changes", remote="origin", branch="main")
        assert (
            "not a fast-forward" in text
            and "1 commit(s)" in text
            and "Nothing in the working tree was changed" in text
        )
        assert mine.head() == before and (ws_path / "lib.py").read_text() == "A = 1\n"
        info = await ok(client, "get_branch_info")
        assert (info["ahead"], info["behind"]) == (1, 1)
        assert "not a configured remote" in await fails(client, "pull_changes", remote="upstream")
        assert "has no branch" in await fails(client, "pull_changes", branch="no-such-branch")


async def test_pull_into_an_empty_repository(mcp, ws_path: Path, remote_pair, tmp_path: Path) -> None:
    bare, _, _ = remote_pair
    empty = tmp_path / "empty_ws"
    git = init_repo(empty)
    git("remote", "add", "origin", str(bare.root))
    async with mcp(empty) as client:
        done = await ok(client, "pull_changes", branch="main")
    assert done["updated"] is True and done.get("previousCommit") is None
    assert (empty / "README.md").read_text() == "# shared\n"


async def test_pull_without_credentials_never_prompts(mcp, ws_path: Path, repo: Git) -> None:
    # A remote that needs a password: a local HTTP-less URL git cannot reach without asking. With prompts
    # off, git fails at once instead of waiting for a terminal.
    repo("remote", "add", "origin", "https://user@127.0.0.1:9/repo.git")
    async with mcp(ws_path) as client:
        text = await fails(client, "pull_changes", branch="main")
    assert "could not fetch" in text or "credentials" in text


# ---------------------------------------------------------------------------------------------
# untrusted workspaces ask first


def answering(answer: bool, asked: list[str]):
    async def callback(context, params):
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept" if answer else "decline", content={"confirm": answer})

    return callback


async def test_untrusted_workspace_asks_before_commit_and_pull(mcp, ws_path: Path, repo: Git) -> None:
    repo.write("a.txt", "a\n")
    asked: list[str] = []
    policy = Policy(trusted=False)
    async with mcp(ws_path, policy=policy, elicitation_callback=answering(False, asked)) as client:
        text = await fails(client, "commit_changes", message="try", files=["a.txt"])
        assert "declined" in text and "a.txt" in repo("status", "--porcelain")
    assert asked and "untrusted" in asked[0]
    async with mcp(ws_path, policy=policy, elicitation_callback=answering(True, asked)) as client:
        done = await ok(client, "commit_changes", message="confirmed", files=["a.txt"])
        assert done["hooksEnabled"] is False and repo("log", "-1", "--format=%s").strip() == "confirmed"
        # Reads never ask.
        await ok(client, "get_project_vcs_status")
    async with mcp(ws_path, policy=policy) as client:  # no elicitation: the policy (refuse) decides
        repo.write("b.txt", "b\n")
        assert "cannot ask" in await fails(client, "commit_changes", message="x", files=["b.txt"])
    async with mcp(ws_path, policy=Policy(trusted=False, confirm_policy="allow")) as client:
        await ok(client, "commit_changes", message="allowed by policy", files=["b.txt"])


# ---------------------------------------------------------------------------------------------
# the REST door (a real server process)


def test_git_tools_through_the_rest_door(http_server, ws_path: Path, tmp_path: Path) -> None:
    repo = init_repo(ws_path)
    repo.commit("Initial commit", {"src/utils/helper.js": "function helper() {}\n"})
    repo.write("src/utils/helper.js", "function helper() { return 1; }\n")
    repo.write("src/new-file.js", "x\n")
    server = http_server(ws_path)

    def post(tool: str, body: dict) -> httpx.Response:
        return httpx.post(f"{server.url}/mcp/{tool}", json=body, timeout=30)

    status = post("get_project_vcs_status", {}).json()
    assert status["error"] is None
    assert status["status"] == [
        {"pathInProject": "src/new-file.js", "type": "UNTRACKED", "staged": False, "unstaged": True},
        {"pathInProject": "src/utils/helper.js", "type": "MODIFICATION", "staged": False, "unstaged": True},
    ]
    diff = post("get_file_diff", {"pathInProject": "src/utils/helper.js"}).json()["status"]
    assert diff.startswith("diff --git a/src/utils/helper.js b/src/utils/helper.js")
    done = post("commit_changes", {"message": "Add new feature", "files": ["src/new-file.js"]}).json()[
        "status"
    ]
    assert done["success"] is True and len(done["commitHash"]) == 40
    assert post("find_commit_by_message", {"text": "new feature"}).json()["status"] == [done["commitHash"]]
    assert (
        post("get_file_history", {"pathInProject": "src/utils/helper.js", "maxEntries": 10}).json()["status"][
            0
        ]["message"]
        == "Initial commit"
    )
    made = post("create_branch", {"branch": "feature/new-feature", "checkout": True}).json()["status"]
    assert made == {
        "success": True,
        "branch": "feature/new-feature",
        "checkedOut": True,
        "commit": done["commitHash"],
    }
    assert post("switch_branch", {"branch": "main"}).json()["status"]["success"] is True
    info = post("get_branch_info", {}).json()["status"]
    assert info["current"] == "main" and info["branches"] == ["feature/new-feature", "main"]
    details = post("get_commit_details", {"commitHash": done["commitHash"][:12]}).json()["status"]
    assert details["files"] == ["src/new-file.js"]  # the seed's field, on REST
    assert done["files"] == ["src/new-file.js"] and done["hooksEnabled"] is True
    history = post("get_file_history", {"pathInProject": "src/utils/helper.js"}).json()["status"]
    assert {"hash", "message", "author", "date", "authorEmail", "path"} <= set(history[0])
    refused = post("get_file_diff", {"pathInProject": "src/utils/helper.js", "commit1": "--output=/tmp/pwn"})
    assert refused.status_code == 403 and "starts with '-'" in refused.json()["error"]
    missing = post("pull_changes", {"remote": "origin", "branch": "main"})
    assert missing.status_code == 404 and "not a configured remote" in missing.json()["error"]


def test_rest_door_on_a_non_repository(http_server, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    server = http_server(plain)
    response = httpx.post(f"{server.url}/mcp/get_project_vcs_status", json={}, timeout=30)
    assert response.status_code == 503
    body = response.json()
    assert body["status"] is None and body["error"].startswith("Git not available:")
    assert "is not a git repository" in body["error"]
