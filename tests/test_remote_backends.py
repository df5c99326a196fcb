"""The non-default routes: a Chroma server, OpenAI-compatible chat and embeddings."""

import json

from agent.app.cli import main
from bench.fake_openai import FakeOpenAI
from tests.test_vanilla import SYNTHESIS


def test_ingest_and_search_through_a_chroma_server(tmp_path, capsys, chroma_server):
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text('{"id": "unit", "title": "Horsepower", "text": "One horsepower is about 745.7 watts."}\n'
                      '{"id": "firm", "title": "Hewlett-Packard", "text": "Hewlett-Packard was founded in 1939."}\n')
    index = str(tmp_path / "index")
    assert main(["ingest", str(corpus), "--index", index, "--chroma-url", chroma_server, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["search", "watts", "--index", index, "--chroma-url", chroma_server, "--mode", "dense", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["id"] == "unit"
    assert not (tmp_path / "index" / "chroma").exists()  # vectors live on the server


def test_ask_through_an_openai_compatible_server(demo_index, capsys, monkeypatch):
    with FakeOpenAI(reply=SYNTHESIS) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-never-printed")
        assert main(["ask", "What is HP?", "--index", demo_index, "--model", "openai:fake",
                     "--method", "vanilla", "--json"]) == 0  # vanilla numbers the passages as SYNTHESIS cites them
        result = json.loads(capsys.readouterr().out)
        assert fake.requests[0]["model"] == "fake"
        assert fake.requests[0]["stream"] is True  # the answer streams
    assert result["answer"].startswith("HP can mean")
    assert result["usage"]["prompt_tokens"] == 10  # taken from the server's usage report


def test_openai_compatible_embeddings(tmp_path, monkeypatch):
    from agent.retrieval.embeddings import OpenAIEmbedder

    with FakeOpenAI() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        embedder = OpenAIEmbedder("fake-embed")
        vectors = embedder.embed(["alpha", "beta", "alpha"])
    assert vectors.shape == (3, embedder.dimension)
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-5
    assert (vectors[0] == vectors[2]).all() and not (vectors[0] == vectors[1]).all()
