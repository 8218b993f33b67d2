"""Python and Cython text from untrusted strings: the only ways a model string
(joint, parameter, end-effector names) or free text quoting one reaches the
generated .pyx and .pyi.

* py_string(text): a string literal (Python and Cython, any context);
* docstring(text): a triple-quoted docstring literal, wrapped first and
  escaped after the wrap, line by line.

Both write ASCII only and escape every backslash and every quote, so the
literal ends exactly at its own closing quote(s) whatever `text` holds: a
wrap can no longer split an escape (the bug it replaces: an escaped \\" cut after its
backslash left a line ending in a continuation and a bare quote that closed
the docstring early; the next name then ran on import). The generated
module keeps model names as data (tuples of py_string literals, C
functions), not in its docstrings.
"""
from __future__ import annotations

import textwrap

# the escapes of Python and Cython string literals (Python reference, 2.4.1
# "String and Bytes literals"; Cython accepts the same set)
_SIMPLE = {"\\": "\\\\", '"': '\\"', "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(text: str, quote: str) -> str:
    out = []
    for ch in text:
        if ch == "\\" or ch == quote or ch in "\n\r\t":
            out.append(_SIMPLE[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


def py_string(text: str) -> str:
    """A single-quoted Python/Cython str literal of `text`: printable ASCII
    as is, `'` and `\\` escaped, everything else \\x, \\u or \\U escaped
    (ASCII source, no continuation, no quote left bare). Equal to ascii(text)
    for names without quotes."""
    if not isinstance(text, str):
        raise TypeError(f"py_string of {type(text).__name__}")
    return "'" + _escape(text, "'") + "'"


def py_tuple(texts) -> str:
    """A tuple literal of py_string literals."""
    items = [py_string(t) for t in texts]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def docstring(text: str, indent: str = "    ", width: int = 96) -> str:
    """A triple-quoted literal of `text` wrapped at `width` columns (each
    paragraph line keeps its own leading spaces), continuation lines indented
    by `indent` (removed again by inspect.cleandoc). The wrap comes first;
    then every line is escaped as a whole (`"` and `\\` escaped, non-ASCII as
    \\u), so no quote in the body is bare and no line ends in a lone
    backslash."""
    lines = []
    for line in text.split("\n"):
        lead = line[:len(line) - len(line.lstrip(" "))]
        lines += textwrap.wrap(line, width, subsequent_indent=lead) or [""]
    body = [_escape(x, '"') for x in lines]
    return '"""' + "\n".join((indent + x if x and i else x) for i, x in enumerate(body)) + '"""'
