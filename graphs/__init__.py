"""One module per method; each exports `builder` (uncompiled) and `graph` (compiled, no checkpointer)."""
