"""A card in a few words, for buttons and captions: "Red Converter (black → any)".

Cards in Gizmos have no printed names; players call them by color and kind and by what they
do. The dashboard does the same, from the engine's card data (``referee.gizmos.cards``), so a
step button says what the card does instead of ``#12``. The whole effect in words is the
card's ``text``; these are its short forms.
"""

from __future__ import annotations

from referee.gizmos import COLORS, Card

ROMAN = {0: "0", 1: "I", 2: "II", 3: "III"}
TYPE_NAMES = {
    "file": "File gizmo",
    "pick": "Pick gizmo",
    "build": "Build gizmo",
    "converter": "Converter",
    "upgrade": "Upgrade",
}
REWARDS = {
    "draw_random": "draw {n}",
    "pick_row": "take {n} from the Row",
    "vp_tokens": "+{n} VP",
    "file_action": "File too",
    "research_action": "Research too",
    "build_free": "free Level {level} Build",
}
DISCOUNTS = {
    "from_archive": "Archive",
    "from_research": "Research",
    "level2": "Level II",
}


def _color_names(colors: tuple[int, ...]) -> str:
    return "/".join(COLORS[c] for c in colors)


def card_name(card: Card) -> str:
    """Color and kind: "Red Converter"; the four starting gizmos are "Starting gizmo"."""
    if card.level == 0:
        return "Starting gizmo"
    color = "Multicolour" if card.color == "any" else card.color.capitalize()
    return f"{color} {TYPE_NAMES.get(card.type, card.type)}"


def card_gist(card: Card) -> str:
    """What the card does, in a few words: "black → any", "Pick red: draw 1"."""
    e = card.effect
    k = e.kind
    reward = REWARDS.get(e.reward, e.reward).format(n=e.count, level=ROMAN.get(e.level, e.level))
    if k == "on_file":
        return f"File: {reward}"
    if k == "on_pick":
        return f"Pick {_color_names(e.colors)}: {reward}"
    if k == "on_build":
        return f"Build {_color_names(e.colors)}: {reward}"
    if k == "on_build_from_archive":
        return f"Build from Archive: {reward}"
    if k == "on_build_level":
        return f"Build Level {ROMAN.get(e.level, e.level)}: {reward}"
    if k == "convert_to_any":
        source = COLORS[e.source] if e.source >= 0 else "any"
        return f"{source} → any" + (f", {e.uses}× a turn" if e.uses > 1 else "")
    if k == "convert_double":
        return f"{_color_names(e.colors)} counts double"
    if k == "upgrade_limits":
        parts = [(e.energy, "storage"), (e.file, "File"), (e.research, "Research")]
        return ", ".join(f"+{n} {what}" for n, what in parts if n)
    if k == "discount":
        return f"{DISCOUNTS.get(e.applies_to, e.applies_to)} Builds cost {e.amount} less"
    if k == "forbid_action":
        return f"no {e.action.capitalize()} any more"
    if k == "end_vp":
        return "1 VP per Energy left" if e.per == "energy_in_ring" else "VP = your VP tokens"
    return card.text.split(".")[0]


def card_title(card: Card) -> str:
    """The name and the gist: "Red Converter (black → any)"."""
    return f"{card_name(card)} ({card_gist(card)})"
