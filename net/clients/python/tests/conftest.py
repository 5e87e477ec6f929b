import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from servers import Server  # noqa: E402


@pytest.fixture(scope="session")
def server():
    """One relgraphd shared by the tests that only add users of their own id range."""
    s = Server()
    yield s
    s.close()


@pytest.fixture
def fresh_server():
    """A relgraphd of the test's own (restart, stream resume, read_only)."""
    s = Server()
    yield s
    s.close()


@pytest.fixture(scope="session")
def protocol_doc():
    path = os.environ.get("RELGRAPH_PROTOCOL_DOC") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "docs", "protocol.md")
    with open(path, encoding="utf-8") as f:
        return f.read()
