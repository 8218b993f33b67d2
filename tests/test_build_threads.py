"""Two threads of one process calling codegen.import_urdf at once: one build (the
process-wide build lock), both get the same module, and the host's output survives:
fds 1 and 2 name what they did, sys.stdout is the same object and still prints, and
a host thread's lines are not swallowed by the build's capture (codegen/build/log.py)."""
from __future__ import annotations

import os
import sys
import threading

import pytest

pytestmark = pytest.mark.builds

# One revolute joint: the smallest robot that builds a whole module.
URDF = """<?xml version="1.0"?>
<robot name="one_joint">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.1 0 0"/><mass value="1.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="5" velocity="2"/></joint>
</robot>
"""


def test_two_threads_import_at_once_and_the_hosts_output_survives(tmp_path, monkeypatch, capfd):
    import codegen
    import codegen.urdf

    monkeypatch.setenv("KRANG_KERNELS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(codegen.urdf, "_IMPORTED", {})
    urdf = tmp_path / "one_joint.urdf"
    urdf.write_text(URDF)
    before = [os.fstat(fd) for fd in (1, 2)]
    stdout, stderr = sys.stdout, sys.stderr
    results, errors = [None, None], []
    building = threading.Event()
    stop = threading.Event()

    def call(i):
        try:
            building.set()
            results[i] = codegen.import_urdf(urdf, end_effectors=["arm"], kernels=(), quiet=True)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def host():  # a thread of the host that prints while the build runs
        building.wait()
        n = 0
        while not stop.is_set() and n < 200:
            print(f"host line {n}", flush=True)
            n += 1
            stop.wait(0.05)

    threads = [threading.Thread(target=call, args=(i,)) for i in (0, 1)]
    chatter = threading.Thread(target=host)
    chatter.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(1800)
    stop.set()
    chatter.join(30)
    assert not errors, errors
    assert results[0] is results[1] and results[0].N_DOF == 1
    assert [(s.st_dev, s.st_ino) for s in map(os.fstat, (1, 2))] == [(s.st_dev, s.st_ino) for s in before]
    assert sys.stdout is stdout and sys.stderr is stderr
    print("after the build")
    out = capfd.readouterr().out
    assert "after the build" in out and "host line 0" in out and "host line 1" in out
    entries = [p for p in (tmp_path / "cache" / "v1").iterdir() if not p.name.endswith(".lock")]
    assert len(entries) == 1  # built once
