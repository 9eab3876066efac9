"""engine: ray with a cluster address nobody answers fails at once, with the fix."""
from __future__ import annotations

import socket

import pytest

from fincprg.errors import ConfigError
from fincprg.pipeline.ray_engine import check_address


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address", [f"127.0.0.1:{_free_port()}", f"ray://127.0.0.1:{_free_port()}"])
def test_unreachable_cluster_is_a_config_error(address):
    with pytest.raises(ConfigError, match="nothing answers there.*ray start --head"):
        check_address(address)


def test_malformed_address_is_a_config_error():
    with pytest.raises(ConfigError, match="expected 'auto', 'HOST:PORT'"):
        check_address("my-cluster")
