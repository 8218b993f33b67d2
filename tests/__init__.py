"""The test suite (a package: tests import each other's cases as tests.test_x; the
shared references are the top-level package reference/; pytest puts the repository
root on the path, see pyproject.toml [tool.pytest.ini_options] pythonpath)."""
