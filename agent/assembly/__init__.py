"""Answer assembly: select readings, check the model's sentences, compose the answer."""
