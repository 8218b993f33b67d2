"""The test suite (a package: helpers are imported as tests.pin_reference,
tests.reference_fk; pytest puts the repository root on the path, see
pyproject.toml [tool.pytest.ini_options] pythonpath)."""
