"""The event hub (voxcap/eventhub.py) that hands the controller's events to every output: each
output has its own queue with every event in order, one that is never read holds nobody up, one
that fails leaves the others their events, the states it keeps reach a late subscriber first and
in order with what follows, and an output that unsubscribes gets nothing more."""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass

from voxcap.eventhub import EventHub


@dataclass(frozen=True)
class State:  # announced once, as CaptioningState is
    n: int


@dataclass(frozen=True)
class Mode:
    name: str


@dataclass(frozen=True, order=True)
class Text:  # one of many, as TextDelta is
    n: int


def drain(q: queue.Queue) -> list:
    out = []
    while True:
        try:
            out.append(q.get_nowait())
        except queue.Empty:
            return out


def test_each_output_has_its_own_queue_with_every_event_in_order():
    hub = EventHub()
    first, second = hub.subscribe(), hub.subscribe()
    assert first is not second
    events = [Text(i) for i in range(50)]
    for event in events[:20]:
        hub.publish(event)
    assert drain(first) == events[:20]  # reading one queue takes nothing from the other
    for event in events[20:]:
        hub.publish(event)
    assert drain(first) == events[20:]
    assert drain(second) == events


def test_a_callback_gets_every_event_on_the_publishing_thread():
    hub = EventHub()
    seen = []
    assert hub.subscribe(lambda e: seen.append((e, threading.current_thread().name))) is None
    publisher = threading.Thread(target=lambda: [hub.publish(Text(i)) for i in range(3)],
                                 name="engine-thread")
    publisher.start()
    publisher.join(5)
    assert seen == [(Text(i), "engine-thread") for i in range(3)]


def test_an_output_never_read_holds_up_neither_the_publisher_nor_the_others():
    hub = EventHub()
    never_read = hub.subscribe()
    reader = hub.subscribe()
    got = []
    consumer = threading.Thread(target=lambda: [got.append(reader.get(timeout=5))
                                                for _ in range(20_000)])
    consumer.start()
    publisher = threading.Thread(target=lambda: [hub.publish(Text(i)) for i in range(20_000)])
    start = time.monotonic()
    publisher.start()
    publisher.join(10)
    assert not publisher.is_alive(), "publish blocked on a queue nobody reads"
    consumer.join(10)
    assert got == [Text(i) for i in range(20_000)]
    assert never_read.qsize() == 20_000
    assert time.monotonic() - start < 10


def test_a_failing_output_leaves_the_others_every_event():
    hub = EventHub()
    before = hub.subscribe()
    hub.subscribe(lambda e: 1 / 0)
    after = hub.subscribe()
    for i in range(3):
        hub.publish(Text(i))
    assert drain(before) == drain(after) == [Text(0), Text(1), Text(2)]


def test_a_late_output_gets_the_latest_kept_state_of_each_type_first():
    hub = EventHub(keep_latest=(State, Mode))
    early = hub.subscribe()
    for event in (State(1), Text(1), Mode("a"), State(2), Text(2), Mode("b")):
        hub.publish(event)
    late = hub.subscribe()
    hub.publish(Text(3))
    got = drain(late)
    # the latest of each kept type (not State(1) nor Mode("a")), none of the passing events
    assert sorted(got[:2], key=repr) == [Mode("b"), State(2)] and got[2:] == [Text(3)]
    assert len(drain(early)) == 7  # the early output got each once, nothing replayed


def test_a_late_callback_gets_the_kept_state_too_and_nothing_is_kept_unless_asked():
    kept, plain = EventHub(keep_latest=(State,)), EventHub()
    for hub in (kept, plain):
        hub.publish(State(7))
    seen_kept, seen_plain = [], []
    kept.subscribe(seen_kept.append)
    plain.subscribe(seen_plain.append)
    assert seen_kept == [State(7)] and seen_plain == []


def test_a_state_published_while_an_output_subscribes_never_overtakes_the_kept_one():
    """subscribe hands over the kept state under the hub's lock: a state the engine publishes
    meanwhile waits, so the new output never sees an older state after a newer one."""
    hub = EventHub(keep_latest=(State,))
    hub.publish(State(1))
    handing_over = threading.Event()
    seen = []

    def slow_output(event):
        if not handing_over.is_set():  # the kept state: slow to take it
            handing_over.set()
            time.sleep(0.3)
        seen.append(event)

    publisher = threading.Thread(target=lambda: handing_over.wait(5) and hub.publish(State(2)))
    publisher.start()
    hub.subscribe(slow_output)
    publisher.join(5)
    assert seen == [State(1), State(2)]


def test_events_from_several_threads_reach_every_output_once():
    hub = EventHub()
    outputs = [hub.subscribe() for _ in range(3)]
    threads = [threading.Thread(target=lambda t=t: [hub.publish(Text(t * 1000 + i))
                                                    for i in range(500)]) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    expected = sorted(Text(t * 1000 + i) for t in range(4) for i in range(500))
    for q in outputs:
        got = drain(q)
        assert sorted(got) == expected
        for t in range(4):  # each thread's own events keep their order
            mine = [e.n for e in got if e.n // 1000 == t]
            assert mine == sorted(mine)


def test_an_output_that_unsubscribes_gets_nothing_more():
    hub = EventHub(keep_latest=(State,))
    q = hub.subscribe()
    seen = []
    hub.subscribe(seen.append)
    hub.publish(State(1))
    hub.unsubscribe(q)
    hub.unsubscribe(seen.append)
    hub.publish(State(2))
    assert drain(q) == [State(1)] and seen == [State(1)]
    hub.unsubscribe(q)  # twice, or never subscribed: nothing to do
    hub.unsubscribe(queue.Queue())
    stays = hub.subscribe()
    hub.publish(Text(1))
    assert drain(stays) == [State(2), Text(1)]
