"""The hub's store: one suite, run against SQLite and against a real PostgreSQL server
(``store_at`` in tests/conftest.py gives each test a SQLite file, then a fresh PostgreSQL
database started by the test fixture)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.postgres_server import PostgresServer
from web.tournament.store import (
    EntryMessage,
    PostgresStore,
    SqliteStore,
    StoreError,
    TournamentStore,
    open_store,
)

#: A Unix time with microseconds: PostgreSQL's 4-byte REAL would round it to ~100 s.
AT = 1795465639.123456


def entry(table: str, game: str, seq: int, prev: int | None = None, **payload: Any) -> EntryMessage:
    return EntryMessage(
        table, game, seq, seq - 1 if prev is None else prev, AT, "step", "referee", payload, AT + 0.5
    )


@pytest.fixture
def store(store_at: str) -> Iterator[TournamentStore]:
    s = open_store(store_at)
    yield s
    s.close()


def test_open_store_picks_the_database_from_the_url(store: TournamentStore, store_at: str) -> None:
    expected = PostgresStore if store_at.startswith("postgresql://") else SqliteStore
    assert isinstance(store, expected)


def test_each_entry_is_kept_once_and_confirmed_only_without_holes(store: TournamentStore) -> None:
    assert store.add([entry("t1", "g", 1), entry("t1", "g", 2), entry("t1", "g", 4)]) == {("t1", "g"): 2}
    assert store.add([entry("t1", "g", 2), entry("t1", "g", 1)]) == {("t1", "g"): 2}  # republished
    assert store.add([entry("t1", "g", 3)]) == {("t1", "g"): 4}  # the hole filled
    assert [seq for seq, _, _ in store.entries("t1", "g")] == [1, 2, 3, 4]
    # A record whose numbers skip (prev says so) is complete all the same.
    assert store.add([entry("t2", "g", 1), entry("t2", "g", 5, prev=1)]) == {("t2", "g"): 5}
    assert store.confirmed() == {("t1", "g"): 4, ("t2", "g"): 5}
    assert store.entries("t9", "g") == []


def test_payloads_round_trip(store: TournamentStore) -> None:
    payload = {"text": "Chloé's Ω gizmo \u0000 ✓", "nested": {"list": [1, 2.5, None, True]}, "n": 2**40}
    store.add([entry("t1", "g", 1, **payload)])
    assert store.entries("t1", "g") == [(1, "step", payload)]


def test_summaries_keep_the_latest_and_games_list_oldest_first(store: TournamentStore) -> None:
    store.put_summaries([("t2", "a", {"game": "a", "round": 1}), ("t1", "b", {"game": "b"})], AT)
    store.put_summaries([("t2", "a", {"game": "a", "round": 2})], AT + 1)
    store.add([entry("t3", "c", 1)])  # a game with entries but no summary yet
    games = store.games()
    assert [(g["table"], g["game"]) for g in games] == [("t3", "c"), ("t1", "b"), ("t2", "a")]
    a = games[-1]
    assert a["summary"] == {"game": "a", "round": 2} and a["updated"] == AT + 1  # to the microsecond
    assert games[0]["summary"] is None and games[0]["confirmed"] == 1
    assert not any(g["excluded"] for g in games)
    store.put_summaries([], AT + 2)  # nothing to store is no error


def test_a_game_can_be_left_out_of_the_standings_and_put_back(store: TournamentStore) -> None:
    store.put_summaries([("t1", "g", {"game": "g"})], AT)
    assert store.set_excluded("t1", "g", True)
    assert store.games()[0]["excluded"] is True
    assert store.set_excluded("t1", "g", False)
    assert store.games()[0]["excluded"] is False
    assert not store.set_excluded("t1", "nope", True)


def test_nothing_is_lost_across_a_hub_restart(store_at: str) -> None:
    first = open_store(store_at)
    first.add([entry("t1", "g", s) for s in (1, 2, 3, 5)])
    first.put_summaries([("t1", "g", {"game": "g", "seq": 5})], AT)
    first.set_excluded("t1", "g", True)
    held = (first.confirmed(), first.entries("t1", "g"), first.games())
    first.close()
    again = open_store(store_at)  # the hub started again on the same store
    try:
        assert (again.confirmed(), again.entries("t1", "g"), again.games()) == held
        assert held[0] == {("t1", "g"): 3}
        # The table republishes from 4 (the confirmed number plus one): stored once, hole filled.
        assert again.add([entry("t1", "g", 4), entry("t1", "g", 5)]) == {("t1", "g"): 5}
        assert [seq for seq, _, _ in again.entries("t1", "g")] == [1, 2, 3, 4, 5]
    finally:
        again.close()


def test_two_hubs_storing_the_same_entries_at_once_keep_each_once(store_at: str) -> None:
    """Two stores on one database (two hub processes sharing a PostgreSQL, or two connections to
    one SQLite file) store at the same time: first each half of the record in turn (the one's
    entries fill the other's holes), then the whole record again, shuffled (republished). Every
    entry is kept once, and the confirmed number only goes forward, to the end."""
    hubs = [open_store(store_at), open_store(store_at)]
    n = 300
    failures: list[BaseException] = []

    def publish(store: TournamentStore, half: int) -> None:
        rng = random.Random(half)
        again = list(range(1, n + 1))
        rng.shuffle(again)
        try:
            for seqs, size in ([s for s in range(1, n + 1) if s % 2 == half], 5), (again, 25):
                for i in range(0, len(seqs), size):
                    for game in ("g1", "g2"):
                        store.add([entry("t1", game, s) for s in seqs[i : i + size]])
        except BaseException as exc:
            failures.append(exc)

    seen: list[dict[tuple[str, str], int]] = []
    watcher = open_store(store_at)  # the organiser's page reading the same store meanwhile
    threads = [threading.Thread(target=publish, args=(h, i)) for i, h in enumerate(hubs)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        seen.append(watcher.confirmed())
    for t in threads:
        t.join(timeout=120)
    watcher.close()
    try:
        assert not failures, failures
        # A confirmed number never goes back (each hub advances it under the game's lock).
        for game in ("g1", "g2"):
            numbers = [c.get(("t1", game), 0) for c in seen]
            assert numbers == sorted(numbers), f"{game}'s confirmed number went back"
        for game in ("g1", "g2"):
            assert [seq for seq, _, _ in hubs[0].entries("t1", game)] == list(range(1, n + 1))
        assert hubs[0].confirmed() == hubs[1].confirmed() == {("t1", "g1"): n, ("t1", "g2"): n}
    finally:
        for h in hubs:
            h.close()


def test_a_sqlite_file_that_is_not_a_store_is_one_error(tmp_path: Any) -> None:
    bad = tmp_path / "not.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a usable hub store"):
        open_store(str(bad))


def test_an_unreachable_postgresql_is_one_error_without_its_password(tmp_path: Any) -> None:
    pytest.importorskip("psycopg", reason="psycopg is not installed (scripts/setup.sh --dev)")
    url = f"postgresql://hub:s3cret@/night?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StoreError) as err:
        open_store(url)
    message = str(err.value)
    assert "\n" not in message and "s3cret" not in message
    assert message.startswith(f"postgresql://hub@{tmp_path}/night: ") and "connection" in message
    with pytest.raises(StoreError, match="not a usable postgresql:// URL"):
        open_store("postgresql://hub:s3cret@[bad")


def test_the_postgresql_store_survives_a_server_restart(postgres: PostgresServer) -> None:
    """The database server restarts under a running hub: its connection is opened again and the
    next batch is stored (every method is one transaction, so a retry doubles nothing)."""
    url = postgres.create_database()
    store = open_store(url)
    try:
        store.add([entry("t1", "g", 1), entry("t1", "g", 2)])
        postgres.restart()
        assert store.add([entry("t1", "g", 2), entry("t1", "g", 3)]) == {("t1", "g"): 3}
        assert [seq for seq, _, _ in store.entries("t1", "g")] == [1, 2, 3]
    finally:
        store.close()
        postgres.drop_database(url)


def test_a_hub_waits_for_anothers_open_batch_before_confirming(store_at: str) -> None:
    """Hub A's batch (3, after a hole at 2) is stored but not yet committed when hub B stores the
    missing 2: B waits for A (PostgreSQL: the game's row lock; SQLite: the write lock), then
    confirms through 3. A B that did not wait would not see 3 and confirm only 2, and 3 would wait
    unconfirmed for the game's next entry."""
    first, second = open_store(store_at), open_store(store_at)
    first.add([entry("t1", "g", 1)])  # the game is known (its row committed)
    inside = threading.Event()
    run = first._run  # type: ignore[attr-defined]

    def held_open(work: Any, write: bool = True) -> Any:
        def slow(cur: Any) -> Any:
            result = work(cur)
            inside.set()
            time.sleep(0.5)  # A's transaction stays open: B must wait for its commit
            return result

        return run(slow, write)

    first._run = held_open  # type: ignore[attr-defined]
    thread = threading.Thread(target=first.add, args=([entry("t1", "g", 3)],))
    thread.start()
    try:
        assert inside.wait(10)
        assert second.add([entry("t1", "g", 2)]) == {("t1", "g"): 3}
        thread.join(10)
        assert second.confirmed() == {("t1", "g"): 3}
    finally:
        thread.join(10)
        first.close()
        second.close()
