decoy: a reserved model's recipe. This is not Python: opening it fails the import.
