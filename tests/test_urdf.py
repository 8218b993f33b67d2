"""Unit tests of the URDF front end (codegen/read/urdf.py) on small URDFs written here.

Conventions are checked against things we did not write: Pinocchio's rpy
(pin.rpy.rpyToMatrix) and its URDF parser (reference/pin_reference.compare_urdf),
exact rotations where the answer is known by hand, and the ROS URDF
specification's defaults. Every bad input must raise one ModelError naming
the element and attribute.
"""
from __future__ import annotations

import html
import math
import os
import tomllib

import numpy as np
import pytest
import sympy as sp

from codegen.read.model import Limits, ModelError, load_model, load_param_values
from codegen.read.urdf import load_urdf, urdf_robot
from codegen.read import urdf_parse

pytestmark = pytest.mark.unit

pin = pytest.importorskip("pinocchio")
from reference.pin_reference import compare_urdf  # noqa: E402

INERTIAL = ('<inertial><origin xyz="{c}" rpy="{r}"/><mass value="{m}"/>'
            '<inertia ixx="0.3" ixy="0.01" ixz="-0.02" iyy="0.25" iyz="0.03" izz="0.2"/></inertial>')


def link(name, m=1.0, c="0.1 -0.05 0.2", r="0.3 -0.2 0.7"):
    inertial = INERTIAL.format(c=c, r=r, m=m) if m is not None else ""
    return f'<link name="{name}">{inertial}</link>'


def joint(name, parent, child, type="revolute", xyz="0.1 0.2 0.3", rpy="0.4 -0.5 0.6",
          axis="0 0 1", extra='<limit lower="-1" upper="2" velocity="3" effort="4"/>'):
    ax = f'<axis xyz="{axis}"/>' if axis is not None else ""
    return (f'<joint name="{name}" type="{type}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/>{ax}{extra}</joint>')


def robot(*parts, name="tiny"):
    return f'<?xml version="1.0"?>\n<robot name="{name}">' + "".join(parts) + "</robot>"


def chain():
    """base -(j1 revolute)- a -(fix fixed)- b -(j2 prismatic)- c -(tip fixed)- d; c2 on a via j3 (continuous)."""
    return robot(
        link("base"), link("a"), link("b", m=0.5, c="0.3 0 -0.1", r="1.1 0.2 -0.4"), link("c"),
        link("d", m=0.25, c="0 0.1 0", r="0 0 0"), link("c2", m=None),
        joint("j1", "base", "a", axis="1 1 0"),
        joint("fix", "a", "b", type="fixed", xyz="0.05 0 0.1", rpy="0.1 0.2 -0.3", axis=None, extra=""),
        joint("j2", "b", "c", type="prismatic", axis="0 1 0",
              extra='<limit lower="-0.1" upper="0.2" velocity="1" effort="9"/><dynamics damping="0.7" friction="0.2"/>'),
        joint("tip", "c", "d", type="fixed", xyz="0 0 0.2", rpy="0 0 -0.7853981633974483", axis=None, extra=""),
        joint("j3", "a", "c2", type="continuous", rpy="1.5707963267948966 0 0", axis="0 0 -1",
              extra='<limit effort="5" velocity="6"/>'))


def load(text, **kw):
    return urdf_robot(text.encode(), **kw)


def write(tmp_path, text, name="r.urdf"):
    p = tmp_path / name
    p.write_text(text)
    return p


# ---------------------------------------------------------------- conventions

def test_rpy_matches_pinocchio_and_urdf_spec():
    text = robot(link("base"), link("a"), joint("j", "base", "a", rpy="0.1 0.2 0.3"))
    f = load(text).model.frame("a")
    R = np.array(f.rotation.tolist(), dtype=float)
    assert np.abs(R - pin.rpy.rpyToMatrix(0.1, 0.2, 0.3)).max() <= 1e-15
    # URDF spec: fixed-axis roll about x, then pitch about y, then yaw about z
    assert np.abs(R - pin.AngleAxis(0.3, np.array([0., 0, 1])).matrix()
                  @ pin.AngleAxis(0.2, np.array([0., 1, 0])).matrix()
                  @ pin.AngleAxis(0.1, np.array([1., 0, 0])).matrix()).max() <= 1e-15
    assert f.origin == (sp.Float(0.1, precision=53), sp.Float(0.2, precision=53), sp.Float(0.3, precision=53))


def test_snapping_on_and_off():
    text = robot(link("base"), link("a"),
                 joint("j", "base", "a", rpy="1.57079632679 0 0", xyz="1e-13 0.5 2", axis="1e-12 0 2"))
    f = load(text).model.frame("a")
    assert f.rotation == sp.Matrix([[1, 0, 0], [0, 0, -1], [0, 1, 0]])  # Rx(pi/2), exact
    assert f.axis == (0, 0, 1) and all(isinstance(a, sp.Integer) for a in f.axis)
    assert f.origin[0] == 0 and f.origin[0].is_Integer and f.origin[2].is_Integer
    g = load(text, snap=False).model.frame("a")
    assert not any(x.is_Integer for x in (g.rotation[1, 1], g.rotation[2, 2]))
    assert float(g.rotation[1, 1]) == math.cos(1.57079632679)
    assert g.axis[0] != 0 and abs(sum(float(a) ** 2 for a in g.axis) - 1) <= 1e-15  # normalized floats
    assert g.origin[0] != 0


def test_non_axis_aligned_axis_normalized_and_not_snapped():
    text = robot(link("base"), link("a"), joint("j", "base", "a", axis="0 0.7071 0.7071"))
    ax = load(text).model.frame("a").axis
    assert all(isinstance(a, (sp.Float, sp.Integer)) for a in ax) and ax[0].is_zero
    assert abs(float(ax[1]) - math.sqrt(0.5)) <= 1e-16 and abs(sum(float(a) ** 2 for a in ax) - 1) <= 1e-15


def test_joint_types_limits_dynamics_and_massless_links():
    m = load(chain()).model
    # depth-first, children by joint name ("fix" leads to j2, before "j3"), as Pinocchio
    assert m.joint_names == ("j1", "j2", "j3") == tuple(pin.buildModelFromXML(chain()).names[1:])
    a, c2, c = m.frame("a"), m.frame("c2"), m.frame("c")
    assert (a.type, c2.type, c.type) == ("revolute", "revolute", "prismatic")
    assert (a.parent, c2.parent, c.parent) == ("0", "a", "a")  # b merged into a
    assert a.limits == Limits(-1.0, 2.0, 3.0, 4.0)
    assert c2.limits == Limits(None, None, 6.0, 5.0)  # continuous: no position limits
    v = dict(zip(m.param_names, load(chain()).values))
    assert (v["Fv_c"], v["Fc_c"], v["Ia_c"], v["Fv_a"]) == (0.7, 0.2, 0.0, 0.0)
    assert v["g"] == 9.81 and m.gravity == (0, 0, -1)
    assert all(v[f"{n}_c2"] == 0.0 for n in ("m", "MX", "XX", "ZZ"))  # no <inertial>: massless
    assert v["m_a"] == 1.5 and v["m_c"] == 1.25  # a + merged b; c + merged d
    assert m.geometry == ()


def test_default_axis_and_origin_from_spec():
    text = robot(link("base"), link("a"),
                 '<joint name="j" type="revolute"><parent link="base"/><child link="a"/></joint>')
    f = load(text).model.frame("a")
    assert f.axis == (1, 0, 0) and f.origin == (0, 0, 0) and f.rotation == sp.eye(3) and f.limits is None


@pytest.mark.parametrize("snap", [False, True])
def test_merging_inertial_rpy_and_end_effectors_match_pinocchio(tmp_path, snap):
    """Fixed-link merging (inertia lumped), inertial origins with rpy, continuous
    and prismatic joints and end effectors on merged links: Pinocchio's parser
    merges fixed links itself, so (a) == (b) checks the lumping exactly."""
    p = write(tmp_path, chain())
    r = load_urdf(p, end_effectors=["d", "b", "c2", "a"], snap=snap)
    d = r.model.end_effector("d")
    assert d.frame == "c" and d.origin[2] == sp.Float(0.2, precision=53)
    assert r.model.end_effector("a").origin == (0, 0, 0) and r.model.end_effector("a").rotation == sp.eye(3)
    errs = compare_urdf(p, r, n_states=10)
    assert max(errs.values()) <= 1e-12, errs


def test_end_effector_errors(tmp_path):
    text = robot(link("world"), link("base"), link("a"),
                 joint("w", "world", "base", type="fixed", axis=None, extra=""), joint("j", "base", "a"))
    with pytest.raises(ModelError, match="'base'.*does not move"):
        load(text, end_effectors=["base"])
    with pytest.raises(ModelError, match="'nope'.*no such link") as exc:
        load(text, end_effectors=["nope"])
    assert "did you mean" not in str(exc.value)  # nothing close
    with pytest.raises(ModelError, match=r"'bsae'.*no such link in the URDF \(did you mean 'base'\?\)"):
        load(text, end_effectors=["bsae"])
    with pytest.raises(ModelError, match="twice"):
        load(text, end_effectors=["a", "a"])


def test_model_name_default_and_override():
    text = chain().replace('name="tiny"', 'name="my-robot 2"')
    assert load(text).model.name == "my_robot_2"
    assert load(chain().replace('name="tiny"', 'name="2d"')).model.name == "robot_2d"
    assert load(chain(), name="arm7").model.name == "arm7"
    for bad in ("bad name", "int", "x" * 65, "", "a\n"):
        with pytest.raises(ModelError, match="model name"):
            load(chain(), name=bad)


def test_toml_round_trip(tmp_path):
    _reload(tmp_path, load_urdf(write(tmp_path, chain()), end_effectors=["d", "b"]))


def test_toml_escapes_hostile_names():
    name = 'a "quoted" \\ näme ✓'
    x = html.escape(name, quote=True)
    text = robot(link("base"), link(x), joint(x + "j", "base", x))
    r = load(text)
    assert r.model.frames[0].key == name and r.model.joint_names == (name + "j",)
    mt, pt = r.to_toml()
    assert tomllib.loads(mt)["frame"][0]["key"] == name
    assert f"m_{name}" in tomllib.loads(pt)["values"]


# ---------------------------------------------------------------- errors

def _err(text, match, **kw):
    with pytest.raises(ModelError, match=match):
        load(text, **kw)


@pytest.mark.parametrize("jtype", ["floating", "planar"])
def test_floating_and_planar_refused_naming_the_joint(jtype):
    text = robot(link("base"), link("a"), joint("hip", "base", "a", type=jtype))
    _err(text, f"joint 'hip'.*{jtype}")


def test_tree_errors():
    L = [link(n) for n in ("base", "a", "b")]
    _err(robot(*L, joint("j1", "base", "a"), joint("j2", "a", "b"), joint("j3", "b", "a")), "two parents")
    _err(robot(*L, joint("j1", "base", "a")), "2 root links")  # b is a second root
    _err(robot(*L, joint("j1", "base", "a"), joint("j2", "ghost", "b")), "joint 'j2'.*'ghost' is not defined")
    cyc = robot(link("base"), link("a"), link("b"), link("c"), joint("j1", "base", "a"),
                joint("j2", "b", "c"), joint("j3", "c", "b"))
    _err(cyc, "cycle")
    _err(robot(link("a"), link("b"), joint("j1", "a", "b"), joint("j2", "b", "a")), "no root link")
    _err(robot(*L, joint("j1", "base", "a"), joint("j1", "a", "b")), "two <joint> elements named 'j1'")
    _err(robot(link("base"), link("base")), "two <link> elements named 'base'")
    _err(robot(link("base"), link("a"), joint("j", "base", "a", type="fixed")), "no moving joint")
    _err(robot(), "no <link>")
    _err(robot(link("base"), link("a"), joint("j", "base", "a", type="ball")), "joint 'j': unknown type 'ball'")


@pytest.mark.parametrize("bad", ["nan", "1e400", "0x10", "1_000", "inf", "-inf", "1,5", "١", "1e", "--1", ""])
def test_bad_numbers(bad):
    text = robot(link("base"), link("a"), joint("j", "base", "a", xyz=f"0 {bad} 0"))
    _err(text, r"joint 'j' <origin xyz>")


@pytest.mark.parametrize("where, text", [
    ("<mass value>", link("a", m="nan")),
    ("<mass value>: negative", link("a", m="-1")),
    ("<inertia ixy>", '<link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0x1" ixz="0" '
                      'iyy="1" iyz="0" izz="1"/></inertial></link>'),
    ("missing attribute 'izz'", '<link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" '
                                'ixz="0" iyy="1" iyz="0"/></inertial></link>'),
    ("needs <mass> and <inertia>", '<link name="a"><inertial><mass value="1"/></inertial></link>'),
])
def test_bad_inertials(where, text):
    _err(robot(link("base"), text, joint("j", "base", "a")), f"link 'a'.*{where}")


def test_bad_limits_and_dynamics():
    base = [link("base"), link("a")]
    _err(robot(*base, joint("j", "base", "a", extra='<limit lower="1" upper="0" effort="1" velocity="1"/>')),
         "joint 'j' <limit>: lower")
    _err(robot(*base, joint("j", "base", "a", extra='<limit lower="nan" effort="1" velocity="1"/>')),
         "joint 'j' <limit lower>")
    _err(robot(*base, joint("j", "base", "a", extra='<dynamics damping="1e400"/>')), "joint 'j' <dynamics damping>")
    _err(robot(*base, joint("j", "base", "a", axis="0 0 0")), "joint 'j' <axis xyz>.*zero length")
    # "no limit" written as a huge number is accepted as metadata
    r = load(robot(*base, joint("j", "base", "a", extra='<limit lower="-1e16" upper="1e16" effort="1" velocity="1"/>')))
    assert r.model.frame("a").limits.lower == -1e16


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<robot name="&lol3;"><link name="base"/></robot>"""
EXTERNAL = """<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><robot name="&x;"><link name="base"/></robot>"""
DTD_ONLY = """<?xml version="1.0"?><!DOCTYPE robot><robot name="r"><link name="base"/></robot>"""


@pytest.mark.parametrize("text", [BILLION_LAUGHS, EXTERNAL, DTD_ONLY])
def test_dtd_and_entities_refused(text):
    _err(text, "DTDs, entities and external references are not allowed")


def test_malformed_xml_and_wrong_root():
    _err("<robot><link name='a'>", "not well-formed XML")
    _err("<rob name='x'/>", "root element is <rob>")


def test_file_checks(tmp_path):
    big = tmp_path / "big.urdf"
    with open(big, "wb") as fh:
        fh.write(chain().encode())
        fh.write(b" " * (urdf_parse.MAX_BYTES + 1))
    with pytest.raises(ModelError, match="larger than"):
        load_urdf(big)
    with pytest.raises(ModelError, match="not a regular file"):
        load_urdf(tmp_path)
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo.urdf"
        os.mkfifo(fifo)
        with pytest.raises(ModelError, match="not a regular file"):  # and does not block
            load_urdf(fifo)
    with pytest.raises(ModelError, match="cannot read URDF .*missing.urdf"):
        load_urdf(tmp_path / "missing.urdf")


def test_too_many_links():
    n = urdf_parse.MAX_ELEMENTS + 1
    _err(robot(*(f'<link name="l{i}"/>' for i in range(n))), f"more than {urdf_parse.MAX_ELEMENTS} <link>")


@pytest.mark.parametrize("attr, ok", [
    ("quote&quot;s", True), ("it's", True), ("ünïcødé-名前", True), ("a/b.c d &lt;x&gt;", True),
    ("new&#10;line", False), ("tab&#9;", False), ("x" * 65, False), ("", False), ("0", False),
    ("bom&#xFEFF;", False),
])
def test_hostile_names_verbatim_or_refused(attr, ok):
    """attr is the XML attribute text; the name is what it means."""
    name = html.unescape(attr)
    text = robot(link("base"), f'<link name="{attr}"/>',
                 f'<joint name="{attr}J" type="revolute"><parent link="base"/><child link="{attr}"/></joint>')
    if ok:
        r = load(text, end_effectors=[name])
        f = r.model.frames[0]
        assert (f.key, f.joint, r.model.end_effectors[0].name) == (name, name + "J", name)
    else:
        with pytest.raises(ModelError, match="name"):
            load(text)


# ---------------------------------------------------------------- the model files' bounds

def _chain_urdf(n_moving: int) -> str:
    links = [link(f"l{i}", m=None) for i in range(n_moving + 1)]
    joints = [joint(f"j{i}", f"l{i - 1}", f"l{i}", extra="") for i in range(1, n_moving + 1)]
    return robot(*links, *joints)


def test_dof_cap_is_the_model_readers_and_comes_first(monkeypatch):
    from codegen.read import model as mdl, urdf as urdf_mod

    assert load(_chain_urdf(mdl.MAX_DOF)).model.ndof == mdl.MAX_DOF
    # refused while counting, before a single <link> or <joint> is read
    monkeypatch.setattr(urdf_parse, "_link", lambda el: pytest.fail("read a link"))
    _err(_chain_urdf(mdl.MAX_DOF + 1), f"more than {mdl.MAX_DOF} moving joints \\(the limit is {mdl.MAX_DOF}")
    monkeypatch.setattr(urdf_mod, "parse_urdf", lambda *a: pytest.fail("parsed the URDF"))
    ees = [f"l{i}" for i in range(mdl.MAX_END_EFFECTORS + 1)]
    _err(_chain_urdf(3), f"{mdl.MAX_END_EFFECTORS + 1} end effectors \\(the limit is {mdl.MAX_END_EFFECTORS}\\)",
         end_effectors=ees)


def test_element_and_number_bounds_are_the_model_files():
    from codegen.read import expr, model_fields
    assert urdf_parse.MAX_NAME == model_fields.MAX_NAME
    big = f"0 {expr.MAX_MAGNITUDE * 2:g} 0"
    _err(robot(link("base"), link("a"), joint("j", "base", "a", xyz=big)), "joint 'j' <origin xyz>.*out of range")
    # two in-range placements that compose beyond the bound
    edge = f"{expr.MAX_MAGNITUDE:g} 0 0"
    text = robot(link("base"), link("a"), link("b"), joint("f", "base", "a", type="fixed", xyz=edge, rpy="0 0 0",
                                                              axis=None, extra=""),
                 joint("j", "a", "b", xyz=edge, rpy="0 0 0"))
    _err(text, "joint 'j': the origin .* beyond 1e\\+12")


@pytest.mark.parametrize("name", [" lead", "trail ", "\u00a0nbsp", "tab\t"])
def test_names_with_surrounding_whitespace_refused_like_model_files(name):
    attr = html.escape(name, quote=True).replace("\t", "&#9;")
    _err(robot(link("base"), f'<link name="{attr}"/>', joint("j", "base", attr)), "name")


# one moving link 'a' (mass 1 at the origin, inertia ixx iyy izz, diagonal) on joint 'j'
def _one_link(ixx="0.3", iyy="0.25", izz="0.2", mass="1", dynamics=""):
    inertial = (f'<inertial><mass value="{mass}"/><inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" '
                f'izz="{izz}"/></inertial>')
    return robot(link("base"), f'<link name="a">{inertial}</link>', joint("j", "base", "a", extra=dynamics))


PHYSICAL = {
    "negative inertia": (_one_link(ixx="-0.3"), "not positive semidefinite"),
    "triangle inequality": (_one_link(ixx="0.1", iyy="0.1", izz="0.3"), "triangle inequality"),
    "zero mass, nonzero inertia": (_one_link(mass="0"), "mass is 0"),
    "negative damping": (_one_link(dynamics='<dynamics damping="-0.5"/>'), "viscous friction Fv_a"),
    "negative friction": (_one_link(dynamics='<dynamics friction="-0.5"/>'), "Coulomb friction Fc_a"),
}


@pytest.mark.parametrize("case", sorted(PHYSICAL))
def test_physically_impossible_urdf_refused_as_by_the_model_reader(tmp_path, monkeypatch, case):
    from codegen.read import urdf as urdf_mod

    text, words = PHYSICAL[case]
    with pytest.raises(ModelError, match="physically impossible parameters") as urdf_err:
        load(text)
    assert words in str(urdf_err.value)
    # the same robot as model + parameter files (the URDF reader's checks switched off to write them):
    # the model reader refuses it with the same words
    monkeypatch.setattr(urdf_mod, "check_params", lambda *a: None)
    mt, pt = load(text).to_toml()
    (tmp_path / "m.toml").write_text(mt)
    (tmp_path / "p.toml").write_text(pt)
    with pytest.raises(ModelError, match="physically impossible parameters") as model_err:
        load_param_values(tmp_path / "p.toml", load_model(tmp_path / "m.toml"))
    assert str(model_err.value).split("parameters: ", 1)[1] == str(urdf_err.value).split("parameters: ", 1)[1]


def _reload(tmp_path, r):
    """to_toml() written and read back by the model reader; asserts it is the same robot."""
    from codegen.read.physical import check_params

    mt, pt = r.to_toml()
    (tmp_path / "m.toml").write_text(mt, encoding="utf-8")
    (tmp_path / "p.toml").write_text(pt, encoding="utf-8")
    m2 = load_model(tmp_path / "m.toml")
    values = tuple(load_param_values(tmp_path / "p.toml", m2))
    assert values == r.values
    check_params(m2.param_names, values)
    m = r.model
    assert (m2.name, m2.geometry, m2.gravity, m2.end_effectors, m2.sha256) == (
        m.name, m.geometry, m.gravity, m.end_effectors, m.sha256)
    for f, g in zip(m.frames, m2.frames, strict=True):
        assert (f.key, f.parent, f.joint, f.type, f.axis, f.rotation, f.index, f.limits) == (
            g.key, g.parent, g.joint, g.type, g.axis, g.rotation, g.index, g.limits)
        assert [float(o) for o in f.origin] == [float(o) for o in g.origin]


TEST_URDFS = ["hostile_names.urdf", "merge_fixed.urdf"]


@pytest.mark.parametrize("snap", [True, False])
@pytest.mark.parametrize("urdf", TEST_URDFS)
def test_emit_model_reloads_for_the_test_urdfs(tmp_path, urdf, snap):
    path = os.path.join(os.path.dirname(__file__), "models", urdf)
    _reload(tmp_path, load_urdf(path, snap=snap))


@pytest.mark.parametrize("rel", ["talos_data/robots/talos_reduced.urdf", "tiago_description/robots/tiago.urdf",
                                 "icub_description/robots/icub_reduced.urdf"])
def test_emit_model_reloads_with_rounding_residues_of_no_snap(tmp_path, rel):
    from reference.robot_data import MIMIC, robots_dir
    r = load_urdf(robots_dir() / rel, snap=False, mimic=MIMIC)  # Talos's mimic fingers
    tiny = [o for f in r.model.frames for o in f.origin if o != 0 and abs(float(o)) < 1e-12]
    assert tiny, "these robots have origin entries below the literal bound with snap=False"
    _reload(tmp_path, r)


# hostile variants: each either refused by the URDF reader or reloaded by the model reader
HOSTILE_VARIANTS = {
    "tiny origin": (joint("j", "base", "a", xyz="1e-13 -3e-200 0.1", rpy="0 0 0"), None),
    "subnormal origin": (joint("j", "base", "a", xyz="5e-324 0 0.1", rpy="0 0 0"), None),
    "origin at the bound": (joint("j", "base", "a", xyz="1e12 -1e12 0", rpy="0 0 0"), None),
    "origin beyond the bound": (joint("j", "base", "a", xyz="1.5e12 0 0", rpy="0 0 0"), "out of range"),
    "name with spaces": (joint(" j ", "base", "a"), "whitespace"),
    "quotes and backslashes": (joint("q\\&quot;\\&quot;&quot;&quot;'''#", "base", "a"), None),
    "unicode": (joint("ünï ✓ 名前", "base", "a"), None),
    "huge limits": (joint("j", "base", "a", extra='<limit lower="-1e300" upper="1e300" effort="0" velocity="0"/>'),
                    None),
}


@pytest.mark.parametrize("snap", [True, False])
@pytest.mark.parametrize("case", sorted(HOSTILE_VARIANTS))
def test_emit_model_reloads_or_the_urdf_is_refused(tmp_path, case, snap):
    j, refused = HOSTILE_VARIANTS[case]
    text = robot(link("base"), link("a"), j)
    if refused:
        _err(text, refused, snap=snap)
    else:
        _reload(tmp_path, load(text, snap=snap, end_effectors=["a"]))


@pytest.mark.parametrize("encoding", ["UTF-7", "UTF-32", "shift_jis", "no-such-encoding"])
def test_xml_declaration_with_an_unreadable_encoding_is_bad_input(encoding):
    text = robot(link("base"), link("a"), joint("j", "base", "a")).replace(
        '<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{encoding}"?>')
    _err(text, "encoding")


# ---------------------------------------------------------------- mimic joints (issue #38)

def gripper(mimic='<mimic joint="finger_joint1" multiplier="-1" offset="0.01"/>', fixed_mimic=""):
    """An arm joint and two prismatic fingers, the second mimicking the first (Panda's hand)."""
    limit = '<limit lower="0" upper="0.04" velocity="0.2" effort="20"/>'
    return robot(
        link("base"), link("hand"), link("left"), link("right"), link("camera"),
        joint("arm", "base", "hand"),
        joint("finger_joint1", "hand", "left", type="prismatic", axis="0 1 0", extra=limit),
        joint("finger_joint2", "hand", "right", type="prismatic", axis="0 -1 0", extra=limit + mimic),
        joint("camera_joint", "hand", "camera", type="fixed", axis=None, extra=fixed_mimic))


def _one_line(exc_info) -> str:
    text = str(exc_info.value)
    assert "\n" not in text, text
    return text


def test_mimic_joint_refused_by_default_in_one_line_naming_joint_master_and_option():
    with pytest.raises(ModelError) as exc:
        urdf_robot(gripper().encode(), source="'gripper.urdf'")
    text = _one_line(exc)
    assert text.startswith("'gripper.urdf': ")
    for part in ("'finger_joint2' (mimics 'finger_joint1')", "--mimic independent", 'mimic="independent"',
                 "independent coordinate", "mimic=False"):
        assert part in text, (part, text)
    with pytest.raises(ModelError, match="finger_joint2"):  # the explicit default, and load_urdf's
        load(gripper(), mimic="refuse")


def test_mimic_independent_reads_each_as_a_coordinate_as_pinocchio_and_the_summary_says_so():
    from codegen.read.urdf_summary import summary_line

    r = load(gripper(), mimic="independent")
    assert r.model.joint_names == ("arm", "finger_joint1", "finger_joint2")
    pm = pin.buildModelFromXML(gripper())  # Pinocchio's default mimic=False: the same coordinates
    assert tuple(pm.names[1:]) == r.model.joint_names and pm.nv == r.model.ndof == 3
    assert r.mimic == (("finger_joint2", "finger_joint1"),) and r.warnings == ()
    line = summary_line(r.model, r.values, "gripper_kernels", True, None, r.mimic)
    assert ("; mimic joints as independent coordinates (--mimic independent, Pinocchio's mimic=False): "
            "finger_joint2 (mimics finger_joint1)") in line and "\n" not in line
    plain = load(gripper(mimic=""))  # no mimic: the default reads it, the line says nothing of mimics
    assert plain.mimic == () and "mimic" not in summary_line(plain.model, plain.values, "g_kernels", True, None)
    # the coordinates are those of the URDF without <mimic>: only the summary differs
    assert r.model.joint_names == plain.model.joint_names and r.values == plain.values


def test_mimic_on_a_fixed_joint_moves_nothing_and_is_ignored():
    r = load(gripper(mimic="", fixed_mimic='<mimic joint="arm"/>'))
    assert r.mimic == () and r.model.ndof == 3


def test_many_mimic_joints_are_named_up_to_a_bound():
    fingers = [link(f"f{i}") for i in range(9)]
    joints = [joint(f"m{i}", "hand", f"f{i}", extra='<mimic joint="arm"/>') for i in range(9)]
    text = robot(link("base"), link("hand"), joint("arm", "base", "hand"), *fingers, *joints)
    with pytest.raises(ModelError) as exc:
        load(text)
    msg = _one_line(exc)
    assert "9 mimic joint(s)" in msg and "'m5' (mimics 'arm')" in msg and "'m6'" not in msg and "3 more" in msg
    assert len(load(text, mimic="independent").mimic) == 9


@pytest.mark.parametrize("mimic, match", [
    ('<mimic joint="finger_joint1" multiplier="nan"/>', r"joint 'finger_joint2' <mimic multiplier>"),
    ('<mimic joint="finger_joint1" multiplier="inf"/>', r"joint 'finger_joint2' <mimic multiplier>"),
    ('<mimic joint="finger_joint1" multiplier="1e400"/>', r"joint 'finger_joint2' <mimic multiplier>"),
    ('<mimic joint="finger_joint1" offset="0x1"/>', r"joint 'finger_joint2' <mimic offset>"),
    ('<mimic joint="finger_joint1" offset="1 2"/>', r"joint 'finger_joint2' <mimic offset>"),
    ('<mimic multiplier="2"/>', r"joint 'finger_joint2' <mimic joint>: missing or empty name"),
    ('<mimic joint=" finger_joint1"/>', r"joint 'finger_joint2' <mimic joint>"),
    (f'<mimic joint="{"x" * 300}"/>', r"joint 'finger_joint2' <mimic joint>"),
])
@pytest.mark.parametrize("mode", ["refuse", "independent"])
def test_hostile_mimic_is_one_error_line_whatever_the_option(mimic, match, mode):
    with pytest.raises(ModelError, match=match) as exc:
        load(gripper(mimic=mimic), mimic=mode)
    _one_line(exc)


@pytest.mark.parametrize("master, said", [("nope", "'nope', not a joint of the URDF"), ("finger_joint2", "itself")])
def test_mimic_of_an_unknown_joint_or_itself_is_named(master, said):
    text = gripper(mimic=f'<mimic joint="{master}"/>')
    with pytest.raises(ModelError) as exc:
        load(text)
    assert f"'finger_joint2' (mimics {said})" in _one_line(exc)
    # independent: the coupling is not modelled anyway, so the URDF reads (as Pinocchio's
    # mimic=False reads it), with a warning naming the joint
    r = load(text, mimic="independent")
    assert r.model.ndof == 3 and len(r.warnings) == 1 and f"'finger_joint2' (mimics {said})" in r.warnings[0]


def test_mimic_option_values_flag_and_cache_key():
    from codegen.cli import _options, parser
    from codegen.support.options import UrdfOptions

    assert UrdfOptions().mimic == "refuse"
    assert UrdfOptions().key()["mimic"] == "refuse"
    assert UrdfOptions(mimic="independent").key() != UrdfOptions().key()  # another module cache entry
    with pytest.raises(ValueError, match="mimic"):
        UrdfOptions(mimic="modelled")
    with pytest.raises(ModelError, match="mimic: one of"):
        load(gripper(), mimic="ignore")
    assert _options(parser().parse_args(["r.urdf"]), UrdfOptions).mimic == "refuse"
    args = parser().parse_args(["r.urdf", "--mimic", "independent"])
    assert _options(args, UrdfOptions) == UrdfOptions(mimic="independent")
    assert "--mimic" in parser().format_help()


def test_contacts_are_operational_frames_with_a_kind(tmp_path):
    """--contact LINK[:3d|6d]: a Contact record at the link (merged links included), its rows,
    and the model file it writes (--emit-model) reads back the same contacts."""
    from codegen.read.model import parse_model
    r = load(chain(), contacts=[("d", "3d"), ("b", "6d")], end_effectors=["d"])
    d, b = r.model.contacts
    assert (d.name, d.frame, d.kind, d.rows) == ("d", "c", "3d", 3)
    assert (b.name, b.frame, b.kind, b.rows) == ("b", "a", "6d", 6) and b.rotation != sp.eye(3)
    assert d.origin == r.model.end_effector("d").origin and r.model.contact_rows == 9
    assert r.model.contact_names == ("d", "b")
    back = parse_model(r.to_toml()[0])
    assert back.contacts == r.model.contacts


def test_contact_errors(tmp_path):
    text = robot(link("world"), link("base"), link("a"),
                 joint("w", "world", "base", type="fixed", axis=None, extra=""), joint("j", "base", "a"))
    with pytest.raises(ModelError, match="contact 'base'.*does not move"):
        load(text, contacts=[("base", "3d")])
    with pytest.raises(ModelError, match=r"contact 'aa'.*no such link in the URDF \(did you mean 'a'\?\)"):
        load(text, contacts=[("aa", "3d")])
    with pytest.raises(ModelError, match="contact 'a' is given twice"):
        load(text, contacts=[("a", "3d"), ("a", "6d")])
    with pytest.raises(ModelError, match="'3d' or '6d'"):
        load(text, contacts=[("a", "2d")])
    with pytest.raises(ModelError, match="17 contacts"):
        load(text, contacts=[("a", "3d")] * 17)


def test_contact_specs_of_the_options():
    from codegen.support.options import UrdfOptions, contact_pairs
    o = UrdfOptions(contacts=["foot", "sole:6d", ("hand", "3d"), "x:y:6D"])
    assert o.contacts == ("foot:3d", "sole:6d", "hand:3d", "x:y:6d")
    assert contact_pairs(o.contacts) == (("foot", "3d"), ("sole", "6d"), ("hand", "3d"), ("x:y", "6d"))
    with pytest.raises(TypeError):
        UrdfOptions(contacts="foot")
    with pytest.raises(ValueError):
        UrdfOptions(contacts=[":6d"])


MODEL_WITH_CONTACT = """
name = "hop"
[[frame]]
key = "1"
parent = "0"
joint = "q1"
type = "revolute"
axis = [0, 0, 1]
rotation = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
origin = [0, 0, 0]
[[contact]]
name = "toe"
frame = "1"
origin = [0.1, 0, 0]
"""


@pytest.mark.parametrize("extra, message", [
    ('type = "4d"\n', "type '4d' is not one of 3d, 6d"),
    ('color = 1\n', "unknown field"),
])
def test_model_file_contacts(extra, message):
    from codegen.read.model import parse_model
    m = parse_model(MODEL_WITH_CONTACT)
    assert [(c.name, c.kind, c.frame) for c in m.contacts] == [("toe", "3d", "1")]
    with pytest.raises(ModelError, match=message):
        parse_model(MODEL_WITH_CONTACT + extra)
    with pytest.raises(ModelError, match="unknown frame"):
        parse_model(MODEL_WITH_CONTACT.replace('frame = "1"', 'frame = "7"'))
    with pytest.raises(ModelError, match="contact names must be unique"):
        parse_model(MODEL_WITH_CONTACT + MODEL_WITH_CONTACT[MODEL_WITH_CONTACT.index("[[contact]]"):])
