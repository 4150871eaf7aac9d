"""Search through ripgrep: file contents and file names.

What every search does:

- honours the workspace's ``.gitignore``/``.ignore`` files and ``.git/info/exclude``, even outside a
  git repository (``--no-require-git``), unless the caller asks for ignored files too; like VS Code,
  not the ignore files of folders above the root nor the user's global excludes; includes hidden
  files; never descends into ``.git``, and skips
  ``node_modules`` and ``dist`` folders unless ignored files are asked for;
- never follows a symlink (ripgrep without ``--follow`` skips links, so nothing outside the root is
  read and no link loop is walked);
- runs with a deadline and an output cap; a search stopped by either returns what it found so far,
  marked incomplete, never as a complete answer;
- checks what ripgrep names once it is done (:mod:`.beneath`): ripgrep opens folders by path, so a
  folder swapped for a link out while it walks (and back) would lead it outside. Each name is looked
  up again from the root's descriptor without following links, and each matching line is read again
  from the file opened that way; what is not there or reads differently is left out, and the answer
  says so.

Which module holds what:

- :mod:`.ripgrep`: finding ``rg`` and running it contained (deadline, output cap, cancellation).
- :mod:`.globs`: gitignore-style include/exclude globs matched against relative paths.
- :mod:`.scope`: the flags every search shares (:class:`Filters`).
- :mod:`.beneath`: names and lines looked up again beneath the root, never through a link.
- :mod:`.content`: :func:`search_content`, the matching lines of files.
- :mod:`.files`: :func:`list_files` (what a search looks at; :class:`StreamedFiles`: the
  same names while ripgrep prints them; :func:`files_skipping`: the same but below some folders), :func:`find_files` (by name) and :func:`list_temp_files`.
- :mod:`.names`: splitting ripgrep's list of names, and finding a text in it before decoding it.
"""

from __future__ import annotations

from .content import FileMatches, Match, search_content
from .files import (
    FilesResult,
    StreamedFiles,
    files_skipping,
    find_files,
    list_files,
    list_temp_files,
    stream_files,
)
from .ripgrep import rg_binary
from .scope import Filters

__all__ = [
    "FileMatches",
    "FilesResult",
    "Filters",
    "Match",
    "StreamedFiles",
    "files_skipping",
    "find_files",
    "list_files",
    "list_temp_files",
    "rg_binary",
    "search_content",
    "stream_files",
]
