"""Hostile model and parameter files: nothing in them ever runs, and nothing
in them makes the loader hang or grow without bound.

Each code payload, if Python evaluated it, would create a marker file or set
an environment variable; a control run proves that (the payload is live),
then loading a model that carries it must raise ModelError and leave no
trace. Oversized inputs (huge numbers, power towers, 1 GB files, /dev/zero,
FIFOs, deep nesting) must be refused with a ModelError; the test finishing at
all is the proof that they are refused quickly (no timing assertions).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codegen.read import model as mdl
from codegen.read.model import ModelError, load_model, load_param_values

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
ENV = "KRANG_HOSTILE_SENTINEL"

BASE = '''\
name = "toy"
geometry = ["L1", "L2"]

[[end_effector]]
name = "tip"
frame = "2"

[[frame]]
key = "1"
parent = "0"
joint = "q1"
type = "revolute"
axis = [0, 0, 1]
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = ["0", "0", "L1"]

[[frame]]
key = "2"
parent = "1"
joint = "q2"
type = "prismatic"
axis = [1, 0, 0]
rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
origin = ["L2", "0", "0"]
'''


def toml_str(s: str) -> str:
    """A TOML basic string holding s verbatim (JSON escapes are valid TOML)."""
    return json.dumps(s)


def with_origin(expr: str) -> str:
    old = 'origin = ["L2", "0", "0"]'
    assert BASE.count(old) == 1
    return BASE.replace(old, f"origin = [{toml_str(expr)}, \"0\", \"0\"]")


def chrs(word: str) -> str:
    """Python source that builds `word` from chr() calls joined at run time."""
    return "''.join(map(chr, [" + ", ".join(str(ord(c)) for c in word) + "]))"


# Each payload is Python source that, evaluated with the builtins in reach,
# creates the file MARKER (a placeholder replaced by a real path) or sets the
# environment variable VAR (replaced by ENV).
PAYLOADS = {
    "__import__": "__import__('pathlib').Path(MARKER).touch()",
    "open": "open(MARKER, 'w').close()",
    "exec": "exec(\"open(MARKER, 'w').close()\")",
    "eval": "eval(\"open(MARKER, 'w').close()\")",
    "chr joins": f"__import__({chrs('pathlib')}).Path(MARKER).touch()",
    "chr(95)*2 dunder": "eval(chr(95)*2 + 'import' + chr(95)*2 + \"('pathlib').Path(MARKER).touch()\")",
    "string concatenation": "eval('op' + 'en')(MARKER, 'w').close()",
    "getattr": "getattr(__import__('os').environ, 'setdefault')(VAR, '1')",
    "environment": "__import__('os').environ.__setitem__(VAR, '1')",
    "attribute walk": "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close']"
                      "[0].__init__.__globals__['close']("
                      "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close']"
                      "[0].__init__.__globals__['open'](MARKER, 0o101))",
    "lambda": "(lambda f: f(MARKER, 'w').close())(open)",
    "f-string": "f\"{open(MARKER, 'w').close()}\"",
    "walrus": "(o := open)(MARKER, 'w').close()",
    "comprehension": "[open(p, 'w').close() for p in [MARKER]]",
    "generator": "list(open(p, 'w').close() for p in [MARKER])",
    "decorator": "exec(\"@(lambda f: open(MARKER, 'w').close())\\ndef g(): pass\")",
    "conditional": "open(MARKER, 'w').close() if 1 else 0",
    "payload or a length": "open(MARKER, 'w').close() or L2",
    "sympy names": "Function('open')(MARKER)",
}


def instantiate(payload: str, marker: Path) -> str:
    return payload.replace("MARKER", repr(str(marker))).replace("VAR", repr(ENV))


def trace(marker: Path) -> bool:
    return marker.exists() or ENV in os.environ


@pytest.fixture
def clean_env():
    os.environ.pop(ENV, None)
    yield
    os.environ.pop(ENV, None)


@pytest.mark.parametrize("name", [n for n in PAYLOADS if n != "sympy names"])
def test_payloads_are_live(tmp_path, clean_env, name):
    """Control: each payload really does leave a trace when Python evaluates it."""
    marker = tmp_path / "control"
    eval(instantiate(PAYLOADS[name], marker), {"L2": 1.0})  # noqa: S307 - the point of the control
    assert trace(marker)


@pytest.mark.parametrize("name", list(PAYLOADS))
def test_payload_in_an_origin_never_runs(tmp_path, clean_env, name):
    marker = tmp_path / "pwned"
    path = tmp_path / "m.toml"
    path.write_text(with_origin(instantiate(PAYLOADS[name], marker)))
    with pytest.raises(ModelError, match="origin"):
        load_model(path)
    assert not trace(marker)


FIELDS = {  # where else text can go: names are data, never evaluated
    "model name": ('name = "toy"', "name = {}"),
    "geometry": ('geometry = ["L1", "L2"]', 'geometry = ["L1", "L2", {}]'),
    "joint name": ('joint = "q2"', "joint = {}"),
    "frame key": ('key = "2"', "key = {}"),
    "end-effector name": ('name = "tip"', "name = {}"),
    "rotation entry": ('rotation = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]',
                       "rotation = [[0, -1, 0], [1, 0, 0], [0, 0, {}]]"),
    "axis entry": ('axis = [1, 0, 0]', "axis = [{}, 0, 0]"),
    "gravity": ('name = "toy"', 'name = "toy"\ngravity = [0, 0, {}]'),
}


@pytest.mark.parametrize("field", list(FIELDS))
@pytest.mark.parametrize("name", ["__import__", "chr joins", "environment", "walrus"])
def test_payload_in_other_fields_never_runs(tmp_path, clean_env, field, name):
    marker = tmp_path / "pwned"
    old, new = FIELDS[field]
    text = BASE.replace(old, new.format(toml_str(instantiate(PAYLOADS[name], marker))), 1)
    path = tmp_path / "m.toml"
    path.write_text(text)
    try:
        m = load_model(path)
    except ModelError:
        pass
    else:  # accepted as a name: then it is kept verbatim, as data
        assert m.name == "toy" and field in ("joint name", "frame key", "end-effector name")
    assert not trace(marker)


def test_payload_in_parameter_file_never_runs(tmp_path, clean_env):
    model = load_model(ROOT / "tests" / "models" / "mini.toml")
    marker = tmp_path / "pwned"
    text = (ROOT / "tests" / "models" / "mini_params.toml").read_text()
    text = text.replace("L1 = 0.45", f"L1 = {toml_str(instantiate(PAYLOADS['__import__'], marker))}")
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(ModelError, match="L1 = .* is not a number"):
        load_param_values(path, model)
    assert not trace(marker)


def test_payload_through_the_command_line(tmp_path, clean_env):
    marker = tmp_path / "pwned"
    model_path = tmp_path / "m.toml"
    model_path.write_text(with_origin(instantiate(PAYLOADS["chr(95)*2 dunder"], marker)))
    r = subprocess.run([sys.executable, "-m", "codegen", str(model_path), str(ROOT / "models" / "krang_params.toml"),
                        "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr, r.stderr
    assert not trace(marker)


# ----------------------------------------------------------------------------
# unbounded work
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("origin, words", [
    ("2**10**10", ["exponent"]),
    ("9**9**9", ["exponent"]),
    ("factorial(10**7)", ["functions"]),
    ("10**10**10**10", ["exponent"]),
    ("(10**6)**8", ["constant beyond"]),
    ("1e20", ["out of range"]),
    ("99999999999999999999999", ["out of range"]),
    ("1" * 999, ["longer than"]),
    ("(" * 250 + "L2" + ")" * 250, ["parse"]),
    ("-" * 900 + "L2", ["deeper"]),
    ("L2" + "+L2" * 300, ["deeper"]),
    ("x" * 10 ** 5, ["limit is 1000"]),
    ("sin(((((((pi**8)**8)**8)**8)**8)**8)**8)", ["out of range"]),  # minutes in sin() before
    ("(pi**8)**8", ["out of range"]),  # 6.6e31 in the C before
    ("((((L1**8)**8)**8)**8)**8", ["exponent"]),
], ids=lambda v: v[:24] if isinstance(v, str) else None)
def test_expensive_origins_refused(tmp_path, origin, words):
    path = tmp_path / "m.toml"
    path.write_text(with_origin(origin))
    with pytest.raises(ModelError) as info:
        load_model(path)
    for w in words:
        assert w in str(info.value), str(info.value)


@pytest.mark.parametrize("value", ["1e20", "-1e20", "100000000000000000000", "1e400", "nan",
                                   "18446744073709551616"])
def test_huge_numbers_as_toml_origins_refused(tmp_path, value):
    path = tmp_path / "m.toml"
    path.write_text(BASE.replace('origin = ["L2", "0", "0"]', f'origin = [{value}, "0", "0"]'))
    with pytest.raises(ModelError, match="origin"):
        load_model(path)


def test_file_over_the_cap_refused(tmp_path):
    """A file just over the cap (holding a ~1 MiB name) is refused before TOML parsing."""
    path = tmp_path / "big.toml"
    with open(path, "w") as f:
        f.write('name = "')
        f.write("a" * mdl.MAX_FILE_BYTES)
        f.write('"\n')
    with pytest.raises(ModelError, match=f"larger than {mdl.MAX_FILE_BYTES} bytes"):
        load_model(path)


def test_gigabyte_sparse_file_refused(tmp_path):
    path = tmp_path / "huge.toml"
    with open(path, "wb") as f:
        f.truncate(10 ** 9)  # sparse: no disk space, but 1e9 bytes to read
    with pytest.raises(ModelError, match="larger than"):
        load_model(path)
    with pytest.raises(ModelError, match="larger than"):
        load_param_values(path, load_model(ROOT / "tests" / "models" / "mini.toml"))


def test_long_name_refused(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(BASE.replace('name = "toy"', f'name = "{"a" * 10 ** 5}"'))
    with pytest.raises(ModelError, match=f"longer than {mdl.MAX_NAME}") as info:
        load_model(path)
    assert len(str(info.value)) < 300  # not echoed in full


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_devices_refused(tmp_path, device):
    with pytest.raises(ModelError, match="not a regular file"):
        load_model(device)
    link = tmp_path / "link.toml"
    link.symlink_to(device)
    with pytest.raises(ModelError, match="not a regular file"):
        load_model(link)
    model = load_model(ROOT / "tests" / "models" / "mini.toml")
    with pytest.raises(ModelError, match="parameter file .*not a regular file"):
        load_param_values(device, model)


def test_directory_refused(tmp_path):
    with pytest.raises(ModelError, match="cannot read model file"):
        load_model(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_fifo_refused_without_blocking(tmp_path):
    """Opening a FIFO for reading blocks until a writer comes; the loader must not."""
    fifo = tmp_path / "model.toml"
    os.mkfifo(fifo)
    with pytest.raises(ModelError, match="not a regular file"):
        load_model(fifo)


@pytest.mark.parametrize("path", ["nul\x00.toml", ""])
def test_bad_paths(path):
    with pytest.raises(ModelError, match="cannot read model file"):
        load_model(path)


@pytest.mark.parametrize("data", [b"\xff\xfe", b'name = "\xc3\x28"', b"\xed\xa0\x80", BASE.encode("utf-16")])
def test_invalid_utf8_refused(tmp_path, data):
    path = tmp_path / "m.toml"
    path.write_bytes(data)
    with pytest.raises(ModelError, match="not UTF-8|TOML"):
        load_model(path)


@pytest.mark.parametrize("text", [
    'x = ' + "[" * 5000 + "]" * 5000,
    'x = ' + "{a = " * 5000 + "1" + "}" * 5000,
    BASE.replace('origin = ["L2", "0", "0"]', 'origin = [' + "[" * 3000 + "]" * 3000 + ', "0", "0"]'),
], ids=["arrays", "inline tables", "origin arrays"])
def test_deep_toml_refused(tmp_path, text):
    path = tmp_path / "m.toml"
    path.write_text(text)
    with pytest.raises(ModelError):
        load_model(path)


def _chain(n_frames: int, moving: bool = True) -> str:
    lines = ['name = "chain"']
    for i in range(1, n_frames + 1):
        lines += ["[[frame]]", f'key = "f{i}"', f'parent = "{"f" + str(i - 1) if i > 1 else "0"}"']
        if moving or i == 1:
            lines += [f'joint = "q{i}"', 'type = "revolute"', "axis = [0, 0, 1]"]
        else:
            lines += ['type = "fixed"']
        lines += ["rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]", 'origin = [0, 0, 0.1]']
    return "\n".join(lines) + "\n"


def test_counts_bounded(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(_chain(mdl.MAX_DOF))
    assert load_model(path).ndof == mdl.MAX_DOF
    path.write_text(_chain(mdl.MAX_DOF + 1))
    with pytest.raises(ModelError, match=f"more than {mdl.MAX_DOF} moving joints"):
        load_model(path)
    path.write_text(_chain(mdl.MAX_FRAMES + 1, moving=False))
    with pytest.raises(ModelError, match=f"limit is {mdl.MAX_FRAMES}"):
        load_model(path)
    geometry = ", ".join(f'"G{i}"' for i in range(mdl.MAX_GEOMETRY + 1))
    path.write_text(BASE.replace('geometry = ["L1", "L2"]', f"geometry = [\"L1\", \"L2\", {geometry}]"))
    with pytest.raises(ModelError, match=f"limit is {mdl.MAX_GEOMETRY}"):
        load_model(path)
    ees = "".join(f'[[end_effector]]\nname = "e{i}"\nframe = "2"\n' for i in range(mdl.MAX_END_EFFECTORS))
    path.write_text(BASE + ees)
    with pytest.raises(ModelError, match=f"limit is {mdl.MAX_END_EFFECTORS}"):
        load_model(path)
