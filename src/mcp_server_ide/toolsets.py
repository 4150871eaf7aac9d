"""Named tool sets for ``--tools``: ``jetbrains``, ``core``, ``all``, beside tool names and categories.

A ``--tools`` selection is a list of entries: a tool name (``wait``), a category (``git``, ``code``),
or a set below; ``-entry`` removes what the entry names. ``jetbrains,project_fs,-wait`` serves the
41 tools of the JetBrains-style interface and the sandbox tools, less ``wait``. Without an entry that adds, the selection
starts from every tool (``-terminal`` serves all but the terminal tools). An entry that names
nothing is refused, naming what exists (a typo must not silently serve no tools).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

SEED = (
    # Seed 000's interface, in its order: the 41 tools of the JetBrains-style REST door.
    "get_open_in_editor_file_text",
    "get_open_in_editor_file_path",
    "replace_selected_text",
    "replace_current_file_text",
    "open_file_in_editor",
    "get_file_text_by_path",
    "rewrite_file_content",
    "create_new_file_with_text",
    "list_files_in_folder",
    "replace_file_content_at_position",
    "append_file_content",
    "replace_specific_text",
    "search_in_files_content",
    "find_files_by_name_substring",
    "get_symbols_in_file",
    "find_references",
    "refactor_code_at_location",
    "toggle_debugger_breakpoint",
    "get_debugger_breakpoints",
    "get_run_configurations",
    "run_configuration",
    "execute_terminal_command",
    "run_command_on_background",
    "wait",
    "get_terminal_info",
    "execute_os_specific_command",
    "get_project_vcs_status",
    "find_commit_by_message",
    "get_file_history",
    "get_file_diff",
    "get_branch_info",
    "get_commit_details",
    "commit_changes",
    "pull_changes",
    "switch_branch",
    "create_branch",
    "get_project_modules",
    "get_project_dependencies",
    "list_available_actions",
    "execute_action_by_id",
    "get_progress_indicators",
)

CORE = (
    # The everyday loop: read, search, edit, outline and check a file, run a command, see, commit
    # and undo changes.
    "file",
    "search",
    "get_symbols_in_file",
    "get_file_problems",
    "run_command_on_background",
    "get_project_vcs_status",
    "get_file_diff",
    "commit_changes",
    "undo_changes",
)

SETS: dict[str, tuple[str, ...]] = {
    "jetbrains": SEED,
    "core": CORE,
    "all": (),  # every tool: filled in by expand()
}
"""Set name -> its entries (tool names or categories). ``code`` and ``git`` are categories."""


class UnknownToolEntry(ValueError):
    """A ``--tools`` entry that is no tool, category or set."""


def expand(selection: Sequence[str], names: Iterable[str], categories: Iterable[str]) -> list[str]:
    """``selection`` with every set replaced by its entries (``-set`` by ``-entry`` for each), checked
    against the tools and categories there are."""
    names, categories = list(names), set(categories)
    known = set(names) | categories
    out: list[str] = []
    for raw in selection:
        entry = raw.strip()
        sign, bare = ("-", entry[1:]) if entry.startswith("-") else ("", entry)
        if bare in SETS:
            members = SETS[bare] or tuple(names)
            out.extend(sign + m for m in members if m in known)  # a set member a build lacks: skipped
        elif bare in known:
            out.append(sign + bare)
        elif bare:
            raise UnknownToolEntry(
                f"unknown --tools entry {bare!r} (rule: each entry is a tool, a category or a set); "
                f"sets: {', '.join(SETS)}; categories: {', '.join(sorted(categories))}; "
                "`mcp-server-ide tools` lists the tools"
            )
    return out
