decoy: the reserved model's base recipe. This is not Python.
