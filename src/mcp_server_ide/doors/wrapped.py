"""The SDK's message streams wrapped, for a door that sees each message as it passes.

:class:`WrappedReader` and :class:`WrappedWriter` forward everything to the stream they wrap
(iteration, closing, ``async with``, the SDK's ``last_context``); a subclass overrides only
``receive`` or ``send``. Used by :mod:`.faststdio` (answering unparsable lines) and
:mod:`.inflight` (holding back end of input until requests are answered).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, Protocol, Self, TypeVar

import anyio

if TYPE_CHECKING:
    from types import TracebackType

    from mcp.shared.message import SessionMessage

    from ..surface.lowlevel import MessageReader, MessageWriter  # noqa: F401 (named as strings below)


class _Closable(Protocol):
    async def aclose(self) -> None: ...


S = TypeVar("S", bound=_Closable)


class _Closing(Generic[S]):
    """``aclose`` and ``async with`` forwarded to the stream wrapped, ``inner``."""

    def __init__(self, inner: S) -> None:
        self.inner = inner

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class WrappedReader(_Closing["MessageReader"]):
    """A read stream passing every message of ``inner`` on; override ``receive`` to see them."""

    @property
    def last_context(self) -> object:
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        return await self.inner.receive()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class WrappedWriter(_Closing["MessageWriter"]):
    """A write stream sending every message to ``inner``; override ``send`` to see them."""

    async def send(self, item: SessionMessage, /) -> None:
        await self.inner.send(item)
