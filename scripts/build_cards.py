"""Build the project's own card file from the shared, checked reference.

Run once when the reference changes: ``python scripts/build_cards.py [REFERENCE]``.
The output is validated by the same loader the engine uses, so a bad reference fails here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REFERENCE = ROOT.parent / "shared" / "reference" / "gizmos_cards.json"
OUTPUT = ROOT / "referee" / "gizmos" / "data" / "cards.json"


def main(argv: list[str]) -> int:
    reference = Path(argv[1]) if len(argv) > 1 else DEFAULT_REFERENCE
    cards = json.loads(reference.read_text(encoding="utf-8"))
    out = {
        "format": "gizmos-cards",
        "version": 1,
        "source": "shared/reference/gizmos_cards.json",
        "cards": [
            {k: card[k] for k in ("id", "level", "type", "color", "cost", "vp", "effect", "text")}
            for card in sorted(cards, key=lambda c: c["id"])
        ],
    }
    text = json.dumps(out, indent=1, ensure_ascii=False) + "\n"
    sys.path.insert(0, str(ROOT))
    from referee.gizmos.cards import parse_cards

    parse_cards(json.loads(text))  # raises CardDataError naming the card and field
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({len(out['cards'])} cards)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
