"""Run an async judge entry point from synchronous code, with a clean first Ctrl-C."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


def run_sync(start: Callable[[asyncio.Event], Awaitable[T]], *, handle_sigint: bool, name: str) -> T:
    """Run ``start(stop_event)`` on an event loop and return its result.

    With ``handle_sigint`` (main thread only) the first Ctrl-C sets ``stop_event`` instead of raising,
    so the coroutine returns what is done. Called where a loop is already running (a notebook cell), it
    runs on a loop of its own in a worker thread named ``name``.
    """

    async def main() -> T:
        stop = asyncio.Event()
        installed = False
        if handle_sigint and threading.current_thread() is threading.main_thread():
            try:
                asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop.set)
                installed = True
            except (NotImplementedError, RuntimeError, ValueError):
                pass
        try:
            return await start(stop)
        finally:
            if installed:
                asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=name) as pool:
        return pool.submit(asyncio.run, main()).result()
