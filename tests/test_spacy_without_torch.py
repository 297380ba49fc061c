"""Which spaCy pipelines the extraction workers load without PyTorch: read from the pipeline's
``meta.json`` and ``config.cfg`` (a folder or an installed package); anything unknown keeps PyTorch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopgraph.core.settings import ExtractionSettings
from hopgraph.ingest.extraction_worker import torch_free

#: the config of a CNN pipeline (spaCy's own layers, none of them PyTorch)
CNN = '[nlp]\nlang = "en"\npipeline = ["tok2vec","ner"]\n[components.tok2vec.model]\n@architectures = ' \
      '"spacy.Tok2Vec.v2"\n'


def _pipeline(root: Path, name: str = "pipeline", config: str | None = CNN, **meta: Any) -> str:
    folder = root / name
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps({"name": "custom", "lang": "en", **meta}))
    if config is not None:
        (folder / "config.cfg").write_text(config)
    return str(folder)


def test_the_shipped_model_needs_no_torch() -> None:
    assert torch_free(ExtractionSettings().spacy_model)


@pytest.mark.parametrize(("meta", "free"), [
    ({"requirements": ["spacy>=3.7.5,<3.9.0"], "components": ["tok2vec", "parser", "ner"]}, True),
    ({"requirements": ["spacy_lookups_data>=1.0"], "pipeline": ["ner"]}, True),
    ({"requirements": [], "components": []}, True),
    ({"components": ["ner"]}, True),  # a `spacy train` folder: no requirements; its config is read
    ({"requirements": ["spacy>=3.7", "spacy-transformers>=1.3"], "components": ["transformer", "ner"]}, False),
    ({"requirements": ["spacy[transformers]>=3.7"], "components": ["ner"]}, False),  # extras
    ({"requirements": ["spacy-curated-transformers"], "components": ["ner"]}, False),
    ({"requirements": ["spacy"], "components": ["curated_transformer", "ner"]}, False),
    ({"requirements": ["spacy"], "components": ["llm"]}, False),
    ({"requirements": ["spacy"], "components": ["spacy_llm_ner"]}, False),
    ({"requirements": ["spacy"], "components": ["smallmodel_ner"]}, True),  # "llm" only inside a word
    ({"requirements": ["spacy", "my-torch-component"], "components": ["ner"]}, False),
    ({"requirements": "spacy", "components": 3}, False),  # not a meta spaCy writes: keep torch
])
def test_a_pipeline_runs_without_torch_only_when_its_meta_says_so(tmp_path: Path, meta: dict[str, Any],
                                                                  free: bool) -> None:
    assert torch_free(_pipeline(tmp_path, **meta)) is free


@pytest.mark.parametrize("architecture", ["spacy.TorchBiLSTMEncoder.v1", "spacy-transformers.TransformerModel.v3",
                                          "spacy-curated-transformers.XlmrTransformer.v1"])
def test_a_config_that_runs_torch_keeps_it_whatever_the_meta_says(tmp_path: Path, architecture: str) -> None:
    config = f'{CNN}[components.encoder.model]\n@architectures = "{architecture}"\n'
    assert not torch_free(_pipeline(tmp_path, config=config, requirements=["spacy>=3.7"], components=["encoder"]))


def test_an_installed_package_is_read_before_a_folder_of_the_same_name(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = ExtractionSettings().spacy_model
    _pipeline(tmp_path, shipped, requirements=["spacy", "spacy-transformers"])  # spacy.load reads the package
    monkeypatch.chdir(tmp_path)
    assert Path(shipped).is_dir() and torch_free(shipped)


def test_a_folder_named_like_a_module_path_is_read_as_a_folder(tmp_path: Path) -> None:
    assert torch_free(_pipeline(tmp_path, "en_pipeline.v2", requirements=["spacy>=3.7"], components=["ner"]))


def test_an_unknown_or_unreadable_pipeline_keeps_torch(tmp_path: Path) -> None:
    assert not torch_free("no_such_spacy_model_xyz")
    assert not torch_free(str(tmp_path))  # a folder without meta.json
    (tmp_path / "meta.json").write_text("{not json")
    assert not torch_free(str(tmp_path))
    assert not torch_free(_pipeline(tmp_path, config=None, requirements=["spacy"]))  # no config.cfg
    assert not torch_free("json")  # a package that is no spaCy pipeline
