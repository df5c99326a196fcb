"""The production mode's API keys and start-up checks, without starting a server."""

import importlib
from types import SimpleNamespace

import pytest

from agent.errors import InputError


@pytest.fixture
def server_auth(monkeypatch):
    monkeypatch.setenv("DISAMBIG_API_KEYS", "alice:alice-key-0123456789")
    return importlib.import_module("agent.app.server_auth")


def test_keys_parse_from_env_and_file_and_bad_entries_are_named_without_the_key(server_auth, tmp_path):
    keys_file = tmp_path / "keys"
    keys_file.write_text("# team\nbob:bob-key-0123456789abc\n\ncarol:carol-key-0123456789  # ops\n")
    keys = server_auth.load_keys({"DISAMBIG_API_KEYS": "alice:alice-key-0123456789",
                                  "DISAMBIG_API_KEYS_FILE": str(keys_file)})
    assert sorted(keys.values()) == ["alice", "bob", "carol"]
    assert server_auth.user_for("carol-key-0123456789", keys) == "carol"
    assert server_auth.user_for("carol-key-012345678", keys) is None and server_auth.user_for(None, keys) is None
    with pytest.raises(server_auth.KeyConfigError, match="no API keys configured"):
        server_auth.load_keys({})
    with pytest.raises(server_auth.KeyConfigError, match="entry 1 is not user:KEY"):
        server_auth.parse_keys("just-a-key-0123456789", "X")
    with pytest.raises(server_auth.KeyConfigError, match="shorter than 16") as error:
        server_auth.parse_keys("dave:tiny9", "X")
    assert "tiny9" not in str(error.value)


def test_the_key_is_read_from_bearer_or_x_api_key_headers(server_auth):
    assert server_auth.presented_key({"Authorization": "Bearer abc"}) == "abc"
    assert server_auth.presented_key({b"authorization": b"bearer  abc "}) == "abc"
    assert server_auth.presented_key({"x-api-key": "xyz"}) == "xyz"
    assert server_auth.presented_key({"Authorization": "Basic abc"}) is None
    assert server_auth.presented_key({}) is None


def test_production_mode_needs_a_database_url_and_keys(monkeypatch, tmp_path):
    from agent.app.deploy import serve_production

    args = SimpleNamespace(database_url=None, host="127.0.0.1", port=8000, print_config=False)
    monkeypatch.delenv("DISAMBIG_DATABASE_URL", raising=False)
    with pytest.raises(InputError, match="needs --database-url or DISAMBIG_DATABASE_URL"):
        serve_production(args, tmp_path)
    args.database_url = "postgresql://u:p@127.0.0.1:1/db"
    monkeypatch.delenv("DISAMBIG_API_KEYS", raising=False)
    monkeypatch.delenv("DISAMBIG_API_KEYS_FILE", raising=False)
    with pytest.raises(InputError, match="needs API keys"):
        serve_production(args, tmp_path)
    assert not (tmp_path / "aegra.json").exists()


def test_print_config_names_every_graph_the_auth_handler_and_the_guard(capsys, tmp_path):
    from agent.app.cli import main
    from graphs.registry import METHODS

    assert main(["serve", "--backend", "postgres", "--database-url", "postgresql://u@h/d", "--print-config",
                 "--state-dir", str(tmp_path)]) == 0
    out = capsys.readouterr()
    config = __import__("json").loads(out.out)
    assert set(config["graphs"]) == set(METHODS) | {"chat"}
    assert config["auth"] == {"path": "agent.app.server_auth:auth"}
    assert config["http"] == {"app": "agent.app.server_guard:app"}
    assert "aegra_api.main:app" in out.err and "--port 8000" not in out.err
