"""The whole Gizmos table as an immutable value, its derived per-player profile, and its JSON form.

Hidden order is never stored: a deck is a sequence of *segments*, each a set of candidate cards
and how many of them are really there. A freshly shuffled deck is one segment; the 20 Level III
cards removed at setup are simply the candidates never drawn. Cards a Research puts under a deck
become one-card segments at the bottom, in the order chosen. Random events (refills, draws) are
queued as *chance events* and resolved by a chance step, from a seeded random source or from
what the camera saw. So the engine works the same for simulation and for refereeing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from referee.gizmos.cards import COLOR_INDEX, COLORS, Card, default_cards
from referee.gizmos.errors import StateError

FORMAT = "gizmos-state"
VERSION = 1
MARBLES_PER_COLOR = 13
ROW_SIZE = 6
DISPLAY_SLOTS: tuple[int, int, int] = (4, 3, 2)  # Level I, II, III
BASE_ENERGY, BASE_FILE, BASE_RESEARCH = 5, 1, 3
END_GIZMOS, END_LEVEL3 = 16, 4
LEVEL3_IN_PLAY = 16  # ruling 3: 20 of the 36 Level III cards are removed at setup
MAX_PICKS = 2  # the most picks one gizmo grants ("take up to 2")
FREE_BUILD_LEVEL = 1  # ruling 17: the free Build takes a Level I gizmo
Counts = tuple[int, int, int, int]
EMPTY: Counts = (0, 0, 0, 0)

#: Chance events: ("display", level, slot) | ("research", level) | ("row",) | ("draw", seat)
ChanceEvent = tuple[Any, ...]
#: A deck segment: (candidate cards, how many of them are in the deck).
Segment = tuple[tuple[int, ...], int]


#: Players a game of Gizmos is for (the game interface's min_players and max_players).
MIN_PLAYERS = 2
MAX_PLAYERS = 4


@dataclass(frozen=True, slots=True)
class Converter:
    """A converter gizmo as the payment search needs it."""

    id: int
    double: bool  # True: convert_double; False: convert_to_any
    source: int  # convert_to_any: color converted from, -1 any
    uses: int  # convert_to_any: marbles per turn
    colors: tuple[int, ...]  # convert_double: colors doubled


@dataclass(frozen=True, slots=True)
class Profile:
    """What a player's built gizmos imply: limits, discounts, converters, triggers by column.

    Derived from the tuple of built gizmos (and cached), never stored, so it cannot drift.
    """

    energy_limit: int
    file_limit: int
    research: int
    forbid_file: bool
    forbid_research: bool
    discount_archive: int
    discount_research: int
    discount_level2: int
    converters: tuple[Converter, ...]
    file_gizmos: tuple[int, ...]
    pick_gizmos: tuple[int, ...]
    build_gizmos: tuple[int, ...]
    level3: int
    count: int


@lru_cache(maxsize=8192)
def profile_of(gizmos: tuple[int, ...]) -> Profile:
    """The profile of a tuple of built gizmo ids (pure; cached because it is asked for constantly)."""
    cards = default_cards()
    energy, file, research = BASE_ENERGY, BASE_FILE, BASE_RESEARCH
    forbid_file = forbid_research = False
    d_arch = d_res = d_l2 = 0
    converters: list[Converter] = []
    file_g: list[int] = []
    pick_g: list[int] = []
    build_g: list[int] = []
    level3 = 0
    for gid in gizmos:
        card = cards[gid]
        e = card.effect
        level3 += card.level == 3
        k = e.kind
        if k == "upgrade_limits":
            energy += e.energy
            file += e.file
            research += e.research
        elif k == "forbid_action":
            forbid_file |= e.action == "file"
            forbid_research |= e.action == "research"
        elif k == "discount":
            if e.applies_to == "from_archive":
                d_arch += e.amount
            elif e.applies_to == "from_research":
                d_res += e.amount
            else:
                d_l2 += e.amount
        elif k == "convert_to_any":
            converters.append(Converter(gid, False, e.source, e.uses, ()))
        elif k == "convert_double":
            converters.append(Converter(gid, True, -1, 1, e.colors))
        elif k == "on_file":
            file_g.append(gid)
        elif k == "on_pick":
            pick_g.append(gid)
        elif k in ("on_build", "on_build_from_archive", "on_build_level"):
            build_g.append(gid)
    return Profile(
        energy_limit=energy,
        file_limit=file,
        research=research,
        forbid_file=forbid_file,
        forbid_research=forbid_research,
        discount_archive=d_arch,
        discount_research=d_res,
        discount_level2=d_l2,
        converters=tuple(converters),
        file_gizmos=tuple(file_g),
        pick_gizmos=tuple(pick_g),
        build_gizmos=tuple(build_g),
        level3=level3,
        count=len(gizmos),
    )


@dataclass(frozen=True, slots=True)
class Player:
    """One player's area: ring (marbles by color), Archive, built gizmos (build order), VP tokens."""

    ring: Counts
    archive: tuple[int, ...]
    gizmos: tuple[int, ...]
    vp_tokens: int = 0

    @property
    def profile(self) -> Profile:
        """Limits, discounts, converters and triggers implied by the built gizmos."""
        return profile_of(self.gizmos)

    def columns(self) -> dict[str, list[int]]:
        """Built gizmos grouped by Dashboard column, in build order."""
        cards = default_cards()
        out: dict[str, list[int]] = {}
        for g in self.gizmos:
            out.setdefault(cards[g].type, []).append(g)
        return out


@dataclass(frozen=True, slots=True)
class Pending:
    """A choice the current player still owes before doing anything else.

    ``picks``: take up to ``count`` marbles from the Row (a Pick each) or skip the rest;
    ``file``: a granted File, or skip; ``research_offer``: a granted Research, or skip;
    ``free_build``: Build a Level ``level`` gizmo at no cost, or skip;
    ``research``: the Research ``hand`` drawn from deck ``level``: File one, Build one or skip,
    then (``chosen``) put the rest under the deck one ``bottom`` step at a time.
    """

    kind: str
    count: int = 0
    level: int = 0
    hand: tuple[int, ...] = ()
    chosen: bool = False


@dataclass(frozen=True, slots=True)
class State:
    """The whole table at one moment. Immutable: rules return new states."""

    players: tuple[Player, ...]
    dispenser: Counts
    row: Counts
    decks: tuple[tuple[Segment, ...], tuple[Segment, ...], tuple[Segment, ...]]
    display: tuple[tuple[int | None, ...], ...]
    box: tuple[int, ...] = ()
    current: int = 0
    turn: int = 0
    main_done: bool = False
    triggered: frozenset[int] = frozenset()
    used: frozenset[int] = frozenset()
    pending: Pending | None = None
    chance: tuple[ChanceEvent, ...] = ()
    end_triggered: bool = False
    game_over: bool = False

    @property
    def num_players(self) -> int:
        return len(self.players)

    @property
    def round(self) -> int:
        """1-based round number (every player has one turn per round)."""
        return self.turn // len(self.players) + 1

    def deck_size(self, level: int) -> int:
        """Cards really in a level deck (1..3)."""
        return sum(n for _, n in self.decks[level - 1])

    def to_json(self) -> dict[str, Any]:
        """The documented JSON form (docs/state.md)."""
        return state_to_json(self)

    def dumps(self) -> str:
        return json.dumps(state_to_json(self), separators=(",", ":"))


# --------------------------------------------------------------------------- setup


def new_game(players: int) -> State:
    """A fresh table before any random outcome: every deck shuffled (one segment per level), the
    dispenser full, and chance events queued to deal the Display (4/3/2) and fill the Energy Row.

    Level III holds all 36 candidates but only 16 cards (ruling 3): the 20 removed are simply
    never drawn. Resolve the chance events with a random source or with what the camera saw.
    """
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise StateError(f"players: Gizmos is for {MIN_PLAYERS}-{MAX_PLAYERS} players, got {players}")
    cards = default_cards()
    decks = tuple(
        (((tuple(c.id for c in cards if c.level == lvl)), 16 if lvl == 3 else 36),) for lvl in (1, 2, 3)
    )
    seats = tuple(Player(ring=EMPTY, archive=(), gizmos=(seat,)) for seat in range(players))
    box = tuple(range(players, 4))  # unused Starting Gizmos
    chance: list[ChanceEvent] = [
        ("display", lvl, s) for lvl in (1, 2, 3) for s in range(DISPLAY_SLOTS[lvl - 1])
    ]
    chance += [("row",)] * ROW_SIZE
    return State(
        players=seats,
        dispenser=(MARBLES_PER_COLOR,) * 4,
        row=EMPTY,
        decks=decks,  # type: ignore[arg-type]
        display=tuple((None,) * n for n in DISPLAY_SLOTS),
        box=box,
        chance=tuple(chance),
    )


# --------------------------------------------------------------------------- JSON


def _counts_json(c: Counts) -> dict[str, int]:
    return {COLORS[i]: c[i] for i in range(4)}


def _pending_json(p: Pending | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"kind": p.kind, "count": p.count, "level": p.level, "hand": list(p.hand), "chosen": p.chosen}


def state_to_json(s: State) -> dict[str, Any]:
    """Serialise a state (see docs/state.md for the schema)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "players": [
            {
                "ring": _counts_json(p.ring),
                "archive": list(p.archive),
                "gizmos": list(p.gizmos),
                "vp_tokens": p.vp_tokens,
            }
            for p in s.players
        ],
        "dispenser": _counts_json(s.dispenser),
        "row": _counts_json(s.row),
        "decks": {
            str(lvl + 1): [{"cards": list(cands), "count": n} for cands, n in segs]
            for lvl, segs in enumerate(s.decks)
        },
        "display": {str(lvl + 1): list(slots) for lvl, slots in enumerate(s.display)},
        "box": list(s.box),
        "current": s.current,
        "turn": s.turn,
        "main_done": s.main_done,
        "triggered": sorted(s.triggered),
        "used": sorted(s.used),
        "pending": _pending_json(s.pending),
        "chance": [list(e) for e in s.chance],
        "end_triggered": s.end_triggered,
        "game_over": s.game_over,
    }


def _need(raw: dict[str, Any], key: str, where: str) -> Any:
    if key not in raw:
        raise StateError(f"{where}: missing field '{key}'")
    return raw[key]


def _int(v: Any, where: str, lo: int = 0, hi: int = 10_000) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise StateError(f"{where}: expected an integer in {lo}..{hi}, got {v!r}")
    return v


def _bool(v: Any, where: str) -> bool:
    if not isinstance(v, bool):
        raise StateError(f"{where}: expected true or false, got {v!r}")
    return v


def _card_list(v: Any, where: str) -> tuple[int, ...]:
    if not isinstance(v, list):
        raise StateError(f"{where}: expected a list of card ids")
    return tuple(_card(c, f"{where}[{i}]") for i, c in enumerate(v))


def _card(v: Any, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 112:
        raise StateError(f"{where}: unknown card {v!r} (ids are 0..111)")
    return v


def _counts(v: Any, where: str) -> Counts:
    if not isinstance(v, dict) or set(v) != set(COLORS):
        raise StateError(f"{where}: expected counts for exactly {list(COLORS)}")
    return tuple(_int(v[c], f"{where}.{c}", 0, MARBLES_PER_COLOR) for c in COLORS)  # type: ignore[return-value]


def _chance_event(v: Any, where: str) -> ChanceEvent:
    ok = isinstance(v, list) and v and v[0] in ("display", "research", "row", "draw")
    if ok and v[0] == "display":
        ok = (
            len(v) == 3
            and v[1] in (1, 2, 3)
            and isinstance(v[2], int)
            and 0 <= v[2] < DISPLAY_SLOTS[v[1] - 1]
        )
    elif ok and v[0] in ("research", "draw"):
        ok = len(v) == 2 and isinstance(v[1], int) and not isinstance(v[1], bool) and 0 <= v[1] < 4
    elif ok:
        ok = len(v) == 1
    if not ok:
        raise StateError(f"{where}: not a chance event: {v!r}")
    return tuple(v)


def state_from_json(raw: Any) -> State:
    """Parse and validate a state; raises :class:`StateError` naming the bad field or impossibility."""
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise StateError(f'state: expected a JSON object with "format": "{FORMAT}"')
    if raw.get("version") != VERSION:
        raise StateError(f"state: unsupported version {raw.get('version')!r} (this engine reads {VERSION})")
    praw = _need(raw, "players", "state")
    if not isinstance(praw, list) or not MIN_PLAYERS <= len(praw) <= MAX_PLAYERS:
        raise StateError(f"state.players: expected a list of {MIN_PLAYERS}-{MAX_PLAYERS} players")
    players = []
    for i, p in enumerate(praw):
        w = f"players[{i}]"
        if not isinstance(p, dict):
            raise StateError(f"{w}: expected an object")
        players.append(
            Player(
                ring=_counts(_need(p, "ring", w), f"{w}.ring"),
                archive=_card_list(_need(p, "archive", w), f"{w}.archive"),
                gizmos=_card_list(_need(p, "gizmos", w), f"{w}.gizmos"),
                vp_tokens=_int(_need(p, "vp_tokens", w), f"{w}.vp_tokens"),
            )
        )
    decks_raw = _need(raw, "decks", "state")
    if not isinstance(decks_raw, dict) or set(decks_raw) != {"1", "2", "3"}:
        raise StateError('state.decks: expected decks "1", "2" and "3"')
    decks = []
    for lvl in ("1", "2", "3"):
        segs = []
        if not isinstance(decks_raw[lvl], list):
            raise StateError(f"decks.{lvl}: expected a list of segments")
        for j, seg in enumerate(decks_raw[lvl]):
            w = f"decks.{lvl}[{j}]"
            if not isinstance(seg, dict):
                raise StateError(f'{w}: expected {{"cards": [...], "count": n}}')
            cands = _card_list(_need(seg, "cards", w), f"{w}.cards")
            n = _int(_need(seg, "count", w), f"{w}.count", 1, len(cands) if cands else 0)
            segs.append((cands, n))
        decks.append(tuple(segs))
    disp_raw = _need(raw, "display", "state")
    if not isinstance(disp_raw, dict) or set(disp_raw) != {"1", "2", "3"}:
        raise StateError('state.display: expected rows "1", "2" and "3"')
    display = []
    for lvl, n in zip(("1", "2", "3"), DISPLAY_SLOTS, strict=True):
        row = disp_raw[lvl]
        if not isinstance(row, list) or len(row) != n:
            raise StateError(f"display.{lvl}: expected {n} slots")
        display.append(
            tuple(None if c is None else _card(c, f"display.{lvl}[{k}]") for k, c in enumerate(row))
        )
    pending = None
    praw_p = _need(raw, "pending", "state")
    if praw_p is not None:
        if not isinstance(praw_p, dict) or praw_p.get("kind") not in (
            "picks",
            "file",
            "research_offer",
            "free_build",
            "research",
        ):
            raise StateError("state.pending: expected null or a pending choice with a known kind")
        pending = Pending(
            kind=praw_p["kind"],
            count=_int(praw_p.get("count", 0), "pending.count", 0, 10),
            level=_int(praw_p.get("level", 0), "pending.level", 0, 3),
            hand=_card_list(praw_p.get("hand", []), "pending.hand"),
            chosen=_bool(praw_p.get("chosen", False), "pending.chosen"),
        )
    chance_raw = _need(raw, "chance", "state")
    if not isinstance(chance_raw, list):
        raise StateError("state.chance: expected a list of chance events")
    n = len(players)
    state = State(
        players=tuple(players),
        dispenser=_counts(_need(raw, "dispenser", "state"), "state.dispenser"),
        row=_counts(_need(raw, "row", "state"), "state.row"),
        decks=tuple(decks),  # type: ignore[arg-type]
        display=tuple(display),
        box=_card_list(_need(raw, "box", "state"), "state.box"),
        current=_int(_need(raw, "current", "state"), "state.current", 0, n - 1),
        turn=_int(_need(raw, "turn", "state"), "state.turn", 0, 1_000_000),
        main_done=_bool(_need(raw, "main_done", "state"), "state.main_done"),
        triggered=frozenset(_card_list(_need(raw, "triggered", "state"), "state.triggered")),
        used=frozenset(_card_list(_need(raw, "used", "state"), "state.used")),
        pending=pending,
        chance=tuple(_chance_event(e, f"chance[{i}]") for i, e in enumerate(chance_raw)),
        end_triggered=_bool(_need(raw, "end_triggered", "state"), "state.end_triggered"),
        game_over=_bool(_need(raw, "game_over", "state"), "state.game_over"),
    )
    check_invariants(state, limits=False)
    return state


def state_from_text(text: str) -> State:
    """Parse a JSON text; malformed JSON becomes a :class:`StateError`."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StateError(f"state: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise StateError("state: not valid JSON: nested too deeply") from exc
    return state_from_json(raw)


# --------------------------------------------------------------------------- invariants


def card_locations(s: State) -> dict[int, str]:
    """Where each card is; raises :class:`StateError` if a card is in two places or nowhere."""
    where: dict[int, str] = {}

    def put(cards: Iterable[int], place: str) -> None:
        for c in cards:
            if c in where:
                raise StateError(f"impossible state: card #{c} is both in {where[c]} and in {place}")
            where[c] = place

    for lvl, slots in enumerate(s.display):
        put((c for c in slots if c is not None), f"the Level {lvl + 1} Display")
    for i, p in enumerate(s.players):
        put(p.archive, f"seat {i}'s Archive")
        put(p.gizmos, f"seat {i}'s gizmos")
    for lvl, segs in enumerate(s.decks):
        for cands, _ in segs:
            put(cands, f"the Level {lvl + 1} deck")
    put(s.box, "the box")
    if s.pending is not None:
        put(s.pending.hand, "the Research hand")
    missing = sorted(set(range(112)) - set(where))
    if missing:
        raise StateError(f"impossible state: card(s) {missing[:5]} are nowhere")
    return where


def check_invariants(s: State, limits: bool = True) -> None:
    """Raise :class:`StateError` if the state is impossible: marbles, cards, levels, the box, an
    owed choice the rules cannot owe, queued chance events that do not fit the table (docs/state.md).
    With ``limits``, also what legal play keeps and a table replayed with broken rules may not:
    every ring and Archive within its limit, and 16 Level III cards in play (ruling 3)."""
    cards: tuple[Card, ...] = default_cards()
    for c in range(4):
        total = s.dispenser[c] + s.row[c] + sum(p.ring[c] for p in s.players)
        if total != MARBLES_PER_COLOR:
            raise StateError(f"impossible state: {total} {COLORS[c]} marbles are accounted for, not 13")
    if sum(s.row) > ROW_SIZE:
        raise StateError(f"impossible state: the Energy Row holds {sum(s.row)} marbles (at most 6)")
    where = card_locations(s)
    for lvl, segs in enumerate(s.decks):
        for cands, _ in segs:
            for c in cands:
                if cards[c].level != lvl + 1:
                    raise StateError(
                        f"impossible state: card #{c} (Level {cards[c].level}) in the Level {lvl + 1} deck"
                    )
    for lvl, slots in enumerate(s.display):
        for shown in slots:
            if shown is not None and cards[shown].level != lvl + 1:
                raise StateError(f"impossible state: card #{shown} in the Level {lvl + 1} Display row")
    for i, p in enumerate(s.players):
        if i not in p.gizmos:
            raise StateError(f"impossible state: seat {i} lacks Starting Gizmo #{i}")
        if any(cards[g].level == 0 and g != i for g in p.gizmos + p.archive):
            raise StateError(f"impossible state: seat {i} holds another seat's Starting Gizmo")
        prof = p.profile
        if not limits:
            continue
        if sum(p.ring) > prof.energy_limit:
            raise StateError(
                f"impossible state: seat {i}'s ring holds {sum(p.ring)} (limit {prof.energy_limit})"
            )
        if len(p.archive) > prof.file_limit:
            raise StateError(
                f"impossible state: seat {i}'s Archive holds {len(p.archive)} (limit {prof.file_limit})"
            )
    for g in s.triggered | s.used:
        if where.get(g) != f"seat {s.current}'s gizmos":
            raise StateError(
                f"impossible state: #{g} is marked used/triggered but is not the current player's gizmo"
            )
    for lvl in (1, 2):
        for cands, n in s.decks[lvl - 1]:
            if n != len(cands):
                raise StateError(
                    f"impossible state: the Level {lvl} deck lists {len(cands)} candidates for {n} cards; "
                    "only Level III is trimmed (ruling 3)"
                )
    for c in s.box:
        if cards[c].level not in (0, 3) or (cards[c].level == 0 and c < len(s.players)):
            raise StateError(
                f"impossible state: #{c} is in the box; only unused Starting Gizmos and "
                "the removed Level III cards are"
            )
    _check_pending(s)
    _check_chance(s)
    if limits:
        deck3 = s.decks[2]
        in_deck = {c for cands, _ in deck3 for c in cands}
        in_play = sum(n for _, n in deck3) + sum(
            1 for c, place in where.items() if cards[c].level == 3 and c not in in_deck and place != "the box"
        )
        if in_play != LEVEL3_IN_PLAY:
            raise StateError(
                f"impossible state: {in_play} Level III cards are in play, not {LEVEL3_IN_PLAY} (ruling 3)"
            )


def _check_pending(s: State) -> None:
    """An owed choice must be one the rules can owe (what legal play leaves in ``pending``)."""
    p = s.pending
    if p is None:
        return
    cards = default_cards()
    if p.kind != "research" and p.hand:
        raise StateError(f"impossible state: a pending '{p.kind}' cannot hold a Research hand")
    if p.kind == "picks" and not 1 <= p.count <= MAX_PICKS:
        raise StateError(f"impossible state: pending picks count {p.count} (a gizmo grants 1 or {MAX_PICKS})")
    if p.kind == "free_build" and p.level != FREE_BUILD_LEVEL:
        raise StateError(f"impossible state: a free Build of Level {p.level} (only Level I is granted)")
    prof = s.players[s.current].profile
    if (p.kind == "file" and prof.forbid_file) or (
        p.kind in ("research_offer", "research") and not p.chosen and prof.forbid_research
    ):
        action = "File" if p.kind == "file" else "Research"
        raise StateError(
            f"impossible state: seat {s.current} is owed a {action} but has built an upgrade that "
            f"forbids {action} (ruling 23), so legal play cannot reach this choice"
        )
    if p.kind == "research":
        if p.level not in (1, 2, 3):
            raise StateError(f"impossible state: a Research hand from deck level {p.level}")
        for c in p.hand:
            if cards[c].level != p.level:
                raise StateError(f"impossible state: #{c} in a Level {p.level} Research hand")
        if p.chosen and len(p.hand) < 2:
            raise StateError("impossible state: a Research hand left to order holds fewer than 2 cards")


def event_void(
    e: ChanceEvent,
    decks: Sequence[tuple[Segment, ...]],
    dispenser: Sequence[int],
    row: Sequence[int],
    players: Sequence[Player],
) -> bool:
    """Whether a chance event cannot happen and is dropped: an empty deck or dispenser, a draw
    into a full ring, a Row already full (ruling 12: what does not fit is lost)."""
    if e[0] in ("display", "research"):
        return not decks[e[1] - 1]
    if not any(dispenser):
        return True
    if e[0] == "draw":
        p = players[e[1]]
        return sum(p.ring) >= p.profile.energy_limit
    return sum(row) >= ROW_SIZE


def _check_chance(s: State) -> None:
    """Queued random events must fit the table, or resolving them would corrupt it."""
    waiting: set[tuple[int, int]] = set()
    p = s.pending
    for i, e in enumerate(s.chance):
        where = f"impossible state: chance[{i}] {list(e)}"
        if e[0] == "display":
            card = s.display[e[1] - 1][e[2]]
            if card is not None:
                raise StateError(f"{where}: that Display slot already holds #{card}")
            if (e[1], e[2]) in waiting:
                raise StateError(f"{where}: that Display slot is already awaiting a card")
            waiting.add((e[1], e[2]))
        elif e[0] == "draw" and e[1] >= len(s.players):
            raise StateError(f"{where}: there is no seat {e[1]}")
        elif e[0] == "research" and (p is None or p.kind != "research" or p.chosen or p.level != e[1]):
            raise StateError(f"{where}: no Level {e[1]} Research is drawing cards")
    if s.chance and event_void(s.chance[0], s.decks, s.dispenser, s.row, s.players):
        raise StateError(
            f"impossible state: chance[0] {list(s.chance[0])} cannot happen now (nothing to draw, "
            "or no room for it)"
        )


def color_index(name: str) -> int:
    """Index of a color name (raises KeyError for unknown names)."""
    return COLOR_INDEX[name]
