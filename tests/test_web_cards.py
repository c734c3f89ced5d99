"""Cards in words for the dashboard (issue 20, item 1): every card's name and gist, step
buttons that name the card and what it does, and the one-tap "use it and say the marble drawn"."""

from __future__ import annotations

import random

from referee.gizmos import apply, chance_outcomes, legal_steps, new_game, resolve_chance
from referee.gizmos.steps import Step
from tests.web_testing import ApiClient
from web.cardtext import card_gist, card_name, card_title
from web.view import CARDS, step_groups, step_label, then_drawn, then_use


def test_every_card_has_a_name_and_a_gist() -> None:
    for card in CARDS:
        name, gist = card_name(card), card_gist(card)
        assert name and gist and "#" not in name + gist, card.id
        assert card_title(card) == f"{name} ({gist})"
    assert card_title(CARDS[4]) == "Red Converter (black → any)"
    assert card_title(CARDS[36]) == "Black Build gizmo (Build red: +1 VP)"
    assert card_title(CARDS[24]) == "Blue Pick gizmo (Pick red: draw 1)"
    assert card_title(CARDS[92]) == "Multicolour Upgrade (1 VP per Energy left)"
    assert card_title(CARDS[90]) == "Black Upgrade (no Research any more)"
    assert card_name(CARDS[0]) == "Starting gizmo"


def test_the_card_data_pages_get_carries_the_words(api: ApiClient) -> None:
    cards = api.get("/api/cards").get_json()
    assert len(cards) == 112
    assert cards[4]["name"] == "Red Converter" and cards[4]["gist"] == "black → any"
    assert cards[4]["text"] == CARDS[4].text


def test_step_labels_name_the_card_never_a_bare_number() -> None:
    """Every step kind over many random states: a label says the card's name and what it does."""
    rng = random.Random(5)
    seen: set[str] = set()
    for _ in range(6):
        state = resolve_chance(new_game(3), rng)
        for _ in range(400):
            if state.game_over:
                break
            steps = legal_steps(state)
            for s in steps:
                label = step_label(s)
                assert label and not label.startswith("#"), (s, label)
                card = s.card if s.kind != "use" else s.gizmo
                if card is not None:
                    assert card_title(CARDS[card]) in label, (s, label)
                seen.add(s.kind)
            state = apply(state, rng.choice(steps))  # random outcomes are steps too
    assert {"file", "build", "use", "bottom", "reveal", "pick", "research", "dispense"} <= seen


def test_a_gizmo_that_draws_a_marble_is_used_and_the_color_said_in_one_tap() -> None:
    rng = random.Random(2)
    state = resolve_chance(new_game(2), rng)
    file = next(s for s in legal_steps(state) if s.kind == "file")
    state = resolve_chance(apply(state, file), rng)  # the Display refilled
    use = next(s for s in legal_steps(state) if s.kind == "use")
    assert CARDS[use.gizmo or 0].effect.reward == "draw_random"
    then = then_drawn(state, use)
    assert then == [s.to_json() for s, _ in chance_outcomes(apply(state, use))]
    assert then and all(t["kind"] == "dispense" for t in then)
    item = next(i for g in step_groups(state, legal_steps(state), ["Ana", "Ben"]) for i in g["steps"])
    assert item["step"]["kind"] == "use" and item["then"] == then
    assert then_drawn(state, Step("end_turn", state.current)) is None


def test_a_file_from_a_research_hand_goes_on_to_its_file_gizmo_in_one_tap() -> None:
    """File, the other cards under the deck in the order drawn, the starting gizmo used, and
    the color it drew: the steps the page plays for one tap are exactly the engine's."""
    rng = random.Random(1)
    state = resolve_chance(new_game(2), rng)
    research = next(s for s in legal_steps(state) if s.kind == "research")
    state = resolve_chance(apply(state, research), random.Random(3))
    assert state.pending is not None and state.pending.kind == "research"
    file = next(s for s in legal_steps(state) if s.kind == "file")
    chain = then_use(state, file)
    assert chain is not None
    rest = [c for c in state.pending.hand if c != file.card]
    kinds = [(s["kind"], s.get("card", s.get("gizmo"))) for s in chain["steps"]]
    # the cards left go under in the order drawn (the engine places the last one itself)
    assert kinds[:-1] == [("bottom", c) for c in rest[: len(kinds) - 1]] and len(kinds) >= 2
    assert kinds[-1] == ("use", state.players[0].gizmos[0])
    after = apply(state, file)
    for raw in chain["steps"]:  # each is legal where the page plays it
        after = apply(after, next(s for s in legal_steps(after) if s.to_json() == raw))
    assert chain["then"] == [s.to_json() for s, _ in chance_outcomes(after)]
    assert then_use(state, research) is None  # not a File
    display = resolve_chance(new_game(2), random.Random(1))
    assert then_use(display, next(s for s in legal_steps(display) if s.kind == "file")) is None
