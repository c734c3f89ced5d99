"""Build the project's own card file from the shared, checked reference.

Run once when the reference changes: ``python scripts/build_cards.py [REFERENCE] [--out PATH]``.
The output is validated by the same loader the engine uses, so a bad reference fails here with
one line naming the card and the field, and nothing is written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REFERENCE = ROOT.parent / "shared" / "reference" / "gizmos_cards.json"
OUTPUT = ROOT / "referee" / "gizmos" / "data" / "cards.json"
FIELDS = ("id", "level", "type", "color", "cost", "vp", "effect", "text")


def card_document(reference: Any) -> dict[str, Any]:
    """The card file's content for a reference (a JSON list of card objects)."""
    if not isinstance(reference, list) or not all(isinstance(c, dict) for c in reference):
        raise ValueError("the reference must be a JSON list of card objects")
    missing = [(c.get("id"), k) for c in reference for k in FIELDS if k not in c]
    if missing:
        card, field = missing[0]
        raise ValueError(f"card {card}: field '{field}': missing from the reference")
    return {
        "format": "gizmos-cards",
        "version": 1,
        "source": "shared/reference/gizmos_cards.json",
        "cards": [
            {k: card[k] for k in FIELDS} for card in sorted(reference, key=lambda c: str(c["id"]).zfill(3))
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", nargs="?", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--out", type=Path, default=OUTPUT, help=f"where to write (default {OUTPUT})")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from referee.gizmos.cards import CardDataError, parse_cards

    try:
        document = card_document(json.loads(args.reference.read_text(encoding="utf-8")))
        text = json.dumps(document, indent=1, ensure_ascii=False) + "\n"
        parse_cards(json.loads(text))  # raises CardDataError naming the card and field
    except (OSError, ValueError, CardDataError) as exc:
        sys.stderr.write(f"build_cards: {args.reference}: {exc}\n")
        return 2
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(document['cards'])} cards)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
