"""The untrusted-workspace rule: what a terminal tool would run there needs the person's confirmation."""

from __future__ import annotations

from ...call import current
from ...engines.confirm import confirm

UNTRUSTED_RULE = "commands in an untrusted workspace need the person's confirmation"


async def confirm_command(what: str, command: str) -> None:
    """Ask the person before ``command`` runs when the workspace is untrusted (refused when they decline)."""
    ws = current().workspace
    if not ws.policy.trusted:
        shown = command if len(command) <= 2000 else command[:2000] + "…"
        await confirm(f"{what} in the untrusted workspace {ws.name!r}?\n\n{shown}", rule=UNTRUSTED_RULE)
