"""Asking the person before a risky operation.

:func:`confirm` asks through the caller's reporter (MCP elicitation when the client supports
it). When the client cannot be asked, the workspace's ``confirm_policy`` decides: ``refuse``
(the default) or ``allow``. A refusal is a ``ToolFailure`` naming the rule and the way out.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from pydantic import BaseModel, Field

from ..call import current
from .failures import ToolFailure

log = logging.getLogger(__name__)


class Confirmation(BaseModel):
    confirm: bool = Field(default=True, description="Go ahead with this operation?")


async def ask_through_elicitation(ctx: Any, message: str) -> bool | None:
    """True/False from the person, or None when the client has no elicitation.

    Works on both protocol eras (see :mod:`.peer`): on 2026-07-28 the first round raises
    ``InputNeeded``, which must propagate so the call returns an ``InputRequiredResult``.
    """
    from .peer import InputNeeded, elicit

    try:
        result = await elicit(message, Confirmation)
    except InputNeeded:
        raise
    except Exception:
        log.debug("elicitation failed", exc_info=True)
        return None
    if result is None:
        return None
    if result.action != "accept":
        return False
    content = result.content or {}
    return bool(content.get("confirm", True))


async def confirm(message: str, *, rule: str) -> None:
    """Ask the person; raise ``ToolFailure`` unless they (or the policy) allow it."""
    call = current()
    answer = await call.reporter.confirm(message)
    if answer is True:
        return
    if answer is False:
        raise ToolFailure(f"cancelled: the person declined ({rule})", kind="refused")
    if call.workspace.policy.confirm_policy == "allow":
        return
    raise ToolFailure(
        f"refused: {rule}, and this client cannot ask the person (no elicitation). "
        "Ask them to confirm and run the server with --confirm-policy allow, or use a client with elicitation.",
        kind="refused",
    )


def confirm_sync(message: str, *, rule: str) -> None:
    """:func:`confirm` from a sync tool (it runs in a worker thread)."""
    import anyio.from_thread

    anyio.from_thread.run(functools.partial(confirm, message, rule=rule))
