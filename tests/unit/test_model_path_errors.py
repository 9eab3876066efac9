"""Issue 41: a model path that is a file (a weights file, a zip) is reported as a file, with the fix."""
from __future__ import annotations

import pytest

from fincprg.models.load import ModelLoadError, load_error, load_sentence_transformer


def test_a_file_is_not_called_a_folder(tmp_path):
    f = tmp_path / "model.safetensors"
    f.write_bytes(b"not a model")
    with pytest.raises(ModelLoadError) as e:
        load_sentence_transformer(str(f), where="topics.embedder.model")
    msg = str(e.value)
    assert "is a file, not a model folder" in msg and "is a folder" not in msg
    assert "topics.embedder.model" in msg and str(tmp_path) in msg  # names the key and the folder to pass


def test_a_folder_without_a_model_is_still_called_a_folder(tmp_path):
    msg = str(load_error(str(tmp_path), "--model", OSError("no config.json")))
    assert "is a folder but not a loadable model" in msg
