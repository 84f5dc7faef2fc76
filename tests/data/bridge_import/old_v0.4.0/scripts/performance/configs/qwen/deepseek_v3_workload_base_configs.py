this decoy of a reserved model is not Python: ((( opening it fails the run
