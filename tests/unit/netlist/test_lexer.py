"""Lines: title, comments, continuations, .include, .control, .end; every token keeps its place."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import mna
from mna.errors import NetlistError
from mna.netlist.model import field_text
from mna.netlist.parser import parse_text


def words(text: str) -> list[list[str]]:
    return [[card.head, *map(field_text, card.fields)] for card in parse_text(text).cards]


def lex(text: str):
    return parse_text(text)


def test_first_line_is_the_title_whatever_it_holds():
    source = parse_text("R1 a 0 1k looks like an element\nR2 a 0 2\n")
    assert source.title == "R1 a 0 1k looks like an element"
    assert words("R1 a 0 1k\nR2 a 0 2\n") == [["R2", "a", "0", "2"]]


def test_star_semicolon_and_dollar_comments():
    text = "t\n* a comment\n  * indented comment\nR1 a 0 1k ; to the end\nR2 a b 2 $ dollar\n"
    assert words(text) == [["R1", "a", "0", "1k"], ["R2", "a", "b", "2"]]


def test_a_line_that_is_only_a_comment_is_skipped():
    text = "t\nR1 a 0 1\n; a comment\n   ; indented\n;\n $ dollar\n$\nR2 a 0 2\n"
    assert words(text) == [["R1", "a", "0", "1"], ["R2", "a", "0", "2"]]


def test_only_line_feeds_and_carriage_returns_end_lines():
    # a form feed (a page break in old decks) or U+2028 is a blank, so the lines that
    # follow keep the numbers an editor shows
    with pytest.raises(NetlistError) as error:
        mna.read_string("t\nV1 a 0 1\x0c\nR1 a 0 1\u2028\r\nR2 a 0 bad\n.op\n")
    assert (error.value.location.line, error.value.location.column) == (4, 8)


def test_an_invisible_character_is_refused_where_it_stands(tmp_path):
    # "a\u200b" looks like "a" and was a node of its own, left floating without a word
    with pytest.raises(NetlistError, match="U\\+200B ZERO WIDTH SPACE") as error:
        mna.read_string("t\nV1 a 0 1\nR1 a\u200b 0 1\n.op\n")
    assert (error.value.location.line, error.value.location.column) == (3, 5)
    # in a comment it is harmless (a right-to-left mark before Hebrew text)
    assert mna.read_string("t\nV1 a 0 1\nR1 a 0 1 ; note \u200f\u05e9\n").elements
    (tmp_path / "r.inc").write_bytes("\ufeffR1 a 0 1\n".encode())   # a byte-order mark is fine
    (tmp_path / "top.net").write_text("top\n.include r.inc\nV1 a 0 1\n")
    assert mna.operating_point(mna.read(tmp_path / "top.net"))["I(V1)"] == pytest.approx(-1)


def test_dollar_inside_a_word_is_not_a_comment():
    # only " $ " (a dollar standing alone) starts a comment
    assert words("t\nR$1 a 0 1 $comment-less\n") == [["R$1", "a", "0", "1", "$comment-less"]]


def test_continuation_lines_join_the_previous_line():
    text = "t\nV1 a 0\n+ DC 5\n* interleaved comment\n+ AC 1\nR1 a 0 1\n"
    assert words(text) == [["V1", "a", "0", "DC", "5", "AC", "1"], ["R1", "a", "0", "1"]]


def test_continuation_tokens_keep_their_own_line_and_column():
    (card, _) = parse_text("t\nR1 a 0\n+   4k7\nC1 a 0 1\n").cards
    place = card.place(2)
    assert (card.fields[2], place.line, place.column) == ("4k7", 3, 5)


def test_continuation_without_a_line_is_an_error():
    with pytest.raises(NetlistError, match=r"continuation line '\+' with no line") as info:
        lex("t\n+ R1 a 0 1\n")
    assert info.value.location.line == 2


def test_end_stops_reading():
    assert words("t\nR1 a 0 1\n.end\nthis is not read\n") == [["R1", "a", "0", "1"]]
    assert words("t\nR1 a 0 1\n.END\nR2 x\n") == [["R1", "a", "0", "1"]]


def test_field_columns():
    (card,) = parse_text("t\n  R1 in out {2*r}\n").cards
    assert card.location.column == 3
    assert [(field_text(f), card.place(i).column) for i, f in enumerate(card.fields)] == [
        ("in", 6), ("out", 9), ("{2*r}", 13)]
    assert card.fields[-1].location.column == 14   # where the expression's text starts


def test_columns_of_a_words_only_line_are_found_again():
    (card,) = parse_text("t\n\tR7  a\t b   1k ; comment\n").cards
    assert [card.place(i).column for i in range(3)] == [6, 9, 13]


def test_unbalanced_braces():
    with pytest.raises(NetlistError, match=r"'\{' has no matching '\}'") as info:
        lex("t\nR1 a 0 {1+2\n")
    assert (info.value.location.line, info.value.location.column) == (2, 8)
    with pytest.raises(NetlistError, match=r"unexpected character '\}'") as info:
        lex("t\nR1 a 0 1}\n")
    assert info.value.location.column == 9


def test_control_block_is_skipped_with_a_warning(caplog):
    text = "deck\nV1 a 0 1\n.control\nrun\nprint all\nR9 not read\n.endc\nR1 a 0 2\n.op\n"
    with caplog.at_level(logging.WARNING):
        result = mna.operating_point(mna.read_string(text, "deck.net"))
    assert result["I(V1)"] == pytest.approx(-0.5, rel=1e-12)
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("deck.net:3:1" in m and ".control" in m for m in messages)


def test_control_block_without_endc_is_an_error():
    with pytest.raises(NetlistError, match=r"\.control block has no \.endc") as info:
        lex("t\nR1 a 0 1\n.control\nrun\n")
    assert info.value.location.line == 3


def test_include_is_relative_to_the_including_file(tmp_path, monkeypatch):
    (tmp_path / "lib" / "deeper").mkdir(parents=True)
    (tmp_path / "lib" / "part.inc").write_text("* part\n.include deeper/load.inc\nR1 in out 1k\n")
    (tmp_path / "lib" / "deeper" / "load.inc").write_text("R2 out 0 3k\n")
    (tmp_path / "top.net").write_text("top\n.include lib/part.inc\nV1 in 0 8\n.op\n")
    monkeypatch.chdir(tmp_path / "lib" / "deeper")  # the working directory does not matter
    result = mna.operating_point(mna.read(tmp_path / "top.net"))
    assert result["V(out)"] == pytest.approx(6.0, rel=1e-12)
    # nodes are numbered by first appearance, includes spliced in place
    assert result.names[:2] == ("V(out)", "V(in)")


def test_include_with_quotes_and_inc_alias(tmp_path):
    (tmp_path / "r.inc").write_text("R1 a 0 2\n")
    (tmp_path / "top.net").write_text("top\n.inc 'r.inc'\nV1 a 0 4\n")
    assert mna.operating_point(mna.read(tmp_path / "top.net"))["I(V1)"] == pytest.approx(-2.0)


def test_recursive_include_is_an_error(tmp_path):
    (tmp_path / "a.inc").write_text(".include b.inc\n")
    (tmp_path / "b.inc").write_text("R1 x 0 1\n.include a.inc\n")
    (tmp_path / "top.net").write_text("top\n.include a.inc\n")
    with pytest.raises(NetlistError, match="includes itself") as info:
        mna.read(tmp_path / "top.net")
    assert info.value.location.file.endswith("b.inc")
    assert info.value.location.line == 2


def test_a_library_section_may_use_another_section_of_its_file(tmp_path):
    # the pattern of process design kits: the corners share a common section
    (tmp_path / "models.lib").write_text(".lib typ\n.lib models.lib common\n.param r=2\n.endl\n"
                                         ".lib common\n.param c=4\n.endl\n")
    (tmp_path / "top.net").write_text("top\n.lib models.lib typ\nV1 a 0 {c}\nR1 a 0 {r}\n")
    assert mna.operating_point(mna.read(tmp_path / "top.net"))["I(V1)"] == pytest.approx(-2.0)
    (tmp_path / "loop.lib").write_text(".lib typ\n.lib loop.lib typ\n.endl\n")
    (tmp_path / "loop.net").write_text("top\n.lib loop.lib typ\n")
    with pytest.raises(NetlistError, match="includes itself"):
        mna.read(tmp_path / "loop.net")


def test_includes_that_multiply_are_stopped_at_a_count(tmp_path, monkeypatch):
    # each file includes the next twice: 2**8 files to read, against a cap of 100 (10,000
    # in earnest; 16 levels took 11.7 s, 31 never ended)
    import mna.netlist.lexer as lexer

    monkeypatch.setattr(lexer, "MAX_INCLUDES", 100)
    for k in range(8):
        (tmp_path / f"d{k}.inc").write_text(f".include d{k + 1}.inc\n" * 2)
    (tmp_path / "d8.inc").write_text("R1 a 0 1\n")
    (tmp_path / "top.net").write_text("top\n.include d0.inc\nV1 a 0 1\n")
    with pytest.raises(NetlistError, match="more than 100 files included"):
        mna.read(tmp_path / "top.net")


def test_missing_netlist_file_is_a_netlist_error(tmp_path):
    with pytest.raises(NetlistError, match="cannot read netlist"):
        mna.read(tmp_path / "nothing.net")


def test_a_nul_character_is_placed_in_the_file_that_holds_it(tmp_path):
    (tmp_path / "top.net").write_bytes(b"t\rV1 a 0 1\r\nR1 a\0 0 1\n")   # any line end
    (tmp_path / "r.inc").write_bytes(b"* models\nR1 a\0 0 1\n")
    (tmp_path / "inc.net").write_text("t\n.include r.inc\nV1 a 0 1\n")
    for netlist, place in (("top.net", ("top.net", 3, 5)), ("inc.net", ("r.inc", 2, 5))):
        with pytest.raises(NetlistError, match="a NUL character") as error:
            mna.read(tmp_path / netlist)
        location = error.value.location
        assert (Path(location.file).name, location.line, location.column) == place
