"""Noise never becomes a rule break: a single misread frame is ignored, low confidence is
unknown, and a persistent disagreement that could be a misreading is *uncertain*."""

from __future__ import annotations

import dataclasses
import random

from referee.gizmos import Step, default_cards
from referee.observation import MarbleSighting, Observation
from referee.simulation.synthetic import Camera, Feeder, Noise, perfect_observation, simulated_game, tables_of
from referee.tracker import Tracker, swap_cards
from referee.tracker.verdicts import RefereeWarning
from referee.tracker.view import Stabilizer, view_of, view_of_observation
from tests.tables import table
from tests.test_tracker import referee, warnings_of

R, B = 0, 1
CARDS = default_cards()


def _with_ring(obs: Observation, seat: int, ring: tuple[MarbleSighting, ...]) -> Observation:
    players = tuple(dataclasses.replace(p, ring=ring) if p.seat == seat else p for p in obs.players)
    return dataclasses.replace(obs, players=players)


def _with_vp(obs: Observation, seat: int, points: int, confidence: float) -> Observation:
    players = tuple(
        dataclasses.replace(p, vp_tokens=(points, confidence)) if p.seat == seat else p for p in obs.players
    )
    return dataclasses.replace(obs, players=players)


def test_single_misread_frame_never_warns() -> None:
    feeder = referee(table(rings={0: (1, 0, 0, 0)}))
    t = feeder.tracker
    for frame in range(12):
        obs = perfect_observation(feeder.state, 10.0 + frame)
        if frame in (2, 7):  # one frame reads the red marble as blue, sure of itself
            obs = _with_ring(obs, 0, (MarbleSighting("blue", 0.99),))
        if frame == 5:  # one frame sees a sixth marble in the Row
            obs = dataclasses.replace(obs, energy_row=(*(obs.energy_row or ()), MarbleSighting("red", 0.99)))
        t.observe(obs)
    assert t.warnings == [] and t.log == []


def test_low_confidence_items_are_unknown() -> None:
    state = table(rings={0: (1, 0, 0, 0)})
    obs = _with_ring(
        perfect_observation(state), 0, (MarbleSighting("red", 0.99), MarbleSighting("blue", 0.4))
    )
    view = view_of_observation(obs, 2)
    assert view.seats[0].ring is None and view.seats[1].ring == (0, 0, 0, 0)
    feeder = referee(state)
    for frame in range(15):  # seven marbles in a ring of five, but read at 0.5: not seen at all
        low = tuple(MarbleSighting("red", 0.5) for _ in range(7))
        feeder.tracker.observe(_with_ring(perfect_observation(state, 20.0 + frame), 0, low))
    assert feeder.tracker.warnings == []


def test_stable_view_holds_zone_by_zone() -> None:
    state = table()
    stab = Stabilizer(2, frames=3)
    for i in range(3):
        stab.push(perfect_observation(state, i))
    covered = dataclasses.replace(perfect_observation(state, 4), energy_row=None)
    view = stab.push(covered)
    assert view.row is None and view.seats[0].ring == (0, 0, 0, 0) and len(view.display) == 9


def test_persistent_reading_that_could_be_a_misreading_is_uncertain_not_illegal() -> None:
    # Ana builds a blue card: #36 (VP for a red Build) is not triggered. The camera persistently
    # reads a VP token in front of her, but only with confidence 0.7.
    feeder, w = _doubtful_token_turn()
    assert warnings_of(feeder) == []
    assert "low confidence" in w.message and "Ana's VP tokens" in w.message and w.code is None
    assert feeder.tracker.state.players[0].vp_tokens == 0  # nothing was accepted on a doubtful reading


def test_same_reading_read_with_confidence_is_a_rule_break() -> None:
    start = table(gizmos={0: [36]}, rings={0: (0, 1, 0, 0)}, display=[14])
    feeder = referee(start)
    feeder.play(Step("build", 0, card=14, pay=(0, 1, 0, 0), converters=()), frames=4)
    t = feeder.tracker
    for frame in range(10):
        t.observe(_with_vp(perfect_observation(feeder.state, 30.0 + frame), 0, 1, 0.95))
    feeder.end_turn()
    [w] = warnings_of(feeder)
    assert (w.code, w.player) == ("NOT_TRIGGERED", 0)


def test_card_appearing_from_nowhere_is_uncertain_a_misread_id() -> None:
    # Ana builds #12 from the Display, but the camera reads it, sure of itself, as #30 (a card
    # still in the deck): a misread id is likelier than a card taken from the deck.
    start = table(rings={0: (1, 0, 0, 0)}, display=[12])
    feeder = referee(start)
    refill = Step("reveal", card=start.decks[0][0][0][0])
    [built] = tables_of(
        start, [Step("build", 0, card=12, pay=(1, 0, 0, 0), converters=()), refill], random.Random(0)
    )[-1:]
    feeder.show(swap_cards(built, 12, 30), frames=10)
    feeder.end_turn()
    assert warnings_of(feeder) == []
    [w] = warnings_of(feeder, "uncertain")
    assert "#30 not in view before: a misread card?" in w.message


def test_card_built_from_a_deck_while_the_display_stays_is_uncertain() -> None:
    # A red card appears in Ana's gizmos straight from the deck. She may not Research (#90), so
    # it was not drawn by a Research: taken from the deck against the rules, or misread?
    start = table(gizmos={0: [90]}, rings={0: (1, 0, 0, 0)})
    feeder = referee(start)
    card = next(c for c in start.decks[0][0][0] if CARDS[c].color == "red" and CARDS[c].cost == 1)
    feeder.play(Step("build", 0, card=card, pay=(1, 0, 0, 0), converters=()), frames=8)
    feeder.end_turn()
    assert warnings_of(feeder) == []
    [w] = warnings_of(feeder, "uncertain")
    assert f"#{card} appeared although no such card was in view" in w.message


def test_noisy_legal_game_gives_no_warning_and_keeps_up() -> None:
    noise = Noise(missing=0.08, dip=0.1, hand=0.06, hand_frames=4, misread=0.1)
    scripts = list(simulated_game(3, seed=5, max_turns=24))
    tracker = Tracker.create(":memory:", ["Ana", "Ben", "Cy"])
    feeder = Feeder(tracker, Camera(noise, seed=5))
    for script in scripts:
        feeder.turn(script)
    feeder.camera.noise = Noise()
    feeder.show(scripts[-1].final, frames=6)
    assert tracker.warnings == []
    assert view_of(tracker.state).key()[:3] == view_of(scripts[-1].final).key()[:3]
    assert tracker.state.turn == scripts[-1].final.turn


def _doubtful_token_turn() -> tuple[Feeder, RefereeWarning]:
    """Ana builds a blue card (no VP for it) and a VP token is read in front of her at 0.7: the
    turn ends on an uncertain warning."""
    start = table(gizmos={0: [36]}, rings={0: (0, 1, 0, 0)}, display=[14])
    feeder = referee(start)
    feeder.play(Step("build", 0, card=14, pay=(0, 1, 0, 0), converters=()), frames=4)
    for frame in range(10):
        feeder.tracker.observe(_with_vp(perfect_observation(feeder.state, 30.0 + frame), 0, 1, 0.7))
    feeder.end_turn()
    [w] = warnings_of(feeder, "uncertain")
    return feeder, w


def test_confirming_an_uncertain_reading_adopts_it_and_warns_about_the_rule_it_breaks() -> None:
    feeder, w = _doubtful_token_turn()
    t = feeder.tracker
    assert t.state.players[0].vp_tokens == 0 and t.state.current == 0
    t.decide(w.id, "accepted", "Ben")
    [broken] = warnings_of(feeder)
    assert (broken.code, broken.player) == ("NOT_TRIGGERED", 0)
    assert any("Ben confirmed the reading of warning" in n for n in t.notes)
    # The end of turn signalled while the question waited is settled on the confirmed table.
    assert t.state.players[0].vp_tokens == 1 and t.state.current == 1
    for frame in range(6):  # and the table as it stands raises nothing more
        t.observe(_with_vp(perfect_observation(feeder.state, 50.0 + frame), 0, 1, 0.7))
    assert t.state.current == 1 and [x.id for x in t.warnings] == [w.id, broken.id]
    again = Tracker.from_export(t.record.export())  # the adoption is in the record: it replays
    assert again.state == t.state and [x.code for x in again.warnings] == [x.code for x in t.warnings]


def test_dismissing_an_uncertain_reading_adopts_nothing() -> None:
    feeder, w = _doubtful_token_turn()
    before = feeder.tracker.state
    feeder.tracker.decide(w.id, "dismissed", "Ben")
    assert feeder.tracker.state == before and warnings_of(feeder) == []


def test_a_doubtful_reading_is_asked_about_at_the_end_of_the_turn() -> None:
    # Until the turn ends the camera may still read the token surely (then the break is warned
    # as usual): one question, at the end of the turn, not one per doubtful moment.
    start = table(gizmos={0: [36]}, rings={0: (0, 1, 0, 0)}, display=[14])
    feeder = referee(start)
    feeder.play(Step("build", 0, card=14, pay=(0, 1, 0, 0), converters=()), frames=4)
    for frame in range(10):
        feeder.tracker.observe(_with_vp(perfect_observation(feeder.state, 30.0 + frame), 0, 1, 0.7))
    assert feeder.tracker.warnings == []
    feeder.end_turn()
    assert [w.kind for w in feeder.tracker.warnings] == ["uncertain"]


def test_a_doubt_the_camera_later_reads_surely_becomes_the_rule_break_alone() -> None:
    # Ana takes two marbles (a second main action). At first her ring and the Row read at 0.7: the
    # break could be a misreading; a few frames later it reads surely: one warning, no question.
    start = table(rings={0: (0, 0, 0, 0)})
    feeder = referee(start)
    [after] = tables_of(start, [Step("pick", 0, color=R), Step("pick", 0, color=B)], random.Random(0))[-1:]
    t = feeder.tracker
    for frame in range(8):
        obs = perfect_observation(after, 40.0 + frame)
        ring = tuple(MarbleSighting(m.color, 0.7) for m in next(p for p in obs.players if p.seat == 0).ring)
        row = tuple(MarbleSighting(m.color, 0.7) for m in obs.energy_row or ())
        t.observe(dataclasses.replace(_with_ring(obs, 0, ring), energy_row=row))
    assert t.warnings == []  # doubtful, and the turn is not over: wait
    feeder.show(after, frames=8)
    assert [(w.kind, w.code) for w in t.warnings] == [("violation", "SECOND_MAIN_ACTION")]
