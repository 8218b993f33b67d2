# krang-kernels. `make` sets up, generates, builds and runs the demo;
# `make test` runs the test suite. See README.md.
PYTHON ?= python3
MODEL  := models/krang.toml
PARAMS := models/krang_params.toml
STAMP  := build/.installed

.PHONY: all setup generate build demo test check-generated bench clean

all: generate demo

# Build tools first (the extension is built without isolation, against them),
# then the package in editable mode with the generator and test dependencies.
$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m pip install -q "cython>=3.0" "numpy>=1.25" "setuptools>=64" wheel
	$(PYTHON) -m pip install -q --no-build-isolation -e ".[test]"
	@mkdir -p build && touch $(STAMP)

setup: $(STAMP)

# Derivation -> CSE -> C sources from templates, then rebuild the extension.
generate: $(STAMP)
	$(PYTHON) -m codegen $(MODEL) $(PARAMS) --out generated
	$(PYTHON) -m codegen.pybuild $(MODEL) $(PARAMS) --out krang_kernels --module _kernels
	$(MAKE) build

EXT := build/.extension
$(EXT): $(STAMP) setup.py krang_kernels/_kernels.pyx $(wildcard generated/*.c generated/*.h)
	$(PYTHON) setup.py -q build_ext --inplace --force
	@touch $(EXT)

build: $(EXT)

demo: build
	$(PYTHON) examples/demo.py

test: build
	$(PYTHON) -m pytest -q

# generated/ must be exactly what the generator writes.
check-generated: $(STAMP)
	rm -rf build/regen && $(PYTHON) -m codegen $(MODEL) $(PARAMS) --out build/regen
	diff -r generated build/regen && echo "generated/ is up to date"

bench: build
	$(PYTHON) -m pip install -q -e ".[bench]" --no-build-isolation
	$(PYTHON) -m benchmarks $(BENCH_ARGS)
	$(PYTHON) -m benchmarks.readme_table

clean:
	rm -rf build benchmarks/build krang_kernels/_kernels.c krang_kernels/*.so
