from __future__ import annotations

from pathlib import Path

import pytest

from schedopt.testing.plugin import Oracle


@pytest.fixture
def schedopt_oracle(request: pytest.FixtureRequest, tmp_path: Path) -> Oracle:
    """The plugin's fixture, saving failing instances under the test's tmp_path."""
    return Oracle(tmp_path, request.node.name)
