"""disambig: answer ambiguous questions over a document corpus with LangGraph."""

__version__ = "0.1.0"
