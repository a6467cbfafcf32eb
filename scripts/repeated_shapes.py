"""Pairs of places in ``src/nclab`` that share six or more lines of the same shape.

Two lines have the same shape when they read the same once every name is ``n``, every string
``s`` and every number ``0`` (keywords and operators kept): ``x = f(a, "b")`` and
``y = g(c, "d")`` have one shape. Lines that compute nothing are passed over: blank lines,
comments, imports, and lines made only of names, literals and punctuation (``)``, a docstring,
``"key": 1.0,``, ``width: int = 64``, ``where="App. D",``): declarations look alike by nature,
and a repeated one is data, not logic. A pair of places is two files (or two parts of one
file) that share a run of at least ``MIN_LINES`` consecutive kept lines of the same shape; a
run that stands in more than ``MAX_PLACES`` places is too common to be one repetition (a
declaration idiom) and is not counted. Each pair of files counts once, however many runs it
shares: that is the number the repository holds down (``tests/test_repeated_shapes.py``).

    python scripts/repeated_shapes.py            # the count and every pair, most lines first
    python scripts/repeated_shapes.py --min-lines 8 src/nclab/theory

Exact repetition (the same lines to the letter) is pylint's ``symilar``'s, held by
``tests/test_duplicate_code.py``; this one also sees code copied and renamed.
"""

from __future__ import annotations

import argparse
import io
import keyword
import sys
import tokenize
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIN_LINES = 6
MAX_PLACES = 8
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
#: the words of a line that declares and computes nothing: ``name: Type = 0``, ``key="text",``,
#: ``x = y.z``, ``[a, b]``; such lines are data however alike they look
_DECLARE = {"n", "s", "0", ":", "=", ",", ".", "|", "[", "]", "None", "True", "False"}


@dataclass(frozen=True)
class Pair:
    """Two files sharing runs of same-shape lines: the longest run's lines in each."""

    a: str
    b: str
    a_lines: tuple[int, int]
    b_lines: tuple[int, int]
    length: int
    runs: int

    def __str__(self) -> str:
        more = f" (+{self.runs - 1} more runs)" if self.runs > 1 else ""
        return (
            f"{self.a}:{self.a_lines[0]}-{self.a_lines[1]} ~ "
            f"{self.b}:{self.b_lines[0]}-{self.b_lines[1]} ({self.length} lines){more}"
        )


def shapes(source: str) -> list[tuple[int, str]]:
    """The kept lines of a module: (line number, shape), in order."""
    by_line: dict[int, list[str]] = defaultdict(list)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    for tok in tokens:
        if tok.type in _SKIP or tok.type == tokenize.ENDMARKER:
            continue
        if tok.type == tokenize.NAME:
            word = tok.string if keyword.iskeyword(tok.string) else "n"
        elif tok.type == tokenize.STRING or tok.type in _fstring_types():
            word = "s"
        elif tok.type == tokenize.NUMBER:
            word = "0"
        else:
            word = tok.string
        by_line[tok.start[0]].append(word)
    kept = []
    for line in sorted(by_line):
        words = by_line[line]
        if words[0] in ("import", "from") or "n" not in words or set(words) <= _DECLARE:
            continue  # imports; thin lines: punctuation, literals, declarations (data, prose)
        # an f-string's pieces collapse to one string
        shape = " ".join(words).replace("s s", "s")
        kept.append((line, shape))
    return kept


def _fstring_types() -> set[int]:
    return {
        getattr(tokenize, name)
        for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
        if hasattr(tokenize, name)
    }


def repeated_pairs(
    root: Path, min_lines: int = MIN_LINES, max_places: int = MAX_PLACES
) -> list[Pair]:
    """Every pair of places under ``root`` sharing ``min_lines`` same-shape lines, longest first."""
    files = {
        str(p.relative_to(root)): shapes(p.read_text(encoding="utf-8"))
        for p in sorted(root.rglob("*.py"))
    }
    windows: dict[tuple[str, ...], list[tuple[str, int]]] = defaultdict(list)
    for name, lines in files.items():
        seq = [s for _, s in lines]
        for i in range(len(seq) - min_lines + 1):
            windows[tuple(seq[i : i + min_lines])].append((name, i))
    # (file a, file b) -> {(start a, start b): length of the maximal run}
    runs: dict[tuple[str, str], dict[tuple[int, int], int]] = defaultdict(dict)
    for places in windows.values():
        if len(places) < 2 or len(places) > max_places:
            continue
        for x in range(len(places)):
            for y in range(x + 1, len(places)):
                (fa, ia), (fb, ib) = places[x], places[y]
                if fa == fb and abs(ia - ib) < min_lines:
                    continue  # a run overlapping itself
                if (fa, ia) > (fb, ib):
                    (fa, ia), (fb, ib) = (fb, ib), (fa, ia)
                sa, sb = files[fa], files[fb]
                # walk back to the run's start, then forward to its end
                while ia > 0 and ib > 0 and sa[ia - 1][1] == sb[ib - 1][1]:
                    if fa == fb and abs((ia - 1) - (ib - 1)) < min_lines:
                        break
                    ia, ib = ia - 1, ib - 1
                n = 0
                while ia + n < len(sa) and ib + n < len(sb) and sa[ia + n][1] == sb[ib + n][1]:
                    n += 1
                runs[(fa, fb)][(ia, ib)] = n
    pairs = []
    for (fa, fb), found in runs.items():
        (ia, ib), n = max(found.items(), key=lambda kv: kv[1])
        sa, sb = files[fa], files[fb]
        pairs.append(
            Pair(
                fa,
                fb,
                (sa[ia][0], sa[ia + n - 1][0]),
                (sb[ib][0], sb[ib + n - 1][0]),
                n,
                len(found),
            )
        )
    return sorted(pairs, key=lambda p: (-p.length, p.a, p.b))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", default=str(ROOT / "src" / "nclab"))
    parser.add_argument("--min-lines", type=int, default=MIN_LINES)
    parser.add_argument("--max-places", type=int, default=MAX_PLACES)
    args = parser.parse_args(argv)
    pairs = repeated_pairs(Path(args.root), args.min_lines, args.max_places)
    for pair in pairs:
        print(pair)
    print(f"{len(pairs)} pairs of places share {args.min_lines} or more same-shape lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
