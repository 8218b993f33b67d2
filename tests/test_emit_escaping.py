"""The escapers through which model strings reach generated source, one per
context, each proven on arbitrary text (Hypothesis, many examples, no build):

* C string literal (cnames.c_string): after C's translation phases 1-2
  (trigraphs: -std=c99 reads ??/ as a backslash; line splices) the literal
  ends at its own closing quote and its escapes decode to the UTF-8 bytes;
  gcc agrees (one compile and run per example batch);
* C comment (cnames.comment_text for a name, cnames.doc_lines /
  comment_line for free text after wrapping): the comment ends only at the
  template's terminator, holds no nested /*, and the text comes back;
* Python/Cython string literal (pytext.py_string): ASCII, and
  ast.literal_eval gives the text back;
* docstring (pytext.docstring): one string constant whose words are the
  text's, followed by nothing the text put there.

The build-level property (every emitter, a compiled module imported) is in
tests/test_hostile_names_build.py.
"""
from __future__ import annotations

import ast
import re
import shutil
import subprocess
import warnings

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from codegen.emit.cnames import c_string, comment_line, comment_text, doc_lines, uncomment_line
from codegen.emit.pytext import docstring, py_string, py_tuple

pytestmark = pytest.mark.builds

CC = shutil.which("cc") or shutil.which("gcc")
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# pieces that break naive escaping, joined into names by HOSTILE
PIECES = ['"""', "'''", '"', "'", "\\", "\\" * 43, "*/", "/*", "//", "#", "??/", "??=", "???", "\\n", "\\x41",
          "\\u1234", "\\N{DASH}", "{{", "}}", "{%", "%}", "e" * 48, 'aaa"""""#', 'open("pwn","w")#', "\n", "\r",
          "\t", " ", "ä", "关节", "\U0001d11e", "\u2028", "\x00", "\x7f", "\\\n", "*", "/", "?"]
HOSTILE = st.one_of(
    st.text(max_size=80),
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=12).map("".join),
)

# ---------------------------------------------------------------------------
# a model of C's translation phases 1-3 (C99 5.1.1.2) for the checks below
# ---------------------------------------------------------------------------
TRIGRAPHS = {"=": "#", "(": "[", "/": "\\", ")": "]", "'": "^", "<": "{", "!": "|", ">": "}", "-": "~"}


def phases_1_2(src: str) -> str:
    src = re.sub(r"\?\?([=(/)'<!>-])", lambda m: TRIGRAPHS[m.group(1)], src)
    return src.replace("\\\n", "")


SIMPLE = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, '"': 34, "'": 39, "?": 63}


def c_literal_bytes(src: str):
    """(bytes of the first string literal in src, the rest after it)."""
    assert src[0] == '"'
    out, i = bytearray(), 1
    while src[i] != '"':
        assert src[i] != "\n", "newline inside a string literal"
        if src[i] != "\\":
            out += src[i].encode("utf-8")
            i += 1
            continue
        m = re.compile(r"\\([0-7]{1,3}|x[0-9A-Fa-f]+|.)").match(src, i)
        esc = m.group(1)
        if esc[0] in "01234567":
            out.append(int(esc, 8))
        elif esc[0] == "x":
            out.append(int(esc[1:], 16))
        else:
            out.append(SIMPLE[esc])  # any other escape is undefined: KeyError fails the test
        i = m.end()
    return bytes(out), src[i + 1:]


def _solid(text: str) -> str:
    """text without whitespace (what a wrap may move or drop)."""
    return "".join(text.split())


def comment_body(src: str) -> tuple:
    """(the text of the /* */ comment at the start of src, what follows it)."""
    assert src.startswith("/*")
    end = src.index("*/", 2)
    return src[2:end], src[end + 2:]


# ---------------------------------------------------------------------------
# C
# ---------------------------------------------------------------------------

@FAST
@given(HOSTILE)
def test_c_string_literal_round_trips(text):
    lit = c_string(text)
    assert lit.isascii() and "\n" not in lit and "??" not in lit and "*/" not in lit and "/*" not in lit
    data, rest = c_literal_bytes(phases_1_2(lit + " x"))
    assert data == text.encode("utf-8") and rest == " x"


@FAST
@given(HOSTILE)
def test_comment_text_of_a_name_stays_inside_its_comment(text):
    body, rest = comment_body(phases_1_2(f"/* {comment_text(text)} */ int x;"))
    assert rest == " int x;" and "/*" not in body
    shown = comment_text(text)
    if shown.startswith('"'):  # not plain: the C string literal, which decodes to the name
        assert c_literal_bytes(shown)[0] == text.encode("utf-8")
    else:
        assert shown == text


@FAST
@given(HOSTILE, st.integers(10, 90))
@example('Jacobian of end effector */ int pwned; /* (frame ??/', 40)
@example("a" * 30 + "*" + "/" + "b" * 30, 31)  # a wrap between * and /
def test_doc_comment_lines_stay_inside_their_comment(text, width):
    lines = doc_lines(text, width)
    block = "\n".join(("/* " if i == 0 else " * ") + ln for i, ln in enumerate(lines)) + " */\nint x;\n"
    body, rest = comment_body(phases_1_2(block))
    assert rest == "\nint x;\n" and "/*" not in body
    assert all(ln.isascii() and "\n" not in ln for ln in lines)
    # the words come back (the wrap only moved or dropped whitespace)
    assert _solid("".join(uncomment_line(ln) for ln in lines)) == _solid(text)


@FAST
@given(HOSTILE)
def test_comment_line_is_undone_by_uncomment_line(text):
    line = comment_line(text)
    assert uncomment_line(line) == text
    assert "*/" not in line and "/*" not in line and "??" not in line and line.isascii()


def test_readable_text_is_unchanged():
    doc = "Jacobian of end effector left (frame 4) in frame 0 (world) axes, 6 x NDOF, linear rows first."
    assert doc_lines(doc, 200) == [doc]
    assert comment_line("Fv*dq + Fc*sign(dq), A(q)^-1") == "Fv*dq + Fc*sign(dq), A(q)^-1"
    assert comment_line("a*/b/*c??/") == "a*\\/b/\\*c?\\?/"


@pytest.mark.skipif(CC is None, reason="no C compiler")
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(HOSTILE.map(lambda s: s.replace("\x00", "")), min_size=1, max_size=12))
def test_gcc_reads_the_escaped_text_back(tmp_path_factory, texts):
    """The real compiler (-std=c99: trigraphs on, -Wall -Wextra -Werror
    -pedantic: no -Wcomment or -Wtrigraphs warning): every name in a comment
    and in a doc block, and as a literal that the program prints back."""
    tmp = tmp_path_factory.mktemp("cesc")
    comments = "\n".join(f"/* {comment_text(t)} */\n" + "\n".join(
        ("/* " if i == 0 else " * ") + ln for i, ln in enumerate(doc_lines(t))) + " */" for t in texts)
    src = (f"#include <stdio.h>\n#include <string.h>\n{comments}\n"
           f"static const char *const names[] = {{{', '.join(c_string(t) for t in texts)}}};\n"
           "int main(void)\n{\n    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {\n"
           "        fwrite(names[i], 1, strlen(names[i]) + 1, stdout);\n    }\n    return 0;\n}\n")
    (tmp / "t.c").write_text(src, encoding="utf-8")
    r = subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o", str(tmp / "t"),
                        str(tmp / "t.c")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    out = subprocess.run([str(tmp / "t")], capture_output=True, check=True).stdout
    assert out.split(b"\0")[:-1] == [t.encode("utf-8") for t in texts]


# ---------------------------------------------------------------------------
# Python and Cython
# ---------------------------------------------------------------------------

@FAST
@given(HOSTILE)
def test_py_string_round_trips(text):
    lit = py_string(text)
    assert lit.isascii() and "\n" not in lit
    assert ast.literal_eval(lit) == text
    tree = ast.parse(f"x = {lit}\ny = 1\n")
    assert len(tree.body) == 2


@FAST
@given(st.lists(HOSTILE, max_size=5))
def test_py_tuple_round_trips(texts):
    assert ast.literal_eval(py_tuple(texts)) == tuple(texts)


@FAST
@given(HOSTILE, st.sampled_from(["", "    "]))
@example("End effectors: " + ", ".join(["e" * 48, 'aaa"""""#' + "\\" * 43, 'open("pwn","w")#']), "")
def test_docstring_is_one_constant_holding_the_text(text, indent):
    """A docstring, module level or in a function, parses as one string
    constant (nothing after it runs) whose non-blank characters are the text's."""
    doc = docstring(text, indent)
    assert doc.isascii()
    module = ast.parse(f"{doc}\nx = 1\n")
    assert [type(n) for n in module.body] == [ast.Expr, ast.Assign]
    value = module.body[0].value.value
    assert isinstance(value, str)
    fn = ast.parse(f"def f():\n    {docstring(text)}\n    return 1\n").body[0]
    assert [type(n) for n in fn.body] == [ast.Expr, ast.Return] and isinstance(fn.body[0].value.value, str)
    assert _solid(value) == _solid(text)


def test_the_old_docstring_escaping_was_broken():
    """The reported reproducer (hostile end-effector names) against the old rule (escape, then wrap): the
    wrap split an escaped quote and the third name became code. The same text
    through docstring() stays one constant (the test above, its example)."""
    import textwrap

    def old(text):
        text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
        return '"""' + textwrap.fill(text, 96) + '"""'

    names = ["e" * k for k in range(1, 65)]
    broken = False
    for e in names:
        text = "End effectors (`ee`, in index order): " + ", ".join([e, 'aaa"""""#' + "\\" * 43, 'open("pwn","w")#'])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))  # the old escapes
                body = ast.parse(old(text) + "\n").body
        except SyntaxError:
            continue
        if any(isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) for n in body):
            broken = True
        body = ast.parse(docstring(text, "") + "\n").body
        assert len(body) == 1 and isinstance(body[0].value, ast.Constant)
    assert broken, "the reproducer no longer exercises the old bug"
