"""config.yaml documents every setting at its default; bad values are refused with the key and the range."""
import dataclasses

import pytest
import yaml

from autorouter.config import ConfigError, RouterConfig, load_config
from conftest import ROOT


def test_config_yaml_lists_every_field_at_its_default():
    data = yaml.safe_load((ROOT / "config.yaml").read_text())
    fields = {f.name: f.default for f in dataclasses.fields(RouterConfig)}
    assert data == fields
    assert load_config(ROOT / "config.yaml") == RouterConfig()


@pytest.mark.parametrize("text, message", [
    ("batch_size: 0", "batch_size=0 is out of range (allowed: 1 .. 4096)"),
    ("backend: tpu", "backend='tpu' is out of range (allowed: auto, cpu or gpu)"),
    ("via_cost: fast", "via_cost='fast' is not a float"),
    ("colour: blue", "unknown config key 'colour'"),
    ("- a list", "must be a mapping"),
    ("pitch: [", "not valid YAML"),
    ("max_iterations: true", "max_iterations=True is not a int"),
    ("join_fills: 1", "join_fills=1 is not a yes/no"),
])
def test_bad_values(tmp_path, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert message in str(err.value)


def test_flags_override_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("via_cost: 3\nbackend: cpu\n")
    config = load_config(path, backend="auto", time_limit=None)
    assert config.via_cost == 3 and config.backend == "auto"
