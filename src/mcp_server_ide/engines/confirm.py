"""Asking the person before a risky operation.

:func:`confirm` asks through the caller's reporter (MCP elicitation when the client supports
it). When the client cannot be asked, the workspace's ``confirm_policy`` decides: ``refuse``
(the default) or ``allow``. A refusal is a ``ToolFailure`` naming the rule and the way out.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, Field

from ..call import current
from ..registry import ToolFailure

log = logging.getLogger(__name__)


class Confirmation(BaseModel):
    confirm: bool = Field(default=True, description="Go ahead with this operation?")


async def ask_through_elicitation(ctx: Any, message: str) -> bool | None:
    """True/False from the person, or None when the client has no elicitation."""
    try:
        caps = ctx.client_capabilities
    except Exception:
        caps = None
    if caps is None or getattr(caps, "elicitation", None) is None:
        return None
    try:
        result = await ctx.elicit(message, Confirmation)
    except Exception:
        log.debug("elicitation failed", exc_info=True)
        return None
    if result.action != "accept":
        return False
    data = getattr(result, "data", None)
    return bool(getattr(data, "confirm", True))


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
