"""Code copied and renamed cannot come back unseen: ``scripts/repeated_shapes.py`` counts the pairs
of places in ``src/nclab`` sharing six or more lines of the same shape (names, strings, numbers
aside), and the count is recorded here. A change that adds a pair fails with the pairs listed:
share the code (a function that builds both from what differs), or, where the repetition is the
right call (two declarations that only look alike), raise ``PAIRS`` and say why in the commit. A
change that removes pairs fails too, so that the recorded count comes down with it.

Exact repetition is ``tests/test_duplicate_code.py``'s (pylint's symilar); this one also sees a
block pasted with other names, which symilar does not.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: pairs of places in src/nclab sharing 6 or more same-shape lines that compute something
PAIRS = 31


def _script():
    spec = importlib.util.spec_from_file_location(
        "repeated_shapes", ROOT / "scripts" / "repeated_shapes.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclass looks its module up
    spec.loader.exec_module(mod)
    return mod


def test_renamed_copies_are_found_and_thin_lines_are_not(tmp_path):
    mod = _script()
    block = """
        def {f}({a}, {b}):
            {t} = {a} + {b} * 2
            {u} = max({t}, {b})
            if {u} > {a}:
                {u} = {u} - {a}
            {v} = [{t}, {u}, "{s}", len({a})]
            return sorted({v})
    """
    (tmp_path / "one.py").write_text(
        textwrap.dedent(block.format(f="f", a="a", b="b", t="t", u="u", v="v", s="x"))
    )
    (tmp_path / "two.py").write_text(
        textwrap.dedent(block.format(f="g", a="p", b="q", t="r", u="w", v="z", s="other"))
    )
    # a dict of literals or a list of typed fields repeated is data, not code: no pair
    data = "TABLE = {\n" + "".join(f'    "k{i}": {i},\n' for i in range(12)) + "}\n"
    data += "class C:\n" + "".join(f"    f{i}: int = {i}\n" for i in range(12))
    (tmp_path / "three.py").write_text(data)
    (tmp_path / "four.py").write_text(data.replace("TABLE", "OTHER"))
    pairs = mod.repeated_pairs(tmp_path)
    assert [(p.a, p.b, p.length) for p in pairs] == [("one.py", "two.py", 7)]
    assert pairs[0].a_lines == (2, 8)
    # one line changed in shape in the middle leaves runs shorter than six
    (tmp_path / "two.py").write_text(
        textwrap.dedent(
            block.format(f="g", a="p", b="q", t="r", u="w", v="z", s="other").replace(
                "if w > p:", "while w > p and q:"
            )
        )
    )
    assert mod.repeated_pairs(tmp_path) == []


def test_repeated_shapes_do_not_grow_unseen():
    mod = _script()
    pairs = mod.repeated_pairs(ROOT / "src" / "nclab")
    listing = "\n".join(str(p) for p in pairs[:60])
    advice = (
        "share the new repetition, or raise PAIRS and say why"
        if len(pairs) > PAIRS
        else "lower PAIRS"
    )
    assert len(pairs) == PAIRS, (
        f"{len(pairs)} pairs of places in src/nclab share 6 or more same-shape lines; "
        f"recorded: {PAIRS} (tests/test_repeated_shapes.py): {advice}. The longest:\n{listing}"
    )
