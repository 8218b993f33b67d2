# krang-kernels. `make` sets up, generates, builds and runs the demo;
# `make test` runs the fast tiers of the test suite, `make test-all` all of it. See README.md.
#
# Everything runs in a virtual environment, .venv, created on first use from
# $(BOOTSTRAP) (Debian's system pip refuses to install: PEP 668). To use
# another environment instead, activate it and pass PYTHON=python.
BOOTSTRAP ?= python3
VENV   := .venv
PYTHON ?= $(VENV)/bin/python
MODEL  := models/krang.toml
PARAMS := models/krang_params.toml
STAMP  := build/.installed
GEN    := build/.generated

.PHONY: all setup generate build demo examples test test-all test-rest docs check-generated emulator bench bench-robots bench-crocoddyl clean distclean

all: $(GEN) demo

$(VENV)/bin/python:
	$(BOOTSTRAP) -m venv $(VENV)

# Build tools first (the extension is built without isolation, against them),
# then the package in editable mode with the generator and test dependencies.
$(STAMP): pyproject.toml setup.py $(filter $(VENV)/bin/python,$(PYTHON))
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q "cython>=3.0" "numpy>=1.25" "setuptools>=77"
	$(PYTHON) -m pip install -q --no-build-isolation -e ".[test]"
	@mkdir -p build && touch $(STAMP)
	@# the editable install compiled the extension in place: `make build` need not compile it again
	@if ls krang_kernels/_kernels*.so >/dev/null 2>&1; then touch $(EXT); fi

setup: $(STAMP)

# Derivation -> CSE -> C sources from templates, then rebuild the extension. `make` regenerates
# only when the model or the generator changed (the stamp build/.generated, on the real inputs),
# and replaces only the files whose bytes changed, so that an unchanged source does not rebuild the
# extension; `make generate` always runs the generator.
GEN_INPUTS := $(MODEL) $(PARAMS) $(shell find codegen templates -type f \( -name '*.py' -o -name '*.j2' \
	-o -name '*.pxi' \) -not -path '*/__pycache__/*' 2>/dev/null)
GEN_OUT := generated/krang_kernels.c generated/krang_kernels.h krang_kernels/_kernels.pyx \
	krang_kernels/_kernels.pyi krang_kernels/_kernels_parts.json

$(GEN): $(STAMP) $(GEN_INPUTS)
	rm -rf build/regen build/regen-module && $(PYTHON) -m codegen $(MODEL) $(PARAMS) --out build/regen \
		--module-source build/regen-module --module _kernels
	@for f in $(GEN_OUT); do \
		case $$f in generated/*) new=build/regen/$${f#generated/};; *) new=build/regen-module/$${f#krang_kernels/};; esac; \
		cmp -s $$new $$f || { cp $$new $$f && echo "updated $$f"; }; \
	done
	@touch $(GEN)

generate: $(STAMP)
	rm -f $(GEN)
	$(MAKE) $(GEN) build

EXT := build/.extension
$(EXT): $(STAMP) setup.py krang_kernels/_kernels.pyx krang_kernels/_kernels_parts.json $(wildcard generated/*.c generated/*.h)
	$(PYTHON) setup.py -q build_ext --inplace --force
	@touch $(EXT)

build: $(EXT)

demo: build
	$(PYTHON) -m examples.demo

# The example controllers, the free-flying quadruped (examples/floating_base.py: Solo12 from
# example-robot-data, built on first use), iLQR on Panda (examples/ilqr.py, the derivative
# kernels), Talos pushed while standing (examples/humanoid_push.py, the contact kernels) and
# Solo12 trotting, Crocoddyl's gait problem by iLQR on the contact kernels' derivatives and on
# Pinocchio's (examples/quadruped_mpc.py), in full (tests/test_examples.py runs them short); then, where
# `make crocoddyl-env` made its environment, the same gait by Crocoddyl's own FDDP on the contact kernels
# (examples/crocoddyl_quadruped.py).
examples: build
	$(PYTHON) -m examples.computed_torque
	$(PYTHON) -m examples.task_space
	$(PYTHON) -m examples.identify
	$(PYTHON) -m examples.floating_base
	$(PYTHON) -m examples.ilqr
	$(PYTHON) -m examples.humanoid_push
	$(PYTHON) -m examples.quadruped_mpc
	$(PYTHON) -m examples.jax_sysid
	$(PYTHON) -m examples.casadi_trajopt
	@if [ -x $(CROC_VENV)/bin/python ]; then $(CROC_VENV)/bin/python -m examples.crocoddyl_quadruped; \
		else echo "no $(CROC_VENV) (make crocoddyl-env): examples/crocoddyl_quadruped.py skipped"; fi
	@mkdir -p build/examples
	$(CC) -O2 -std=c99 -I generated examples/c_controller/main.c generated/krang_kernels.c -lm \
		-o build/examples/c_controller
	build/examples/c_controller

# The tests come in tiers (pyproject.toml's markers, README's "Tests"): `make test` runs the fast
# ones (unit, module, builds), `make test-rest` the full robots and the system tests (packaging,
# examples, sanitizers, emulators), `make test-all` both in one run. PYTEST_ARGS passes options,
# e.g. PYTEST_ARGS="-x tests/test_rnea.py".
# One worker per CPU (pytest-xdist), each test file on one worker so that its module-scoped
# builds happen once: the fast tiers in about half the wall time on two cores. The robots and
# system tiers run in one process: their tests compile on every CPU themselves (a file per
# worker saved little: docs/design-notes.md#test-tiers-in-ci).
XDIST := -n auto --dist loadfile

test: build
	$(PYTHON) -m pytest -q $(XDIST) -m "not robots and not system" $(PYTEST_ARGS)

test-rest: build
	$(PYTHON) -m pytest -q --durations=25 -m "robots or system" $(PYTEST_ARGS)

test-all: build
	$(PYTHON) -m pytest -q $(PYTEST_ARGS)

# The documentation (docs/*.md and the API reference from the docstrings and the generated stubs)
# into build/site (the [docs] extra of pyproject.toml, installed once); strict: a warning (broken link, docstring that does not parse) fails it.
DOCS_STAMP := build/.docs-installed
$(DOCS_STAMP): $(STAMP) pyproject.toml
	$(PYTHON) -c "import tomllib, subprocess, sys; extra = tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['docs']; subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', *extra], check=True)"
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(PYTHON) -m mkdocs build --strict --quiet
	@echo "docs: build/site/index.html"

# Crocoddyl's own solver on the contact kernels (examples/crocoddyl_quadruped.py) runs in an environment of its
# own, .venv-crocoddyl: crocoddyl 3.2.1 needs libpinocchio 4.0.0, .venv has pin 4.1.0 (pyproject.toml's
# [crocoddyl] extra holds the pins and says why). Not the package: its requirements (the extra, its
# krang-kernels[...] references expanded); the example runs from the checkout (python -m), where codegen
# builds Solo12's module on first use.
CROC_VENV  := .venv-crocoddyl
CROC_STAMP := build/.crocoddyl-env
$(CROC_STAMP): pyproject.toml
	rm -rf $(CROC_VENV) && $(BOOTSTRAP) -m venv $(CROC_VENV)
	$(CROC_VENV)/bin/python -m pip install -q --upgrade pip
	$(CROC_VENV)/bin/python -c "import tomllib, re, subprocess, sys; extras = tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']; \
		expand = lambda name: [r for e in extras[name] for r in (expand(re.search(r'\[(.*)\]', e).group(1)) if e.startswith('krang-kernels[') else [e])]; \
		subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', *expand('crocoddyl')], check=True)"
	@mkdir -p build && touch $(CROC_STAMP)

.PHONY: crocoddyl-env
crocoddyl-env: $(CROC_STAMP)

# Lint: ruff with the configuration in pyproject.toml ([tool.ruff]); ruff is in the [test] extra.
.PHONY: lint
lint: $(STAMP)
	$(PYTHON) -m ruff check .

# Optional: qemu-user and an aarch64 cross compiler, so that tests/test_baseline_cpu.py runs
# the module on an emulated CPU without AVX and tests/test_cross_aarch64.py runs the C on
# aarch64 (Debian/Ubuntu, as root; both tests are skipped without them).
EMULATOR_PKGS := qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
emulator:
	(command -v qemu-x86_64 && command -v aarch64-linux-gnu-gcc) >/dev/null \
		|| apt-get install -y -q $(EMULATOR_PKGS) >/dev/null \
		|| (apt-get update -q >/dev/null && apt-get install -y -q $(EMULATOR_PKGS) >/dev/null)

# generated/ must be exactly what the generator writes.
check-generated: $(STAMP)
	rm -rf build/regen build/regen-module && $(PYTHON) -m codegen $(MODEL) $(PARAMS) --out build/regen \
		--module-source build/regen-module --module _kernels
	diff -r generated build/regen
	for f in _kernels.pyx _kernels.pyi _kernels_parts.json; do diff krang_kernels/$$f build/regen-module/$$f || exit 1; done
	@echo "generated/ and krang_kernels' module source are up to date"

bench: build
	$(PYTHON) -m pip install -q -e ".[bench]" --no-build-isolation
	$(PYTHON) -m benchmarks $(BENCH_ARGS)
	$(PYTHON) -m benchmarks.batch_layout
	$(PYTHON) -m benchmarks.docs_tables bench layout

# Real URDFs (example-robot-data) through the CLI, against Pinocchio C++:
# benchmarks/results/robots.md. BENCH_ARGS e.g. --robots ur5 talos --rounds 5. Then the contact
# dynamics of Solo12 and Talos (benchmarks/results/robots_contacts.md); CONTACTS_ARGS e.g.
# --robots solo12_fb --rounds 5.
bench-robots: $(STAMP)
	$(PYTHON) -m benchmarks.urdf_robots $(BENCH_ARGS)
	$(PYTHON) -m benchmarks.docs_tables robots
	$(PYTHON) -m benchmarks.contacts $(CONTACTS_ARGS)
	$(PYTHON) -m benchmarks.docs_tables contacts

# Crocoddyl's FDDP on the contact kernels against its native action models (examples/crocoddyl_quadruped.py's
# problem), in .venv-crocoddyl: time per iteration and per node, median and spread over rounds
# (benchmarks/results/crocoddyl_quadruped.md); CROCODDYL_ARGS e.g. --rounds 3 --short.
bench-crocoddyl: build $(CROC_STAMP)
	$(CROC_VENV)/bin/python -m benchmarks.crocoddyl_quadruped $(CROCODDYL_ARGS)
	$(PYTHON) -m benchmarks.docs_tables crocoddyl

clean:
	rm -rf build dist benchmarks/build krang_kernels/_kernels.c krang_kernels/*.so

# The virtual environment too.
distclean: clean
	rm -rf $(VENV)
