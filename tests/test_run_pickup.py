"""`disambig serve`'s workers look at the run queue every 50 ms (agent/app/run_pickup.py)."""

import asyncio

import pytest

ops = pytest.importorskip("langgraph_runtime_inmem.ops")


def test_an_idle_worker_looks_at_the_queue_every_50_ms_and_gets_what_the_runtime_gives(monkeypatch):
    from agent.app import run_pickup

    original = ops.Runs.__dict__["next"]
    monkeypatch.setattr(ops.Runs, "next", original)  # restored after the test
    calls, waits = [], []

    async def runtime_next(wait, limit=1):  # stands in for the runtime's own: what it was asked, one run
        calls.append((wait, limit))
        yield ("run", 1)

    runtime_next.__doc__ = "the runtime's"
    monkeypatch.setattr(ops.Runs, "next", staticmethod(runtime_next))
    real_sleep = asyncio.sleep

    async def sleep(seconds):
        waits.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(run_pickup.asyncio, "sleep", sleep)
    assert run_pickup.quicker_run_pickup() and run_pickup.quicker_run_pickup()  # applied once, then known

    async def drain(wait):
        return [item async for item in ops.Runs.next(wait=wait, limit=3)]

    assert asyncio.run(drain(True)) == [("run", 1)] and asyncio.run(drain(False)) == [("run", 1)]
    assert waits == [run_pickup.POLL_SECONDS]  # one short wait, only when asked to wait
    assert calls == [(False, 3), (False, 3)]  # never the runtime's own 0.5 s wait


def test_a_runtime_whose_queue_looks_different_is_left_alone(monkeypatch):
    from agent.app import run_pickup

    async def other(limit=1, *, wait=True):
        yield None

    monkeypatch.setattr(ops.Runs, "next", staticmethod(other))
    assert not run_pickup.quicker_run_pickup()
    assert ops.Runs.__dict__["next"].__func__ is other
